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
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import pluggy

from chimera.errors import PluginError
from chimera.scheduler import hookspecs
from chimera.scheduler.hookspecs import hookimpl
from chimera.scheduler.model import COMMON_FIELDS, Trigger
from chimera.spec import hookspecs as spec_hookspecs

__all__ = ["BuiltinTriggers", "TriggerRegistry", "get_registry"]

_KIND_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
BUILTIN_PLUGIN_NAME = "chimera.builtin_triggers"


class BuiltinTriggers:
    """The plugin that provides the two built-in trigger kinds (as any plugin would)."""

    @hookimpl
    def chimera_schedule_triggers(self) -> list[type[Trigger]]:
        from chimera.scheduler.kinds import CronTrigger, EventTrigger

        return [CronTrigger, EventTrigger]


class TriggerRegistry:
    """Trigger kinds by name (the YAML key that selects them), in registration order."""

    def __init__(self, kinds: Mapping[str, type[Trigger]]) -> None:
        self._kinds: dict[str, type[Trigger]] = dict(kinds)
        self.kinds: Mapping[str, type[Trigger]] = MappingProxyType(self._kinds)

    @classmethod
    def create(
        cls, plugins: Iterable[object] = (), *, entry_points: bool = True, builtins: bool = True
    ) -> TriggerRegistry:
        """Build a registry from the built-ins, entry-point plugins and ``plugins``.

        Raises:
            PluginError: a plugin failed to load or validate, returned something that is not
                a list of Trigger subclasses, or two kinds share one name.
        """
        pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        # The entry-point group is shared with requirement kinds: know both hooks, so a
        # plugin that only provides requirement kinds still validates here.
        pm.add_hookspecs(spec_hookspecs)
        pm.add_hookspecs(hookspecs)
        try:
            if builtins:
                pm.register(BuiltinTriggers(), name=BUILTIN_PLUGIN_NAME)
            if entry_points:
                try:
                    pm.load_setuptools_entrypoints(hookspecs.PROJECT_NAME)
                except Exception as exc:
                    raise PluginError(
                        f"cannot load a plugin from the {hookspecs.PROJECT_NAME!r} entry-point "
                        f"group: {type(exc).__name__}: {exc}"
                    ) from exc
            for plugin in plugins:
                if not pm.is_registered(plugin):
                    pm.register(plugin)
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"invalid chimera plugin {exc.plugin!r}: {exc}") from exc
        return cls(_collect(pm))

    def get(self, name: str) -> type[Trigger] | None:
        return self._kinds.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._kinds)

    def __repr__(self) -> str:
        return f"TriggerRegistry({', '.join(self._kinds)})"


def _collect(pm: pluggy.PluginManager) -> dict[str, type[Trigger]]:
    kinds: dict[str, type[Trigger]] = {}
    owners: dict[str, str] = {}
    for impl in pm.hook.chimera_schedule_triggers.get_hookimpls():
        plugin_name = impl.plugin_name
        try:
            provided = impl.function()
        except Exception as exc:
            raise PluginError(
                f"plugin {plugin_name!r} failed in chimera_schedule_triggers: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(provided, list | tuple):
            raise PluginError(
                f"plugin {plugin_name!r}: chimera_schedule_triggers must return a list of "
                f"Trigger subclasses, got {type(provided).__name__}"
            )
        for kind in provided:
            name = _validate(kind, plugin_name)
            if name in kinds and kinds[name] is not kind:
                raise PluginError(
                    f"trigger kind {name!r} is registered twice: by plugin {owners[name]!r} "
                    f"and by plugin {plugin_name!r}"
                )
            kinds[name] = kind
            owners.setdefault(name, plugin_name)
    return kinds


def _validate(kind: object, plugin_name: str) -> str:
    if not (isinstance(kind, type) and issubclass(kind, Trigger)):
        raise PluginError(
            f"plugin {plugin_name!r}: {kind!r} is not a subclass of chimera.scheduler.model.Trigger"
        )
    name = kind.kind_name
    if not isinstance(name, str) or not _KIND_NAME.match(name):
        raise PluginError(
            f"plugin {plugin_name!r}: {kind.__qualname__}.kind_name must be an identifier-like "
            f"string (the YAML key), got {name!r}"
        )
    if name in COMMON_FIELDS:
        raise PluginError(
            f"plugin {plugin_name!r}: {kind.__qualname__} takes the name {name!r}, which is a "
            "common schedule field"
        )
    return name


@functools.cache
def get_registry() -> TriggerRegistry:
    """The default registry: built-ins plus every installed ``chimera`` entry point (cached).

    Raises:
        PluginError: see :meth:`TriggerRegistry.create`.
    """
    return TriggerRegistry.create(entry_points=True)
