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
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import pluggy

from chimera.errors import PluginError
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

_KIND_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

BUILTIN_PLUGIN_NAME = "chimera.builtin_kinds"


class BuiltinKinds:
    """The plugin that provides Chimera's four built-in kinds (as any plugin would)."""

    @hookimpl
    def chimera_requirement_kinds(self) -> list[type[Check]]:
        from chimera.spec.kinds import Absent, Command, Contains, Defines

        return [Defines, Contains, Absent, Command]


class KindRegistry:
    """Requirement kinds by name (the YAML key that selects them).

    Attributes:
        kinds: read-only mapping ``kind name -> Check subclass``, in registration order
            (built-ins first, then plugins in the order pluggy registered them).
        plugin_manager: the pluggy manager the kinds were collected from.
    """

    def __init__(
        self,
        kinds: Mapping[str, type[Check]],
        plugin_manager: pluggy.PluginManager | None = None,
    ) -> None:
        self._kinds: dict[str, type[Check]] = dict(kinds)
        self.kinds: Mapping[str, type[Check]] = MappingProxyType(self._kinds)
        self.plugin_manager = plugin_manager

    @classmethod
    def create(
        cls,
        plugins: Iterable[object] = (),
        *,
        entry_points: bool = True,
        builtins: bool = True,
    ) -> KindRegistry:
        """Build a registry from the built-ins, entry-point plugins and ``plugins``.

        Args:
            plugins: plugin objects or modules with ``@hookimpl`` functions.
            entry_points: also load plugins from the entry-point group ``chimera``.
            builtins: register the four built-in kinds (turn off only to test plugins alone).

        Raises:
            PluginError: a plugin failed to import or validate, returned something that is
                not a list of Check subclasses, or two kinds share one name.
        """
        pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        try:
            if builtins:
                pm.register(BuiltinKinds(), name=BUILTIN_PLUGIN_NAME)
            if entry_points:
                try:
                    pm.load_setuptools_entrypoints(hookspecs.PROJECT_NAME)
                except Exception as exc:
                    raise PluginError(
                        f"cannot load a plugin from the {hookspecs.PROJECT_NAME!r} entry-point "
                        f"group: {type(exc).__name__}: {exc}"
                    ) from exc
            for plugin in plugins:
                # A plugin may be both installed (entry point) and passed explicitly.
                if not pm.is_registered(plugin):
                    pm.register(plugin)
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"invalid chimera plugin {exc.plugin!r}: {exc}") from exc
        return cls(_collect_kinds(pm), pm)

    def get(self, name: str) -> type[Check] | None:
        """The kind registered as ``name``, or ``None``."""
        return self._kinds.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    @property
    def names(self) -> tuple[str, ...]:
        """Kind names in registration order."""
        return tuple(self._kinds)

    def __repr__(self) -> str:
        return f"KindRegistry({', '.join(self._kinds)})"


def _collect_kinds(pm: pluggy.PluginManager) -> dict[str, type[Check]]:
    """Call each plugin's hook separately so a clash can name both plugins."""
    kinds: dict[str, type[Check]] = {}
    owners: dict[str, str] = {}
    # get_hookimpls() lists implementations in registration order (built-ins first).
    for impl in pm.hook.chimera_requirement_kinds.get_hookimpls():
        plugin_name = impl.plugin_name
        try:
            provided = impl.function()
        except Exception as exc:
            raise PluginError(
                f"plugin {plugin_name!r} failed in chimera_requirement_kinds: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(provided, list | tuple):
            raise PluginError(
                f"plugin {plugin_name!r}: chimera_requirement_kinds must return a list of "
                f"Check subclasses, got {type(provided).__name__}"
            )
        for kind in provided:
            name = _validate_kind(kind, plugin_name)
            if name in kinds:
                if kinds[name] is kind:
                    continue
                raise PluginError(
                    f"requirement kind {name!r} is registered twice: "
                    f"{_qualname(kinds[name])} by plugin {owners[name]!r} and "
                    f"{_qualname(kind)} by plugin {plugin_name!r}"
                )
            kinds[name] = kind
            owners[name] = plugin_name
    return kinds


def _validate_kind(kind: object, plugin_name: str) -> str:
    if not (isinstance(kind, type) and issubclass(kind, Check)):
        raise PluginError(
            f"plugin {plugin_name!r}: {kind!r} is not a subclass of chimera.spec.model.Check"
        )
    name = getattr(kind, "kind_name", None)
    if not isinstance(name, str) or not _KIND_NAME.match(name):
        raise PluginError(
            f"plugin {plugin_name!r}: {_qualname(kind)}.kind_name must be an identifier-like "
            f"string (the YAML key), got {name!r}"
        )
    if name in COMMON_FIELDS:
        raise PluginError(
            f"plugin {plugin_name!r}: {_qualname(kind)} takes the name {name!r}, which is a "
            f"common requirement field ({', '.join(COMMON_FIELDS)})"
        )
    return name


def _qualname(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


@functools.cache
def get_registry() -> KindRegistry:
    """The default registry: built-in kinds plus every installed ``chimera`` entry point.

    Built once per process and cached (``get_registry.cache_clear()`` rebuilds it).

    Raises:
        PluginError: see :meth:`KindRegistry.create`.
    """
    return KindRegistry.create(entry_points=True)
