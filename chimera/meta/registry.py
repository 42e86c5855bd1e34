"""The registry of profile kinds, built from pluggy plugins (as crews' and the Spec's kinds).

Every kind — the built-in ``solver`` and any third-party one — arrives through the
``chimera_profile_kinds`` hook (:mod:`chimera.meta.hookspecs`), from the entry-point group
``chimera.meta`` or passed explicitly::

    registry = ProfileKindRegistry.create(plugins=[MyKinds()], entry_points=False)

:func:`get_profile_registry` returns the default registry, built once per process.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import pluggy

from chimera.errors import PluginError
from chimera.meta import hookspecs
from chimera.meta.hookspecs import hookimpl
from chimera.meta.profile import COMMON_FIELDS, ProfileKind

__all__ = ["BuiltinProfileKinds", "ProfileKindRegistry", "get_profile_registry"]

_KIND_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class BuiltinProfileKinds:
    """The plugin that provides the built-in kind (as any plugin would)."""

    @hookimpl
    def chimera_profile_kinds(self) -> list[type[ProfileKind]]:
        from chimera.meta.profile import Solver

        return [Solver]


class ProfileKindRegistry:
    """Profile kinds by name (the YAML key that selects them), in registration order."""

    def __init__(self, kinds: Mapping[str, type[ProfileKind]]) -> None:
        self._kinds = dict(kinds)
        self.kinds: Mapping[str, type[ProfileKind]] = MappingProxyType(self._kinds)

    @classmethod
    def create(
        cls, plugins: Iterable[object] = (), *, entry_points: bool = True, builtins: bool = True
    ) -> ProfileKindRegistry:
        """Build a registry from the built-in, entry-point plugins and ``plugins``.

        Raises:
            PluginError: a plugin failed to load or validate, returned something that is not
                a list of ProfileKind subclasses, or two kinds share one name.
        """
        pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        try:
            if builtins:
                pm.register(BuiltinProfileKinds(), name="chimera.builtin_profile_kinds")
            if entry_points:
                try:
                    pm.load_setuptools_entrypoints(hookspecs.ENTRY_POINT_GROUP)
                except Exception as exc:
                    raise PluginError(
                        f"cannot load a plugin from the {hookspecs.ENTRY_POINT_GROUP!r} "
                        f"entry-point group: {type(exc).__name__}: {exc}"
                    ) from exc
            for plugin in plugins:
                if not pm.is_registered(plugin):
                    pm.register(plugin)
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"invalid profile plugin {exc.plugin!r}: {exc}") from exc
        return cls(_collect(pm))

    def get(self, name: str) -> type[ProfileKind] | None:
        return self._kinds.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._kinds)


def _collect(pm: pluggy.PluginManager) -> dict[str, type[ProfileKind]]:
    kinds: dict[str, type[ProfileKind]] = {}
    owners: dict[str, str] = {}
    for impl in pm.hook.chimera_profile_kinds.get_hookimpls():
        plugin = impl.plugin_name
        try:
            provided = impl.function()
        except Exception as exc:
            raise PluginError(
                f"plugin {plugin!r} failed in chimera_profile_kinds: {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(provided, list | tuple):
            raise PluginError(
                f"plugin {plugin!r}: chimera_profile_kinds must return a list of ProfileKind "
                f"subclasses, got {type(provided).__name__}"
            )
        for kind in provided:
            if not (isinstance(kind, type) and issubclass(kind, ProfileKind)):
                raise PluginError(
                    f"plugin {plugin!r}: {kind!r} is not a subclass of "
                    "chimera.meta.profile.ProfileKind"
                )
            name = kind.kind_name
            if not isinstance(name, str) or not _KIND_NAME.match(name) or name in COMMON_FIELDS:
                raise PluginError(
                    f"plugin {plugin!r}: {kind.__qualname__}.kind_name must be an identifier "
                    f"that is not a profile field ({', '.join(COMMON_FIELDS)}), got {name!r}"
                )
            if name in kinds and kinds[name] is not kind:
                raise PluginError(
                    f"profile kind {name!r} is registered twice: by plugin {owners[name]!r} "
                    f"and by plugin {plugin!r}"
                )
            kinds[name] = kind
            owners[name] = plugin
    return kinds


@functools.cache
def get_profile_registry() -> ProfileKindRegistry:
    """The default registry: the built-in plus every ``chimera.meta`` entry point (cached).

    Raises:
        PluginError: see :meth:`ProfileKindRegistry.create`.
    """
    return ProfileKindRegistry.create(entry_points=True)
