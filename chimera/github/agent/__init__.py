"""The agent job's run: the child process, its profile, the progress watched while it runs."""
