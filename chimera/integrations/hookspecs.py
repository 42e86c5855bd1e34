"""The pluggy hook of connector kinds (project and entry-point group ``chimera_connectors``).

A connector kind is a typed class (:class:`chimera.integrations.model.ConnectorKind`), selected
in a declaration by its ``kind_name`` key, exactly as a requirement kind is selected in a spec
file. The two built-ins (``mcp`` and ``openapi``) register through this hook like any third
party::

    # pyproject.toml of a plugin distribution
    [project.entry-points.chimera_connectors]
    my_kinds = "my_pkg.chimera_connectors"

    # my_pkg/chimera_connectors.py
    from chimera.integrations.hookspecs import hookimpl
    from chimera.integrations.model import ConnectorKind

    class Static(ConnectorKind):
        kind_name = "static"
        ...

    @hookimpl
    def chimera_connector_kinds() -> list[type[ConnectorKind]]:
        return [Static]

Why a group of its own rather than the spec's ``chimera`` group: pluggy validates every hook a
plugin implements against the manager's specifications, so a plugin registered in the spec's
group that also implemented this hook would fail the spec registry's check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from chimera.integrations.model import ConnectorKind

PROJECT_NAME = "chimera_connectors"
"""The pluggy project name; also the entry-point group connector plugins are loaded from."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's hook implementation: ``@hookimpl def chimera_connector_kinds(): ...``."""


@hookspec
def chimera_connector_kinds() -> list[type[ConnectorKind]]:  # type: ignore[empty-body]
    """Return the connector kinds this plugin provides.

    Each item is a subclass of :class:`chimera.integrations.model.ConnectorKind` with a
    ``kind_name`` (the YAML key selecting it). It must not be one of the common declaration
    fields (``name``, ``description``, ``tools``, ``quarantine``, ``egress``). Two kinds with
    one name make the registry raise :class:`chimera.errors.PluginError` naming both plugins.
    """
