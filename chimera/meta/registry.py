"""The registry of profile kinds, built from pluggy plugins (as crews' and the Spec's kinds).

Every kind — the built-in ``solver`` and any third-party one — arrives through the
``chimera_profile_kinds`` hook (:mod:`chimera.meta.hookspecs`), from the entry-point group
``chimera.meta`` or passed explicitly::

    registry = ProfileKindRegistry.create(plugins=[MyKinds()], entry_points=False)

:func:`get_profile_registry` returns the default registry, built once per process.
"""

from __future__ import annotations

import functools

from chimera import plugins as _plugins
from chimera.meta import hookspecs
from chimera.meta.hookspecs import hookimpl
from chimera.meta.profile import COMMON_FIELDS, ProfileKind

__all__ = ["BuiltinProfileKinds", "ProfileKindRegistry", "get_profile_registry"]

BUILTIN_PLUGIN_NAME = "chimera.builtin_profile_kinds"

_WORDING = _plugins.Wording(
    "profile kind",
    "{cls}.kind_name must be an identifier that is not a profile field ({fields}), got {name!r}",
)


class BuiltinProfileKinds:
    """The plugin that provides the built-in kind (as any plugin would)."""

    @hookimpl
    def chimera_profile_kinds(self) -> list[type[ProfileKind]]:
        from chimera.meta.profile import Solver

        return [Solver]


class ProfileKindRegistry(_plugins.KindRegistry[ProfileKind]):
    """Profile kinds by name (the YAML key that selects them), in registration order."""

    hookspecs, builtin, builtin_name = (
        (hookspecs,),
        BuiltinProfileKinds,
        "chimera.builtin_profile_kinds",
    )
    hook, base, reserved, label = "chimera_profile_kinds", ProfileKind, COMMON_FIELDS, "profile"
    wording = _WORDING


@functools.cache
def get_profile_registry() -> ProfileKindRegistry:
    """The default registry: the built-in plus every ``chimera.meta`` entry point (cached).

    Raises:
        PluginError: see :meth:`ProfileKindRegistry.create`.
    """
    return ProfileKindRegistry.create(entry_points=True)
