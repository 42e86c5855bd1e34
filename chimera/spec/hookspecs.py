"""Chimera's pluggy hook specifications (project name ``"chimera"``).

A plugin is any object or module with functions marked by :data:`hookimpl`. Chimera finds
third-party plugins through the entry-point group ``chimera``::

    # pyproject.toml of a plugin distribution
    [project.entry-points.chimera]
    file_exists = "my_pkg.chimera_kinds"

    # my_pkg/chimera_kinds.py
    from chimera.spec.hookspecs import hookimpl
    from chimera.spec.model import Check

    class FileExists(Check):
        kind_name = "file_exists"
        path: str
        ...

    @hookimpl
    def chimera_requirement_kinds() -> list[type[Check]]:
        return [FileExists]

The four built-in kinds register through this same hook (see :mod:`chimera.spec.registry`).
The design follows pytest's own use of pluggy (``pytest11`` entry points, ``hookimpl``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from chimera.spec.model import Check

PROJECT_NAME = "chimera"
"""The pluggy project name; also the entry-point group plugins are loaded from."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks a hook specification (only this module defines them)."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's hook implementation: ``@hookimpl def chimera_requirement_kinds(): ...``."""


@hookspec
def chimera_requirement_kinds() -> list[type[Check]]:  # type: ignore[empty-body]
    """Return the requirement kinds this plugin provides.

    Each item is a subclass of :class:`chimera.spec.model.Check` with a ``kind_name`` (the
    YAML key selecting it, e.g. ``"file_exists"``; it must not be one of the common fields
    ``id``, ``title``, ``risk``, ``depends_on``, ``owner``). Two kinds with one name, from any
    plugins, make the registry raise :class:`chimera.errors.PluginError`.
    """
