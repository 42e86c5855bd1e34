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
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import pluggy

from chimera.crews import hookspecs
from chimera.crews.hookspecs import hookimpl
from chimera.crews.model import COMMON_FIELDS, CrewKind
from chimera.errors import PluginError

__all__ = ["BuiltinCrewKinds", "CrewKindRegistry", "get_crew_registry"]

_KIND_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
BUILTIN_PLUGIN_NAME = "chimera.builtin_crew_kinds"


class BuiltinCrewKinds:
    """The plugin that provides the three built-in kinds (as any plugin would)."""

    @hookimpl
    def chimera_crew_kinds(self) -> list[type[CrewKind]]:
        from chimera.crews.kinds import Parallel, Sequential, Supervisor

        return [Sequential, Parallel, Supervisor]


class CrewKindRegistry:
    """Crew kinds by name (the YAML key that selects them), in registration order."""

    def __init__(
        self, kinds: Mapping[str, type[CrewKind]], plugin_manager: pluggy.PluginManager | None
    ) -> None:
        self._kinds: dict[str, type[CrewKind]] = dict(kinds)
        self.kinds: Mapping[str, type[CrewKind]] = MappingProxyType(self._kinds)
        self.plugin_manager = plugin_manager

    @classmethod
    def create(
        cls, plugins: Iterable[object] = (), *, entry_points: bool = True, builtins: bool = True
    ) -> CrewKindRegistry:
        """Build a registry from the built-ins, entry-point plugins and ``plugins``.

        Raises:
            PluginError: a plugin failed to load or validate, returned something that is not
                a list of CrewKind subclasses, or two kinds share one name.
        """
        pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        try:
            if builtins:
                pm.register(BuiltinCrewKinds(), name=BUILTIN_PLUGIN_NAME)
            if entry_points:
                try:
                    pm.load_setuptools_entrypoints(hookspecs.ENTRY_POINT_GROUP)
                except Exception as exc:
                    raise PluginError(
                        f"cannot load a plugin from the {hookspecs.ENTRY_POINT_GROUP!r} "
                        f"entry-point group: {type(exc).__name__}: {exc}"
                    ) from exc
            for plugin in plugins:
                if not pm.is_registered(plugin):
                    pm.register(plugin)
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"invalid crew plugin {exc.plugin!r}: {exc}") from exc
        return cls(_collect(pm), pm)

    def get(self, name: str) -> type[CrewKind] | None:
        return self._kinds.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._kinds)

    def __repr__(self) -> str:
        return f"CrewKindRegistry({', '.join(self._kinds)})"


def _collect(pm: pluggy.PluginManager) -> dict[str, type[CrewKind]]:
    kinds: dict[str, type[CrewKind]] = {}
    owners: dict[str, str] = {}
    for impl in pm.hook.chimera_crew_kinds.get_hookimpls():
        plugin_name = impl.plugin_name
        try:
            provided = impl.function()
        except Exception as exc:
            raise PluginError(
                f"plugin {plugin_name!r} failed in chimera_crew_kinds: {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(provided, list | tuple):
            raise PluginError(
                f"plugin {plugin_name!r}: chimera_crew_kinds must return a list of CrewKind "
                f"subclasses, got {type(provided).__name__}"
            )
        for kind in provided:
            if not (isinstance(kind, type) and issubclass(kind, CrewKind)):
                raise PluginError(
                    f"plugin {plugin_name!r}: {kind!r} is not a subclass of "
                    "chimera.crews.model.CrewKind"
                )
            name = kind.kind_name
            if not isinstance(name, str) or not _KIND_NAME.match(name) or name in COMMON_FIELDS:
                raise PluginError(
                    f"plugin {plugin_name!r}: {kind.__qualname__}.kind_name must be an "
                    f"identifier that is not a crew field ({', '.join(COMMON_FIELDS)}), "
                    f"got {name!r}"
                )
            if name in kinds and kinds[name] is not kind:
                raise PluginError(
                    f"crew kind {name!r} is registered twice: by plugin {owners[name]!r} and "
                    f"by plugin {plugin_name!r}"
                )
            kinds[name] = kind
            owners[name] = plugin_name
    return kinds


@functools.cache
def get_crew_registry() -> CrewKindRegistry:
    """The default registry: the built-ins plus every ``chimera.crews`` entry point (cached).

    Raises:
        PluginError: see :meth:`CrewKindRegistry.create`.
    """
    return CrewKindRegistry.create(entry_points=True)
