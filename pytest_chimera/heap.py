"""The plugin's dealings with Python's cyclic garbage collector.

Why this exists: measured on 2,000 spec items, half of the plugin's cost over plain pytest
(0.18 of 0.34 CPU seconds) was the collector, not the Spec. Importing the Spec machinery
and loading a Spec allocate tens of thousands of long-lived objects in bursts; each burst
triggers collections that find nothing to free, and every full collection afterwards (two
run at pytest's exit) walks all of them again. So the plugin:

- pauses the collector during its own allocation bursts (:func:`paused`): the objects are
  kept either way, and the collector is back on — with everything it would have examined
  still tracked — as soon as the burst ends;
- moves the objects alive after each burst and at the end of collection to the collector's
  permanent generation (:class:`Freezer`) before any collection examined them, so the
  collections during the run skip the session's long-lived state (pytest's nodes, the
  Spec, modules) and look only at what the tests allocate;
- undoes that at ``pytest_unconfigure``, before pytest's final collections,
  so a cycle that became garbage during the run is still collected (and an exception in its
  finaliser still reported) by the same final collections as without the plugin.

The freeze is kept for the run only when the session runs nothing but Spec items: a frozen
object is out of reach of ``gc.collect()``, which a user's own test may rely on (a weak
reference expected to die), so a session that also collected Python tests is thawed when
collection ends and runs with the collector as without the plugin. In a Spec-only session the
one visible difference: a reference cycle made only of objects that existed before the first
item is freed at the end of the session instead of by the next ``gc.collect()``.
``--chimera-no-gc-freeze`` turns the freeze off altogether.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["Freezer", "paused"]


@contextmanager
def paused() -> Iterator[None]:
    """Disable the cyclic collector for the block; restore its previous state after.

    Nothing is lost: objects allocated meanwhile stay tracked and the next collection after
    the block examines them. Nested use is fine (only the outermost block re-enables).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class Freezer:
    """Freezes the collector's objects for one session, at most once undone.

    Args:
        enabled: ``False`` makes every call a no-op (``--chimera-no-gc-freeze``).

    ``gc.freeze`` is process-wide: when another party's objects are already frozen at the
    first call, thawing would undo their freeze too, so the plugin leaves the collector alone.
    """

    enabled: bool = True
    froze: bool = False

    def freeze(self) -> None:
        """Move every tracked object to the permanent generation (repeatable: each call
        takes what was allocated since)."""
        if not self.enabled:
            return
        if not self.froze and gc.get_freeze_count():
            self.enabled = False
            return
        gc.freeze()
        self.froze = True

    def thaw(self) -> None:
        """Return the frozen objects to the collector's oldest generation (once)."""
        if self.froze:
            self.froze = False
            self.enabled = False
            gc.unfreeze()
