"""The one pluggy kind-registry pattern every plugin-extensible part of Chimera shares.

A part (requirement kinds, crew kinds, connector kinds, trigger kinds, profile kinds) declares
a hook that returns a list of classes; :func:`build_plugin_manager` registers the part's
built-ins plugin, its entry-point plugins and explicit plugins, :func:`collect_kinds` calls
each hook implementation separately (so a clash can name both plugins) and validates what it
returns, and :class:`KindRegistry` is the read-only ``name -> class`` result. Only the wording
of the errors differs per part, so it is a parameter (:class:`Wording`).

The parts' own files share two shapes more: the pluggy markers (:data:`hookspec`,
:data:`hookimpl`, one project name for every part; each part keeps its hook and entry-point
group in its own ``hookspecs`` module) and :class:`KindCheck`, one validated file of a part.
A third-party plugin of any part looks the same (here a crew kind)::

    # pyproject.toml of a plugin distribution: the part's entry-point group
    [project.entry-points."chimera.crews"]
    debate = "my_pkg.crew_kinds"

    # my_pkg/crew_kinds.py: the part's hook, returning its kind classes
    from chimera.plugins import hookimpl

    @hookimpl
    def chimera_crew_kinds():
        return [Debate]

This module is on the ground floor and imports only :mod:`pluggy` and :mod:`chimera.errors`:
the pytest plugin reaches it through :mod:`chimera.spec.registry` and must stay light.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any, ClassVar, Generic, Self, TypeVar

import pluggy

from chimera.errors import PluginError, SpecProblem

__all__ = [
    "PROJECT_NAME",
    "KindCheck",
    "KindRegistry",
    "Wording",
    "build_plugin_manager",
    "collect_kinds",
    "hookimpl",
    "hookspec",
    "kinds_hookspec",
]

T = TypeVar("T")

PROJECT_NAME = "chimera"
"""The pluggy project name of every part's hooks (their entry-point groups differ)."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks a hook specification in a part's ``hookspecs`` module."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's hook implementation (any part's)."""


def kinds_hookspec(hook: str, kinds: str) -> Callable[[], list[type[Any]]]:
    """The hook specification ``hook()`` of a part whose plugins return ``kinds`` classes.

    Two kinds with one ``kind_name``, from any plugins, make the part's registry raise
    :class:`chimera.errors.PluginError`; so does a name the part reserves for its fields.
    """

    def spec() -> list[type[Any]]:
        raise NotImplementedError  # never called: pluggy calls the implementations

    spec.__name__ = spec.__qualname__ = hook
    spec.__doc__ = f"Return the {kinds} this plugin provides (a list of classes)."
    marked: Callable[[], list[type[Any]]] = hookspec(spec)
    return marked


@dataclass(frozen=True)
class KindCheck(Generic[T]):
    """One file of a part validated in one pass (a crew file, an agent profile): the value when
    the file is valid, else every problem — one file's :class:`chimera.spec.loader.SpecLoad`.

    Attributes:
        source: the file as problems show it (or the caller's label for text).
        value: the validated object; ``None`` whenever there is a problem.
        problems: every problem, in line order.
    """

    source: str
    value: T | None = None
    problems: list[SpecProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the file has no problem."""
        return not self.problems

    @classmethod
    def of(cls, source: str, value: T | None, problems: Iterable[SpecProblem]) -> Self:
        """The check of ``source``: ``problems`` sorted by line and column; ``value`` kept only
        when there are none."""
        ordered = sorted(problems, key=lambda p: (p.line, p.col))
        return cls(source, None if ordered else value, ordered)


_KIND_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def build_plugin_manager(
    project: str,
    hookspecs: Sequence[ModuleType],
    *,
    builtin: object | None,
    builtin_name: str,
    entry_point_group: str,
    plugins: Iterable[object],
    entry_points: bool,
    label: str,
) -> pluggy.PluginManager:
    """A pluggy manager for ``project`` with ``hookspecs`` and every plugin registered.

    Args:
        project: the pluggy project name (the ``HookimplMarker`` name the plugins use).
        hookspecs: modules of ``@hookspec`` functions, added in order.
        builtin: the built-ins plugin object, registered first as ``builtin_name``; ``None``
            registers none.
        entry_point_group: the group loaded when ``entry_points`` is true.
        plugins: plugin objects or modules; one already registered (also installed as an entry
            point) is skipped.
        label: the word in ``"invalid <label> plugin ..."`` errors (e.g. ``"crew"``).

    Raises:
        PluginError: an entry-point plugin failed to import, or a plugin failed validation
            (a hookimpl without a spec, or a wrong signature).
    """
    pm = pluggy.PluginManager(project)
    for module in hookspecs:
        pm.add_hookspecs(module)
    try:
        if builtin is not None:
            pm.register(builtin, name=builtin_name)
        if entry_points:
            try:
                pm.load_setuptools_entrypoints(entry_point_group)
            except Exception as exc:
                raise PluginError(
                    f"cannot load a plugin from the {entry_point_group!r} entry-point group: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
        for plugin in plugins:
            if not pm.is_registered(plugin):
                pm.register(plugin)
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"invalid {label} plugin {exc.plugin!r}: {exc}") from exc
    return pm


@dataclass(frozen=True)
class Wording:
    """How one registry words its errors (after the common ``"plugin 'name': "`` prefix).

    Templates are :meth:`str.format` strings. ``not_base`` gets ``kind``; ``bad_name`` and
    ``reserved`` get ``cls`` (see ``qualified``), ``name`` and ``fields`` (the reserved names
    joined by ``", "``). ``not_base=None`` says "is not a subclass of <module>.<Base>";
    ``reserved=None`` words a reserved name with ``bad_name``.

    Attributes:
        noun: what a kind is called in a clash (``"requirement kind"``).
        qualified: ``cls`` in ``bad_name``/``reserved`` is ``module.qualname``, not ``qualname``.
        names_classes: a clash names both classes (``module.qualname``) besides both plugins.
    """

    noun: str
    bad_name: str
    reserved: str | None = None
    not_base: str | None = None
    qualified: bool = False
    names_classes: bool = False

    def clash(self, name: str, first: type, first_owner: str, second: type, owner: str) -> str:
        """The error for ``name`` held by ``first`` (from ``first_owner``) and ``second``."""
        if self.names_classes:
            return (
                f"{self.noun} {name!r} is registered twice: {_qualname(first)} by plugin "
                f"{first_owner!r} and {_qualname(second)} by plugin {owner!r}"
            )
        return f"{self.noun} {name!r} is registered twice: by plugin {first_owner!r} and by plugin {owner!r}"  # noqa: E501


def _qualname(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


def collect_kinds(
    pm: pluggy.PluginManager,
    hook_name: str,
    base: type[T],
    *,
    reserved: Iterable[str],
    wording: Wording,
) -> dict[str, type[T]]:
    """``kind_name -> class`` from every implementation of ``hook_name``, in registration order.

    Each implementation is called on its own, so a failure or a clash names its plugin(s);
    a class returned twice (by one or two plugins) counts once.

    Raises:
        PluginError: an implementation raised, returned no list/tuple, returned something that
            is not a subclass of ``base``, a ``kind_name`` that is not an identifier or is one
            of ``reserved``, or a name another class already holds.
    """
    fields = tuple(reserved)
    kinds: dict[str, type[T]] = {}
    owners: dict[str, str] = {}
    for impl in getattr(pm.hook, hook_name).get_hookimpls():
        plugin = impl.plugin_name
        try:
            provided = impl.function()
        except Exception as exc:
            raise PluginError(
                f"plugin {plugin!r} failed in {hook_name}: {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(provided, list | tuple):
            raise PluginError(
                f"plugin {plugin!r}: {hook_name} must return a list of {base.__name__} "
                f"subclasses, got {type(provided).__name__}"
            )
        for kind in provided:
            name = _validate(kind, base, plugin, fields, wording)
            if name in kinds and kinds[name] is not kind:
                raise PluginError(wording.clash(name, kinds[name], owners[name], kind, plugin))
            kinds[name] = kind
            owners.setdefault(name, plugin)
    return kinds


def _validate(
    kind: object, base: type[T], plugin: str, fields: tuple[str, ...], wording: Wording
) -> str:
    if not (isinstance(kind, type) and issubclass(kind, base)):
        if wording.not_base is None:
            raise PluginError(f"plugin {plugin!r}: {kind!r} is not a subclass of {_qualname(base)}")
        raise PluginError(f"plugin {plugin!r}: " + wording.not_base.format(kind=kind))
    name = getattr(kind, "kind_name", None)
    cls = _qualname(kind) if wording.qualified else kind.__qualname__
    values = {"cls": cls, "name": name, "fields": ", ".join(fields)}
    if not isinstance(name, str) or not _KIND_NAME.match(name):
        raise PluginError(f"plugin {plugin!r}: " + wording.bad_name.format(**values))
    if name in fields:
        template = wording.bad_name if wording.reserved is None else wording.reserved
        raise PluginError(f"plugin {plugin!r}: " + template.format(**values))
    return name


class KindRegistry(Generic[T]):
    """Kinds by name (the YAML key that selects them), in registration order.

    A subclass names where its kinds come from in class attributes: ``hookspecs`` (the
    modules of hook specifications; the last one's ``PROJECT_NAME`` is the pluggy project,
    its ``ENTRY_POINT_GROUP``, else ``PROJECT_NAME``, the entry-point group), ``hook`` (the
    hook returning kind classes), ``base`` (the class every kind subclasses), ``reserved``
    (names no kind may take), ``builtin``/``builtin_name`` (the built-ins plugin factory and
    its plugin name), ``label`` (as in :func:`build_plugin_manager`) and ``wording``.

    Attributes:
        kinds: read-only mapping ``kind name -> class`` (built-ins first, then plugins in the
            order pluggy registered them).
        plugin_manager: the pluggy manager the kinds were collected from, if any.
    """

    hookspecs: ClassVar[tuple[ModuleType, ...]]
    hook: ClassVar[str]
    base: ClassVar[type[Any]]
    reserved: ClassVar[tuple[str, ...]]
    builtin: ClassVar[Callable[[], object]]
    builtin_name: ClassVar[str]
    label: ClassVar[str]
    wording: ClassVar[Wording]

    def __init__(
        self, kinds: Mapping[str, type[T]], plugin_manager: pluggy.PluginManager | None = None
    ) -> None:
        self._kinds: dict[str, type[T]] = dict(kinds)
        self.kinds: Mapping[str, type[T]] = MappingProxyType(self._kinds)
        self.plugin_manager = plugin_manager

    @classmethod
    def create(
        cls, plugins: Iterable[object] = (), *, entry_points: bool = True, builtins: bool = True
    ) -> Self:
        """Build a registry from the built-ins, entry-point plugins and ``plugins``.

        Args:
            plugins: plugin objects or modules with ``@hookimpl`` functions.
            entry_points: also load plugins from the registry's entry-point group.
            builtins: register the built-in kinds (turn off only to test plugins alone).

        Raises:
            PluginError: a plugin failed to import or validate, returned something that is
                not a list of ``base`` subclasses, or two kinds share one name.
        """
        project: str = cls.hookspecs[-1].PROJECT_NAME
        pm = build_plugin_manager(
            project,
            cls.hookspecs,
            builtin=cls.builtin() if builtins else None,
            builtin_name=cls.builtin_name,
            entry_point_group=getattr(cls.hookspecs[-1], "ENTRY_POINT_GROUP", project),
            plugins=plugins,
            entry_points=entry_points,
            label=cls.label,
        )
        kinds = collect_kinds(pm, cls.hook, cls.base, reserved=cls.reserved, wording=cls.wording)
        return cls(kinds, pm)

    def get(self, name: str) -> type[T] | None:
        """The kind registered as ``name``, or ``None``."""
        return self._kinds.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    @property
    def names(self) -> tuple[str, ...]:
        """Kind names in registration order."""
        return tuple(self._kinds)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self._kinds)})"
