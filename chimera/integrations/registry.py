"""The registry of connector kinds, built from pluggy plugins (as the spec's kinds are).

Every kind — the built-ins ``mcp`` and ``openapi`` and any third-party one — arrives through
the ``chimera_connector_kinds`` hook (:mod:`chimera.integrations.hookspecs`); the built-ins
are registered as an ordinary plugin object::

    registry = ConnectorKindRegistry.create(plugins=[MyKinds()], entry_points=False)
    registry.get("static")  # -> the plugin's ConnectorKind subclass
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import pluggy

from chimera.errors import PluginError
from chimera.integrations import hookspecs
from chimera.integrations.hookspecs import hookimpl
from chimera.integrations.model import COMMON_FIELDS, ConnectorKind

__all__ = ["BuiltinConnectorKinds", "ConnectorKindRegistry", "get_connector_registry"]

_KIND_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
BUILTIN_PLUGIN_NAME = "chimera.builtin_connector_kinds"


class BuiltinConnectorKinds:
    """The plugin that provides the ``mcp`` and ``openapi`` kinds (as any plugin would)."""

    @hookimpl
    def chimera_connector_kinds(self) -> list[type[ConnectorKind]]:
        from chimera.integrations.kinds import McpConnector, OpenApiConnector

        return [McpConnector, OpenApiConnector]


class ConnectorKindRegistry:
    """Connector kinds by name (the YAML key that selects them), in registration order."""

    def __init__(self, kinds: Mapping[str, type[ConnectorKind]]) -> None:
        self._kinds = dict(kinds)
        self.kinds: Mapping[str, type[ConnectorKind]] = MappingProxyType(self._kinds)

    @classmethod
    def create(
        cls, plugins: Iterable[object] = (), *, entry_points: bool = True, builtins: bool = True
    ) -> ConnectorKindRegistry:
        """Build a registry from the built-ins, entry-point plugins and ``plugins``.

        Raises:
            PluginError: a plugin failed to load or validate, returned something that is not
                a list of ConnectorKind subclasses, or two kinds share one name (both named).
        """
        pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        try:
            if builtins:
                pm.register(BuiltinConnectorKinds(), name=BUILTIN_PLUGIN_NAME)
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
            raise PluginError(f"invalid connector plugin {exc.plugin!r}: {exc}") from exc
        return cls(_collect(pm))

    def get(self, name: str) -> type[ConnectorKind] | None:
        return self._kinds.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._kinds)


def _collect(pm: pluggy.PluginManager) -> dict[str, type[ConnectorKind]]:
    kinds: dict[str, type[ConnectorKind]] = {}
    owners: dict[str, str] = {}
    for impl in pm.hook.chimera_connector_kinds.get_hookimpls():
        plugin = impl.plugin_name
        try:
            provided = impl.function()
        except Exception as exc:
            raise PluginError(
                f"plugin {plugin!r} failed in chimera_connector_kinds: {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(provided, list | tuple):
            raise PluginError(
                f"plugin {plugin!r}: chimera_connector_kinds must return a list of "
                f"ConnectorKind subclasses, got {type(provided).__name__}"
            )
        for kind in provided:
            if not (isinstance(kind, type) and issubclass(kind, ConnectorKind)):
                raise PluginError(f"plugin {plugin!r}: {kind!r} is not a ConnectorKind subclass")
            name = kind.kind_name
            if not isinstance(name, str) or not _KIND_NAME.match(name):
                raise PluginError(
                    f"plugin {plugin!r}: {kind.__qualname__}.kind_name must be an "
                    f"identifier-like string, got {name!r}"
                )
            if name in COMMON_FIELDS:
                raise PluginError(
                    f"plugin {plugin!r}: {kind.__qualname__} takes the name {name!r}, a common "
                    f"declaration field ({', '.join(COMMON_FIELDS)})"
                )
            if name in kinds and kinds[name] is not kind:
                raise PluginError(
                    f"connector kind {name!r} is registered twice: "
                    f"{kinds[name].__module__}.{kinds[name].__qualname__} by plugin "
                    f"{owners[name]!r} and {kind.__module__}.{kind.__qualname__} by plugin "
                    f"{plugin!r}"
                )
            kinds[name] = kind
            owners[name] = plugin
    return kinds


@functools.cache
def get_connector_registry() -> ConnectorKindRegistry:
    """Built-in kinds plus every installed ``chimera_connectors`` entry point (built once)."""
    return ConnectorKindRegistry.create(entry_points=True)
