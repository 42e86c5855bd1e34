"""The plugin's per-session state: the loaded Spec and the one DriftSession its items share.

Imports nothing from :mod:`chimera` at import time (the Spec machinery is imported at first
use), so registering the plugin costs nothing when ``--chimera-spec`` is not given.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_chimera import heap

if TYPE_CHECKING:
    from chimera.errors import SpecProblem
    from chimera.spec.drift import DriftSession
    from chimera.spec.engine import EngineStats
    from chimera.spec.loader import SpecLoad
    from chimera.spec.model import Requirement, SourceLocation
    from chimera.spec.results import RequirementResult
    from chimera.spec.settings import CheckSettings

__all__ = ["DEFAULT_MAX_EVIDENCE", "STATE_KEY", "ChimeraState", "get_state", "resolved"]

DEFAULT_MAX_EVIDENCE = 5
"""Evidence locations shown for a red requirement before "... and N more"."""


def resolved(path: str | os.PathLike[str]) -> Path:
    """``path`` absolute with every symlink resolved (how spec files are compared)."""
    return Path(os.path.realpath(path))


@dataclass
class ChimeraState:
    """Everything the plugin keeps for one session (one per xdist worker).

    Attributes:
        spec_files: the discovered spec files, absolute and resolved, in load order.
        root: the directory the Spec is checked against.
        invocation_dir: where pytest was started (problem paths are shown relative to it).
        max_evidence: evidence locations shown per failure.
        settings: the ``[check]`` settings of ``root`` (``None``: the defaults).
        use_cache: whether the result and parse caches are read and written.
        selected: requirement ids left after deselection, in session order.
        invalid_files: spec files reported as collection errors.
        upcoming: under xdist, the ids this worker has been handed and not yet run (else
            ``None``).
        freezer: freezes the session's long-lived objects (see :mod:`pytest_chimera.heap`).
    """

    spec_files: tuple[Path, ...]
    root: Path
    invocation_dir: Path
    max_evidence: int = DEFAULT_MAX_EVIDENCE
    settings: CheckSettings | None = None
    use_cache: bool = False
    selected: list[str] = field(default_factory=list)
    invalid_files: int = 0
    upcoming: Callable[[], list[str]] | None = None
    freezer: heap.Freezer = field(default_factory=heap.Freezer)
    _load: SpecLoad | None = None
    _by_file: dict[Path, tuple[Requirement, ...]] = field(default_factory=dict)
    _by_id: dict[str, Requirement] = field(default_factory=dict)
    _problems: dict[Path, list[SpecProblem]] = field(default_factory=dict)
    _drift: DriftSession | None = None
    _planned: set[str] = field(default_factory=set)
    _evaluated: int = 0
    _stats: EngineStats | None = None

    @functools.cached_property
    def spec_file_set(self) -> frozenset[Path]:
        return frozenset(self.spec_files)

    def load(self) -> SpecLoad:
        """Load and validate every spec file once (each file's problems kept apart)."""
        if self._load is None:
            # Tens of thousands of objects, all kept: collections meanwhile would free nothing.
            with heap.paused():
                from chimera.spec.loader import load_spec_files
                from chimera.spec.parsecache import ParseCache

                # Spec files parsed before are read back (trusted as the result cache is).
                cache = ParseCache.for_root(self.root) if self.use_cache else None
                loaded = load_spec_files(list(self.spec_files), parse_cache=cache)
                # Frozen before any collection walks them (the items freeze the rest).
                self.freezer.freeze()
            self._by_file = {resolved(f.path): f.requirements for f in loaded.spec.files}
            self._by_id = loaded.spec.by_id()
            self._problems = {
                resolved(path): list(problems)
                for path, problems in loaded.problems.items()
                if problems
            }
            self._load = loaded
        return self._load

    @property
    def loaded(self) -> bool:
        """Whether this session loaded the Spec (an xdist controller never does)."""
        return self._load is not None

    def problems_for(self, path: Path) -> list[SpecProblem]:
        self.load()
        return self._problems.get(resolved(path), [])

    def requirements_for(self, path: Path) -> tuple[Requirement, ...]:
        self.load()
        return self._by_file.get(resolved(path), ())

    def requirement(self, requirement_id: str) -> Requirement:
        """The loaded requirement ``requirement_id`` (loaded again if asked after
        :meth:`release`).

        Raises:
            KeyError: no valid spec file declares it.
        """
        self.load()
        return self._by_id[requirement_id]

    def result(self, requirement_id: str) -> RequirementResult:
        """Evaluate one requirement through the session's single DriftSession.

        The first requirement of a batch plans the work of every requirement known to run
        here, so one pass reads each file once for all of them: the whole selection in a
        serial run, the items this worker holds under xdist (more arrive later; each
        arrival is one more pass, with file texts kept in memory by the engine).
        """
        drift = self._drift
        if drift is None:
            drift = self._drift = self._start()
        if requirement_id not in self._planned:
            batch = self._batch(requirement_id)
            self._planned.update(batch)
            with heap.paused():
                drift.prepare(batch)
        self._evaluated += 1
        return drift.result(requirement_id)

    def _start(self) -> DriftSession:
        with heap.paused():
            from chimera.spec.drift import DriftSession
            from chimera.spec.engine import EngineOptions
            from chimera.spec.settings import engine_options

            options = engine_options(self.settings) if self.settings else EngineOptions()
            # The user's own tree, like `chimera check`: the result cache is trusted here.
            # Evidence past what a failure shows is counted, never built.
            options = dataclasses.replace(
                options, result_cache=self.use_cache, evidence_limit=self.max_evidence
            )
            return DriftSession(self.load().spec, self.root, options=options)

    def save_reports(self) -> None:
        """Store the outcomes evaluated so far in the report cache (when it is on)."""
        if self._drift is not None:
            self._drift.save()

    def release(self) -> None:
        """Drop the Spec and the DriftSession (file texts, patterns, results) once the
        session is over.

        pytest's last collections walk everything still alive; the items keep only ids.
        :attr:`planned`, :attr:`evaluated` and :attr:`stats` stay readable.
        """
        if self._drift is not None:
            self._stats = self._drift.stats
        self._drift = None
        self._load = None
        self._by_file, self._by_id, self._problems = {}, {}, {}

    @property
    def planned(self) -> frozenset[str]:
        """Requirement ids whose work this session (this xdist worker) has planned."""
        return frozenset(self._planned)

    @property
    def evaluated(self) -> int:
        """How many items of this session (this xdist worker) asked for a result."""
        return self._evaluated

    @property
    def stats(self) -> EngineStats | None:
        """The engine's counters (reads, pattern compiles, passes); ``None`` before the first
        requirement ran."""
        return self._drift.stats if self._drift is not None else self._stats

    def _batch(self, requirement_id: str) -> list[str]:
        """The ids to plan with ``requirement_id``: deselected ones never appear."""
        if self.upcoming is None:
            return self.selected or [requirement_id]
        wanted = [requirement_id, *self.upcoming()]
        # A selected dependency is evaluated beside its dependent, as in a serial run, so
        # the "(depends on ..., which failed)" note does not depend on the distribution.
        selected = set(self.selected)
        self.load()
        by_id = self._by_id
        out: dict[str, None] = {}
        while wanted:
            rid = wanted.pop()
            if rid in out or rid in self._planned:
                continue
            out[rid] = None
            req = by_id.get(rid)
            if req is not None:
                wanted.extend(d for d in req.depends_on if d in selected)
        return list(out)

    def show_path(self, file: str | os.PathLike[str]) -> str:
        """``file`` relative to where pytest was started when it lies below it."""
        path = Path(file)
        if not path.is_absolute():
            return path.as_posix()
        try:
            return path.relative_to(self.invocation_dir).as_posix()
        except ValueError:
            return path.as_posix()

    def show_problem(self, problem: SpecProblem) -> str:
        where = self.show_path(problem.file)
        if problem.line:
            return f"{where}:{problem.line}:{problem.col}: {problem.message}"
        return f"{where}: {problem.message}"

    def show_location(self, location: SourceLocation) -> str:
        return f"{self.show_path(location.file)}:{location.line}:{location.col}"


STATE_KEY = pytest.StashKey[ChimeraState]()


def get_state(config: pytest.Config) -> ChimeraState | None:
    """The plugin's state for ``config``, or ``None`` when ``--chimera-spec`` was not given."""
    return config.stash.get(STATE_KEY, None)
