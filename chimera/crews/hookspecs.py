"""The pluggy hook of crew kinds: ``chimera_crew_kinds``, entry-point group ``chimera.crews``.

A crew kind is how a crew's roles work together (``sequential``, ``parallel``,
``supervisor`` are built in): a :class:`~chimera.crews.model.CrewKind` subclass with a
``kind_name`` (the YAML key that selects it) and a ``build`` method. The group is separate
from the requirement kinds' ``chimera`` group, so a plugin of one never has to implement the
other's hook; :mod:`chimera.plugins` shows a plugin. The built-in kinds register through this
same hook (:mod:`chimera.crews.registry`).
"""

from __future__ import annotations

from chimera.plugins import PROJECT_NAME, hookimpl, hookspec, kinds_hookspec

__all__ = ["ENTRY_POINT_GROUP", "PROJECT_NAME", "chimera_crew_kinds", "hookimpl", "hookspec"]

ENTRY_POINT_GROUP = "chimera.crews"
"""Where third-party crew kinds are found."""

chimera_crew_kinds = kinds_hookspec("chimera_crew_kinds", "crew kinds (``CrewKind`` subclasses)")
