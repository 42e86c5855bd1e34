"""The files a scan's scope selects (a ``path``, or ``paths`` globs minus ``exclude``), each
scope selected once per session."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from chimera.spec.check_context import (
    ScanRequest,
    Unscannable,
)
from chimera.spec.engine.files import (
    IS_DIRECTORY,
    FileTree,
    Resolver,
    Target,
    normalize_relpath,
)

ScopeKey = tuple[str | None, tuple[str, ...] | None, tuple[str, ...]]
"""A scope as ``(path, paths, exclude)``."""


@dataclass(frozen=True)
class Scope:
    """One selected scope: its targets, the unscannable names, or why it selects nothing
    (``missing``: the one ``path`` is absent; ``error``: the scope is unusable)."""

    targets: tuple[Target, ...] = ()
    unscannable: tuple[Unscannable, ...] = ()
    missing: str | None = None
    error: str | None = None
    by_real: dict[str, Target] = field(default_factory=dict)

    # Computed once per scope, not once per requirement scanning it.
    @functools.cached_property
    def names(self) -> tuple[str, ...]:
        """Every selected name: the targets', then the unscannable ones'."""
        return tuple(t.rel for t in self.targets) + tuple(u.file for u in self.unscannable)

    @functools.cached_property
    def order(self) -> dict[str, int]:
        """Each target's position in the selection."""
        return {t.rel: i for i, t in enumerate(self.targets)}


class Scopes:
    """The engine session's scopes, each selected once (on first use) and kept.

    Args:
        tree: the root's file listing.
        resolver: resolves relative names to targets.
    """

    def __init__(self, tree: FileTree, resolver: Resolver) -> None:
        self._tree = tree
        self._resolver = resolver
        self._scopes: dict[ScopeKey, Scope] = {}

    def scope(self, skey: ScopeKey) -> Scope:
        """The scope ``skey`` names (selected now unless already selected)."""
        scope = self._scopes.get(skey)
        if scope is None:
            scope = self._select(*skey)
            self._scopes[skey] = scope
        return scope

    def selected(self, paths: tuple[str, ...], exclude: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The relative names (POSIX) a ``paths`` scope selects minus ``exclude`` — the same
        selection, made once per session, that a scan of that scope reads — targets first, then
        the unscannable ones; ``()`` when it selects nothing or the tree cannot be listed."""
        return self.scope((None, paths, exclude)).names

    def _select(
        self, path: str | None, paths: tuple[str, ...] | None, exclude: tuple[str, ...]
    ) -> Scope:
        if path is not None:
            rel = normalize_relpath(path)
            if rel is None:
                return Scope(error=f"path {path!r} leaves the root")
            if not rel:
                return Scope(error=f"path {path!r} is the root directory, not a file")
            found = self._resolver.resolve(rel)
            if found is None:
                return Scope(missing=rel)
            if isinstance(found, Unscannable):
                return Scope(unscannable=(found,))
            return Scope(targets=(found,), by_real={found.real: found})
        chosen = self._tree.select(paths or (), exclude)
        if self._tree.listing_error is not None:
            return Scope(error=self._tree.listing_error)
        targets: list[Target] = []
        unscannable: list[Unscannable] = []
        seen: set[str] = set()
        for rel in chosen:
            found = self._resolver.resolve(rel)
            if found is None:
                continue  # listed by git but deleted from the working tree
            if isinstance(found, Unscannable):
                if found.reason != IS_DIRECTORY:
                    unscannable.append(found)
                elif (Path(self._tree.root_real) / rel).is_symlink():
                    # A symlinked directory is not followed (as git does not); a scope must
                    # not pass by skipping what it holds, so it is unscannable, named.
                    unscannable.append(Unscannable(rel, "a symlink to a directory (not followed)"))
            elif found.real not in seen:
                seen.add(found.real)
                targets.append(found)
        if not targets and not unscannable:
            scope = ", ".join(paths or ())
            if exclude:
                scope += " excluding " + ", ".join(exclude)
            return Scope(error=f"{scope} selects zero files")
        return Scope(
            targets=tuple(targets),
            unscannable=tuple(unscannable),
            by_real={t.real: t for t in targets},
        )


def scope_key(request: ScanRequest) -> ScopeKey:
    """The key a request's scope is selected and kept under."""
    return (request.path, request.paths, request.exclude)
