"""The pluggy hook specification of profile kinds (project name ``"chimera"``).

A profile kind is how a designed agent works (``solver``, the verify-or-revert agent, is built
in). It is a :class:`~chimera.meta.profile.ProfileKind` subclass with a ``kind_name`` (the
YAML key that selects it). Third-party kinds come from the entry-point group ``chimera.meta``::

    # pyproject.toml of a plugin distribution
    [project.entry-points."chimera.meta"]
    explorer = "my_pkg.profile_kinds"

    # my_pkg/profile_kinds.py
    from chimera.meta.hookspecs import hookimpl

    @hookimpl
    def chimera_profile_kinds():
        return [Explorer]

The built-in kind registers through this same hook (see :mod:`chimera.meta.registry`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from chimera.meta.profile import ProfileKind

PROJECT_NAME = "chimera"
ENTRY_POINT_GROUP = "chimera.meta"
"""Where third-party profile kinds are found."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def chimera_profile_kinds() -> list[type[ProfileKind]]:  # type: ignore[empty-body]
    """Return the profile kinds this plugin provides (``ProfileKind`` subclasses).

    Two kinds with one ``kind_name``, from any plugins, make the registry raise
    :class:`chimera.errors.PluginError`; so does a name that is a common profile field.
    """
