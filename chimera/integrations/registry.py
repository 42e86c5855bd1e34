"""The registry of connector kinds, built from pluggy plugins (as the spec's kinds are).

Every kind — the built-ins ``mcp`` and ``openapi`` and any third-party one — arrives through
the ``chimera_connector_kinds`` hook (:mod:`chimera.integrations.hookspecs`); the built-ins
are registered as an ordinary plugin object::

    registry = ConnectorKindRegistry.create(plugins=[MyKinds()], entry_points=False)
    registry.get("static")  # -> the plugin's ConnectorKind subclass
"""

from __future__ import annotations

import functools

from chimera import plugins as _plugins
from chimera.integrations import hookspecs
from chimera.integrations.hookspecs import hookimpl
from chimera.integrations.model import COMMON_FIELDS, ConnectorKind

__all__ = ["BuiltinConnectorKinds", "ConnectorKindRegistry", "get_connector_registry"]

BUILTIN_PLUGIN_NAME = "chimera.builtin_connector_kinds"


_WORDING = _plugins.Wording(
    "connector kind",
    bad_name="{cls}.kind_name must be an identifier-like string, got {name!r}",
    reserved="{cls} takes the name {name!r}, a common declaration field ({fields})",
    not_base="{kind!r} is not a ConnectorKind subclass",
    names_classes=True,
)


class BuiltinConnectorKinds:
    """The plugin that provides the ``mcp`` and ``openapi`` kinds (as any plugin would)."""

    @hookimpl
    def chimera_connector_kinds(self) -> list[type[ConnectorKind]]:
        from chimera.integrations.kinds import McpConnector, OpenApiConnector

        return [McpConnector, OpenApiConnector]


class ConnectorKindRegistry(_plugins.KindRegistry[ConnectorKind]):
    """Connector kinds by name (the YAML key that selects them), in registration order."""

    hookspecs, builtin, builtin_name = (hookspecs,), BuiltinConnectorKinds, BUILTIN_PLUGIN_NAME
    hook, base, reserved, label = (
        "chimera_connector_kinds",
        ConnectorKind,
        COMMON_FIELDS,
        "connector",
    )
    wording = _WORDING


@functools.cache
def get_connector_registry() -> ConnectorKindRegistry:
    """Built-in kinds plus every installed ``chimera_connectors`` entry point (built once)."""
    return ConnectorKindRegistry.create(entry_points=True)
