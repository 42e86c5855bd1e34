"""The pluggy hook of profile kinds: ``chimera_profile_kinds``, group ``chimera.meta``.

A profile kind is how a designed agent works (``solver``, the verify-or-revert agent, is
built in): a :class:`~chimera.meta.profile.ProfileKind` subclass whose ``kind_name`` is the
YAML key that selects it. A plugin looks like any part's (:mod:`chimera.plugins`); the
built-in kind registers through this same hook (:mod:`chimera.meta.registry`).
"""

from __future__ import annotations

from chimera.plugins import PROJECT_NAME, hookimpl, hookspec, kinds_hookspec

__all__ = ["ENTRY_POINT_GROUP", "PROJECT_NAME", "chimera_profile_kinds", "hookimpl", "hookspec"]

ENTRY_POINT_GROUP = "chimera.meta"
"""Where third-party profile kinds are found."""

chimera_profile_kinds = kinds_hookspec(
    "chimera_profile_kinds", "profile kinds (``ProfileKind`` subclasses)"
)
