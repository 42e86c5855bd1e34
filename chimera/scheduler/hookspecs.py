"""The scheduler's pluggy hook: trigger kinds, registered like the Spec's requirement kinds.

Same project name and entry-point group as :mod:`chimera.spec.hookspecs` (``chimera``), so
one plugin distribution can provide requirement kinds and trigger kinds::

    from chimera.spec.hookspecs import hookimpl
    from chimera.scheduler.model import Trigger

    class OnRelease(Trigger):
        kind_name = "release"
        tag: str

        def matches(self, event): ...

    @hookimpl
    def chimera_schedule_triggers() -> list[type[Trigger]]:
        return [OnRelease]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chimera.spec.hookspecs import PROJECT_NAME, hookimpl, hookspec

if TYPE_CHECKING:
    from chimera.scheduler.model import Trigger

__all__ = ["PROJECT_NAME", "chimera_schedule_triggers", "hookimpl"]


@hookspec
def chimera_schedule_triggers() -> list[type[Trigger]]:  # type: ignore[empty-body]
    """Return the trigger kinds this plugin provides.

    Each item subclasses :class:`chimera.scheduler.model.Trigger` with a ``kind_name`` (the
    YAML key; not one of the common schedule fields). Two kinds with one name make the
    registry raise :class:`chimera.errors.PluginError`.
    """
