"""The three built-in crew kinds; they register through the same ``chimera_crew_kinds`` hook a
third-party plugin uses."""

from __future__ import annotations

from chimera.crews.kinds.parallel import Parallel, Supervisor
from chimera.crews.kinds.sequential import Sequential

__all__ = ["Parallel", "Sequential", "Supervisor"]
