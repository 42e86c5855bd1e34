"""The Action's side of every job: its context and result, and what two jobs share."""
