"""The registry of trigger kinds, built from pluggy plugins (the Spec's pattern, see
:mod:`chimera.spec.registry`).

The built-ins (``cron``, ``event``) register through the ``chimera_schedule_triggers`` hook
as an ordinary plugin object; third-party kinds come from the entry-point group ``chimera``
or are passed explicitly::

    registry = TriggerRegistry.create(plugins=[MyTriggers()], entry_points=False)
    registry.get("release")  # -> the plugin's Trigger subclass
"""

from __future__ import annotations

import functools

from chimera import plugins as _plugins
from chimera.scheduler import hookspecs
from chimera.scheduler.hookspecs import hookimpl
from chimera.scheduler.model import COMMON_FIELDS, Trigger
from chimera.spec import hookspecs as spec_hookspecs

__all__ = ["BuiltinTriggers", "TriggerRegistry", "get_registry"]

BUILTIN_PLUGIN_NAME = "chimera.builtin_triggers"


_WORDING = _plugins.Wording(
    "trigger kind",
    bad_name="{cls}.kind_name must be an identifier-like string (the YAML key), got {name!r}",
    reserved="{cls} takes the name {name!r}, which is a common schedule field",
)


class BuiltinTriggers:
    """The plugin that provides the two built-in trigger kinds (as any plugin would)."""

    @hookimpl
    def chimera_schedule_triggers(self) -> list[type[Trigger]]:
        from chimera.scheduler.kinds import CronTrigger, EventTrigger

        return [CronTrigger, EventTrigger]


class TriggerRegistry(_plugins.KindRegistry[Trigger]):
    """Trigger kinds by name (the YAML key that selects them), in registration order."""

    # The entry-point group is shared with requirement kinds: know both hooks, so a
    # plugin that only provides requirement kinds still validates here.
    hookspecs, builtin, builtin_name = (
        (spec_hookspecs, hookspecs),
        BuiltinTriggers,
        BUILTIN_PLUGIN_NAME,
    )
    hook, base, reserved, label = "chimera_schedule_triggers", Trigger, COMMON_FIELDS, "chimera"
    wording = _WORDING


@functools.cache
def get_registry() -> TriggerRegistry:
    """The default registry: built-ins plus every installed ``chimera`` entry point (cached).

    Raises:
        PluginError: see :meth:`TriggerRegistry.create`.
    """
    return TriggerRegistry.create(entry_points=True)
