"""What a requirement kind sees while it checks: the :class:`CheckContext` protocol.

A kind's ``prepare()`` announces the work it will need (a text scan, a Python module's
symbol index); the engine batches every announcement of a run so that each file is read
once, each pattern compiled once and each file searched in one multi-pattern pass. The
kind's ``check()`` then asks for the results, which the engine computes on demand if they
were not announced (so ``check()`` alone is always correct, only slower).

The protocol deliberately speaks in results, not in I/O: a kind never opens a file or
compiles a pattern itself, so every kind gets the same fail-closed rules (binary,
undecodable, oversized, unreadable files, broken links, links leaving the root).

The implementation is :class:`chimera.spec.engine.session.EngineSession`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    # Only the protocol's annotation: the replay of `chimera check` imports this module.
    from chimera.runner import CommandRunner


class MatchNeed(StrEnum):
    """How many matches a scan must report.

    ``first``: the first match in any selected file is enough (``contains``).
    ``first_per_file``: the first match of every selected file (``contains`` with
    ``match: all``). ``all``: every match of every file (``absent`` evidence).
    """

    FIRST = "first"
    FIRST_PER_FILE = "first_per_file"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class ScanRequest:
    """A pattern searched over a scope: one ``path`` or ``paths`` globs minus ``exclude``.

    Paths and globs are relative to the root with ``/`` separators; a leading ``./`` is
    dropped from ``path`` and anchors a glob at the root (as ``/`` does). ``regex=False``
    makes ``pattern`` a literal.
    """

    pattern: str
    regex: bool
    path: str | None = None
    paths: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    need: MatchNeed = MatchNeed.ALL


@dataclass(frozen=True, slots=True)
class TextMatch:
    """One match: ``file`` relative to the root, 1-based ``line``/``col`` (in characters)
    of the match start, and the text of that line (trimmed to a readable length).

    When the selected name is a symlink (or lies under a linked directory), ``file`` is the
    file a person would edit — the link's target, relative to the root — and ``link`` the
    selected name; otherwise ``link`` is ``None``.
    """

    file: str
    line: int
    col: int
    snippet: str
    link: str | None = None


@dataclass(frozen=True, slots=True)
class Unscannable:
    """A selected file that could not be scanned, and why (``binary file``, ...)."""

    file: str
    reason: str


@dataclass(frozen=True)
class ScanResult:
    """The outcome of a :class:`ScanRequest`.

    Attributes:
        files: the selected files (relative, sorted, one entry per real file).
        matches: per selected file, its matches in order (files without a match are absent;
            how many are kept depends on the request's ``need``, and for ``all`` on the
            engine's evidence limit: then only the first matches of the scope are listed, and
            ``match_count`` / ``matched_files`` count them all).
        unscannable: selected files that could not be read as text (never evidence of
            absence).
        timeouts: selected files where the pattern ran past its time limit.
        skipped: selected files the pattern was not run on because it had already timed out
            in the session's limit of files (a runaway pattern cannot cost time per file).
        missing: the single ``path`` when it does not exist (``files`` is then empty).
        error: why the scan could not be run at all (bad pattern with its position, a path
            leaving the root, a scope selecting zero files), or ``None``.
        match_count: every match in the scope when ``matches`` lists only the first ones
            (:attr:`~chimera.spec.engine.options.EngineOptions.evidence_limit`), else ``None``.
        matched_files: the files with a match in that case, else ``None``.
    """

    files: tuple[str, ...] = ()
    matches: Mapping[str, tuple[TextMatch, ...]] = field(default_factory=dict)
    unscannable: tuple[Unscannable, ...] = ()
    timeouts: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    missing: str | None = None
    error: str | None = None
    match_count: int | None = None
    matched_files: int | None = None

    @property
    def total_matches(self) -> int:
        """Every match in the scope (listed in ``matches`` or not)."""
        if self.match_count is not None:
            return self.match_count
        return sum(len(found) for found in self.matches.values())

    @property
    def files_matched(self) -> int:
        """The files with a match (listed in ``matches`` or not)."""
        return self.matched_files if self.matched_files is not None else len(self.matches)


@dataclass(frozen=True, slots=True)
class Definition:
    """A name a Python module binds: ``qualname`` (``Outer.Inner.method``), its kind
    (``class``, ``function``, ``method``, ``variable`` or ``import``) and 1-based place."""

    qualname: str
    kind: str
    line: int
    col: int
    snippet: str


@dataclass(frozen=True)
class ModuleIndex:
    """The definitions found in one Python file (see :mod:`chimera.spec.engine.pyindex`).

    Attributes:
        file: path relative to the root.
        definitions: every definition, keyed by qualified name (several when a name is
            bound more than once, in file order).
        problem: set instead of ``definitions`` when the file could not be indexed:
            ``missing`` (no such file), or a one-line reason (``syntax error at
            file:line:col: ...``, ``binary file``, ...).
        missing: whether the file does not exist (a ``failed`` check, not an ``error``).
        star_imports: ``from m import *`` statements, each a definition of kind
            ``star import`` whose ``qualname`` is ``m``; the names they bind are unknown (the
            module is read, never imported, and imports are not followed).
        source: the file a person would edit, relative to the root, when ``file`` is a
            symlink to it (or lies under a linked directory); ``None`` otherwise.
    """

    file: str
    definitions: Mapping[str, tuple[Definition, ...]] = field(default_factory=dict)
    problem: str | None = None
    missing: bool = False
    star_imports: tuple[Definition, ...] = ()
    source: str | None = None


@runtime_checkable
class CheckContext(Protocol):
    """The engine services a kind's ``prepare()`` / ``check()`` may use.

    Every method returns a result object instead of raising for bad input; paths in
    results are relative to :attr:`root` with ``/`` separators.
    """

    @property
    def root(self) -> Path:
        """The checked tree's root (absolute)."""
        ...

    @property
    def runner(self) -> CommandRunner:
        """Runs ``command`` checks (the local runner in CI, the sandbox in autonomous runs)."""
        ...

    def announce_scan(self, request: ScanRequest) -> None:
        """Plan ``request`` for the next batched pass (each file read once)."""
        ...

    def scan(self, request: ScanRequest) -> ScanResult:
        """Search ``request.pattern`` over its scope (running any planned pass first)."""
        ...

    def announce_module(self, path: str) -> None:
        """Plan indexing the Python file ``path`` in the next batched pass."""
        ...

    def module_index(self, path: str) -> ModuleIndex:
        """The definitions of the Python file at ``path`` (relative to the root)."""
        ...

    def resolve_module(self, dotted: str) -> tuple[str | None, Sequence[str]]:
        """Find ``pkg.mod`` as ``pkg/mod.py`` or ``pkg/mod/__init__.py`` under the root or
        ``src/``; returns the relative path (or ``None``) and the candidates looked at."""
        ...

    def resolve_cwd(self, cwd: str | None) -> tuple[Path | None, str | None]:
        """The absolute working directory for ``cwd`` (relative to the root) confined to
        the root: ``(path, None)``, or ``(None, reason)`` when it leaves the root or is not a
        directory."""
        ...
