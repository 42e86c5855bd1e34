"""The registry of requirement kinds, built from pluggy plugins.

Every kind — the four built-ins (``defines``, ``contains``, ``absent``, ``command``) and any
third-party one — arrives through the ``chimera_requirement_kinds`` hook
(:mod:`chimera.spec.hookspecs`). The built-ins are registered as an ordinary plugin object;
third-party plugins come from the entry-point group ``chimera`` or are passed explicitly::

    registry = KindRegistry.create(plugins=[MyKinds()], entry_points=False)
    registry.get("file_exists")  # -> the plugin's Check subclass

:func:`get_registry` returns the default registry (built-ins plus entry points), built once
per process.
"""

from __future__ import annotations

import functools

from chimera import plugins as _plugins
from chimera.spec import hookspecs
from chimera.spec.hookspecs import hookimpl
from chimera.spec.model import Check

__all__ = [
    "COMMON_FIELDS",
    "BuiltinKinds",
    "KindRegistry",
    "get_registry",
]

COMMON_FIELDS: tuple[str, ...] = ("id", "title", "risk", "depends_on", "owner")
"""Keys every requirement may carry besides its one check; no kind may take these names."""

BUILTIN_PLUGIN_NAME = "chimera.builtin_kinds"


_WORDING = _plugins.Wording(
    "requirement kind",
    bad_name="{cls}.kind_name must be an identifier-like string (the YAML key), got {name!r}",
    reserved="{cls} takes the name {name!r}, which is a common requirement field ({fields})",
    qualified=True,
    names_classes=True,
)


class BuiltinKinds:
    """The plugin that provides Chimera's four built-in kinds (as any plugin would)."""

    @hookimpl
    def chimera_requirement_kinds(self) -> list[type[Check]]:
        from chimera.spec.kinds import Absent, Command, Contains, Defines

        return [Defines, Contains, Absent, Command]


class KindRegistry(_plugins.KindRegistry[Check]):
    """Requirement kinds by name (the YAML key that selects them).

    Attributes:
        kinds: read-only mapping ``kind name -> Check subclass``, in registration order
            (built-ins first, then plugins in the order pluggy registered them).
        plugin_manager: the pluggy manager the kinds were collected from.
    """

    hookspecs, builtin, builtin_name = (hookspecs,), BuiltinKinds, BUILTIN_PLUGIN_NAME
    hook, base, reserved, label = "chimera_requirement_kinds", Check, COMMON_FIELDS, "chimera"
    wording = _WORDING


@functools.cache
def get_registry() -> KindRegistry:
    """The default registry: built-in kinds plus every installed ``chimera`` entry point.

    Built once per process and cached (``get_registry.cache_clear()`` rebuilds it).

    Raises:
        PluginError: see :meth:`KindRegistry.create`.
    """
    return KindRegistry.create(entry_points=True)
