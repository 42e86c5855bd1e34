"""The verify job: the patch re-judged from the base commit, held-out requirements, pauses."""
