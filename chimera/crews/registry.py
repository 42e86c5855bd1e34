"""The registry of crew kinds, built from pluggy plugins (the Spec's kind registry, for crews).

Every kind — the three built-ins (``sequential``, ``parallel``, ``supervisor``) and any
third-party one — arrives through the ``chimera_crew_kinds`` hook
(:mod:`chimera.crews.hookspecs`). Third-party plugins come from the entry-point group
``chimera.crews`` or are passed explicitly::

    registry = CrewKindRegistry.create(plugins=[MyKinds()], entry_points=False)
    registry.get("debate")  # -> the plugin's CrewKind subclass

:func:`get_crew_registry` returns the default registry, built once per process.
"""

from __future__ import annotations

import functools

from chimera import plugins as _plugins
from chimera.crews import hookspecs
from chimera.crews.hookspecs import hookimpl
from chimera.crews.model import COMMON_FIELDS, CrewKind

__all__ = ["BuiltinCrewKinds", "CrewKindRegistry", "get_crew_registry"]

BUILTIN_PLUGIN_NAME = "chimera.builtin_crew_kinds"


_WORDING = _plugins.Wording(
    "crew kind",
    "{cls}.kind_name must be an identifier that is not a crew field ({fields}), got {name!r}",
)


class BuiltinCrewKinds:
    """The plugin that provides the three built-in kinds (as any plugin would)."""

    @hookimpl
    def chimera_crew_kinds(self) -> list[type[CrewKind]]:
        from chimera.crews.kinds import Parallel, Sequential, Supervisor

        return [Sequential, Parallel, Supervisor]


class CrewKindRegistry(_plugins.KindRegistry[CrewKind]):
    """Crew kinds by name (the YAML key that selects them), in registration order."""

    hookspecs, builtin, builtin_name = (hookspecs,), BuiltinCrewKinds, BUILTIN_PLUGIN_NAME
    hook, base, reserved, label = "chimera_crew_kinds", CrewKind, COMMON_FIELDS, "crew"
    wording = _WORDING


@functools.cache
def get_crew_registry() -> CrewKindRegistry:
    """The default registry: the built-ins plus every ``chimera.crews`` entry point (cached).

    Raises:
        PluginError: see :meth:`CrewKindRegistry.create`.
    """
    return CrewKindRegistry.create(entry_points=True)
