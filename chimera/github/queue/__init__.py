"""The ChangeQueue: slots claimed by comments, the comment that holds one, the queue that heals."""
