"""The pluggy hook specification of crew kinds (project name ``"chimera"``).

A crew kind is how a crew's roles work together (``sequential``, ``parallel``,
``supervisor`` are built in). It is a :class:`~chimera.crews.model.CrewKind` subclass with a
``kind_name`` (the YAML key that selects it) and a ``build`` method. Third-party kinds come from
the entry-point group ``chimera.crews`` (separate from the requirement kinds' ``chimera``
group, so a plugin of one never has to implement the other's hook)::

    # pyproject.toml of a plugin distribution
    [project.entry-points."chimera.crews"]
    debate = "my_pkg.crew_kinds"

    # my_pkg/crew_kinds.py
    from chimera.crews.hookspecs import hookimpl

    @hookimpl
    def chimera_crew_kinds():
        return [Debate]

The built-in kinds register through this same hook (see :mod:`chimera.crews.registry`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from chimera.crews.model import CrewKind

PROJECT_NAME = "chimera"
"""The pluggy project name (the markers below match it)."""

ENTRY_POINT_GROUP = "chimera.crews"
"""Where third-party crew kinds are found."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def chimera_crew_kinds() -> list[type[CrewKind]]:  # type: ignore[empty-body]
    """Return the crew kinds this plugin provides (``CrewKind`` subclasses).

    Two kinds with one ``kind_name``, from any plugins, make the registry raise
    :class:`chimera.errors.PluginError`; so does a name that is a top-level crew field.
    """
