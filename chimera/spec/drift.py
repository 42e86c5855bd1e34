"""check_drift: the single function behind every surface that asks "does the Spec hold?".

The pytest plugin, ``chimera check``, the AutonomousAgent's verifier and the orchestrator
all call :func:`check_drift` (or a :class:`DriftSession` when they evaluate requirements one
at a time, as pytest items do).

A session first lets every selected requirement announce its work (``prepare``), so the
engine (:mod:`chimera.spec.engine`) can read each file once and search it for all patterns in
one pass; it then evaluates each requirement once and caches the result. Nothing a check does
escapes as an exception: an unexpected one becomes status ``error`` with a one-line message.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chimera.errors import UsageError
from chimera.runner import CommandRunner, LocalRunner, check_runner
from chimera.spec.engine import EngineOptions, EngineSession, EngineStats
from chimera.spec.engine.files import ReadBytes
from chimera.spec.engine.reports import ReportStore, TreeRecord, combine, report_key
from chimera.spec.model import CheckOutcome, Evidence, Requirement, Spec, Status
from chimera.spec.results import DriftReport, RequirementResult

log = logging.getLogger(__name__)

__all__ = ["DriftSession", "check_drift"]


def _outcome_json(outcome: CheckOutcome) -> list[Any]:
    evidence = [[e.file, e.line, e.col, e.snippet, e.note] for e in outcome.evidence]
    return [outcome.status.value, outcome.message, evidence, outcome.omitted]


def _outcome(raw: list[Any]) -> CheckOutcome:
    status, message, evidence = raw[:3]
    omitted = int(raw[3]) if len(raw) > 3 else 0
    return CheckOutcome(Status(status), message, tuple(Evidence(*e) for e in evidence), omitted)


def _capped(outcome: CheckOutcome, limit: int | None) -> CheckOutcome:
    """``outcome`` with at most ``limit`` evidence items, the rest counted (any kind)."""
    if limit is None or len(outcome.evidence) <= limit:
        return outcome
    rest = len(outcome.evidence) - limit
    return CheckOutcome(
        outcome.status, outcome.message, outcome.evidence[:limit], outcome.omitted + rest
    )


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    name = type(exc).__name__
    return f"{name}: {first}" if first else name


class DriftSession:
    """Evaluates requirements of ``spec`` against ``root``, each once, sharing all file work.

    Args:
        spec: a validated Spec.
        root: the repository root; the Spec's paths are relative to it.
        runner: runs ``command`` checks; default :class:`chimera.runner.LocalRunner`.
        options: engine limits (file size limit, pattern time limit, caches).
        stats: counters to fill (reads per file, compiles per pattern), for tests/benchmarks.
        reader: the engine's byte-reading hook (tests inject read failures through it).

    Raises:
        UsageError: ``root`` is not a directory.
    """

    def __init__(
        self,
        spec: Spec,
        root: Path,
        *,
        runner: CommandRunner | None = None,
        options: EngineOptions | None = None,
        stats: EngineStats | None = None,
        reader: ReadBytes | None = None,
    ) -> None:
        root = Path(root)
        if not root.is_dir():
            raise UsageError(f"root {root} is not a directory")
        self.spec = spec
        # A sandbox gives checks a runner of their own: each command in a disposable copy.
        checks = check_runner(runner or LocalRunner(), root)
        self.engine = EngineSession(root, checks, options=options, stats=stats, reader=reader)
        self._by_id = spec.by_id()
        self._order = [r.id for r in spec.requirements]
        self._prepared: set[str] = set()
        self._results: dict[str, RequirementResult] = {}
        self._running: set[str] = set()
        # The whole-report cache: on whenever the result cache is (and is not refused).
        self._taken = time.time()
        self._store: ReportStore | None = None
        self._hits: dict[str, Any] | None = None
        self._prior: TreeRecord | None = None
        self._stale: TreeRecord | None = None
        """The stored record this session found no longer holding (not validated again)."""
        self._fresh: dict[str, Any] = {}
        if self.engine.result_cache is not None:
            self.engine.track_reads()
            self._store = ReportStore(
                str(self.engine.root), max_bytes=self.engine.options.cache_max_bytes
            )
            self._key = report_key(
                str(self.engine.root),
                self.engine.options,
                [
                    [r.id, r.kind, r.check.model_dump(mode="json")]
                    for r in spec.requirements
                    if r.check.is_cacheable()
                ],
            )

    @property
    def stats(self) -> EngineStats:
        return self.engine.stats

    def _ids(self, ids: Iterable[str] | None) -> list[str]:
        if ids is None:
            return list(self._order)
        wanted = list(dict.fromkeys(ids))
        unknown = [i for i in wanted if i not in self._by_id]
        if unknown:
            raise KeyError(f"unknown requirement id(s): {', '.join(unknown)}")
        return wanted

    def prepare(self, ids: Iterable[str] | None = None) -> None:
        """Plan the work of these requirements (all when ``None``) for one batched pass.

        Requirements planned here are the session's selection: a dependency among them is
        evaluated before its dependents, so their messages do not depend on call order.

        Raises:
            KeyError: an id is not in the Spec.
        """
        for rid in self._ids(ids):
            if rid in self._prepared:
                continue
            self._prepared.add(rid)
            if rid in self._results or rid in self._cached():
                continue
            req = self._by_id[rid]
            try:
                req.check.prepare(self.engine)
            except Exception:  # the check itself will report the problem as `error`
                log.debug("prepare() of %s failed", rid, exc_info=True)

    def result(self, rid: str) -> RequirementResult:
        """Evaluate requirement ``rid`` (once; later calls return the cached result).

        A dependency that is red and was evaluated (or is selected through
        :meth:`prepare`) in this session is named in the message; the requirement is
        evaluated regardless.

        Raises:
            KeyError: ``rid`` is not in the Spec.
        """
        cached = self._results.get(rid)
        if cached is not None:
            return cached
        req = self._by_id.get(rid)
        if req is None:
            raise KeyError(f"unknown requirement id: {rid}")
        self._running.add(rid)
        try:
            for dep in req.depends_on:
                if dep in self._prepared and dep in self._by_id and dep not in self._running:
                    self.result(dep)
            outcome, duration = self._evaluate(req)
        finally:
            self._running.discard(rid)
        message = outcome.message + self._dependency_note(req)
        result = RequirementResult(
            req, outcome.status, message, outcome.evidence, duration, outcome.omitted
        )
        self._results[rid] = result
        return result

    def report(self, ids: Iterable[str] | None = None) -> DriftReport:
        """Results of these requirements (all when ``None``), in spec order.

        Raises:
            KeyError: an id is not in the Spec.
        """
        wanted = set(self._ids(ids))
        # Evaluation allocates tens of thousands of acyclic objects (matches, evidence,
        # results): the cyclic collector would rescan every live object (the whole Spec, the
        # models' schemas) again and again, to free nothing. Paused, as in the file pass.
        enabled = gc.isenabled()
        gc.disable()
        try:
            self.prepare(wanted)
            report = DriftReport(tuple(self.result(rid) for rid in self._order if rid in wanted))
            self.save()
        finally:
            if enabled:
                gc.enable()
        return report

    def _cached(self) -> dict[str, Any]:
        """Outcomes stored for this Spec, when the tree still reads as they were computed."""
        if self._hits is None:
            self._hits = {}
            if self._store is not None:
                found = self._store.load(self._key)
                if found is not None and found[1].holds(str(self.engine.root), self.engine.options):
                    self._hits, self._prior = found
                elif found is not None:
                    self._stale = found[1]
        return self._hits

    def save(self) -> None:
        """Store the outcomes evaluated so far in the report cache (when it is on and they
        could all be recorded); never raises. :meth:`report` calls it."""
        if self._store is None or not self._fresh:
            return
        record = self.engine.record(self._taken)
        if record is None:
            return
        outcomes = self._fresh
        if self._prior is not None:
            # A file edited since the hits were validated: only the fresh outcomes are kept.
            outcomes, record = combine((self._cached(), self._prior), (outcomes, record))
        # Merged there with what other processes (xdist workers) stored under the key.
        self._store.save(
            self._key, outcomes, record, options=self.engine.options, stale=self._stale
        )
        self._prior = record
        self._hits = outcomes
        self._fresh = {}

    def tree_record(self) -> TreeRecord | None:
        """What every result evaluated so far read, when each came from the report cache or
        was recorded by it (after :meth:`save`); ``None`` when the report cache is off or any
        result was not stored there (a ``command`` or plugin kind, a check that raised, a
        pattern that timed out, a walk instead of git's list). ``chimera check`` keys its
        replay (:mod:`chimera.cli._replay`) on this record."""
        if self._store is None or self._fresh or self._prior is None:
            return None
        hits = self._cached()
        if any(rid not in hits for rid in self._results):
            return None
        return self._prior

    def _evaluate(self, req: Requirement) -> tuple[CheckOutcome, float]:
        start = time.perf_counter()
        if self._store is not None and req.check.is_cacheable():
            hit = self._cached().get(req.id)
            if hit is not None:
                return _outcome(hit), time.perf_counter() - start
        try:
            outcome = req.check.check(self.engine)
            if not isinstance(outcome, CheckOutcome):
                raise TypeError(f"check() returned {type(outcome).__name__}, not CheckOutcome")
        except Exception as exc:
            log.debug("check of %s raised", req.id, exc_info=True)
            outcome = CheckOutcome(
                Status.ERROR, f"{req.kind} check raised an unexpected {_one_line(exc)}"
            )
        else:
            outcome = _capped(outcome, self.engine.options.evidence_limit)
            if self._store is not None and req.check.is_cacheable():
                self._fresh[req.id] = _outcome_json(outcome)
        return outcome, time.perf_counter() - start

    def _dependency_note(self, req: Requirement) -> str:
        red = []
        for dep in req.depends_on:
            done = self._results.get(dep)
            if done is not None and not done.passed:
                verb = "failed" if done.status is Status.FAILED else "errored"
                red.append(f"{dep}, which {verb}")
        if not red:
            return ""
        return f" (depends on {'; '.join(red)})"


def check_drift(
    spec: Spec,
    root: Path,
    *,
    runner: CommandRunner | None = None,
    only: Iterable[str] | None = None,
    options: EngineOptions | None = None,
) -> DriftReport:
    """Evaluate every requirement of ``spec`` against the tree at ``root``.

    Args:
        spec: a validated Spec (see :func:`chimera.spec.loader.load_spec`).
        root: the repository root; paths in the Spec are relative to it.
        runner: runs ``command`` checks; default :class:`chimera.runner.LocalRunner`.
        only: evaluate just these ids (others are not reported).
        options: engine limits (see :class:`chimera.spec.engine.EngineOptions`).

    Returns:
        A DriftReport with one result per requirement, in spec order. Never raises for a
        requirement that cannot be evaluated: that requirement's status is ``error``.

    Raises:
        KeyError: ``only`` names an id that is not in the Spec.
        UsageError: ``root`` is not a directory.
    """
    return DriftSession(spec, root, runner=runner, options=options).report(only)
