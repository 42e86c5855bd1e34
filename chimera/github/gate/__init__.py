"""What an event means and who may act on it: event rules, ``@chimera`` commands, permissions."""
