"""The ecosystem around single runs: the ChangeQueue (the tempo of changes on GitHub).

:class:`~chimera.ecosystem.queue.ChangeQueue` lives in :mod:`chimera.ecosystem.queue`; import
it from there (this package imports nothing at import time, so its other modules stay cheap).
"""
