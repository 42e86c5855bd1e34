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

import logging
import time
from collections.abc import Iterable
from pathlib import Path

from chimera.errors import UsageError
from chimera.runner import CommandRunner, LocalRunner, check_runner
from chimera.spec.engine import EngineOptions, EngineSession, EngineStats
from chimera.spec.engine.files import ReadBytes
from chimera.spec.model import CheckOutcome, Requirement, Spec, Status
from chimera.spec.results import DriftReport, RequirementResult

log = logging.getLogger(__name__)

__all__ = ["DriftSession", "check_drift"]


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
            if rid in self._results:
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
        result = RequirementResult(req, outcome.status, message, outcome.evidence, duration)
        self._results[rid] = result
        return result

    def report(self, ids: Iterable[str] | None = None) -> DriftReport:
        """Results of these requirements (all when ``None``), in spec order.

        Raises:
            KeyError: an id is not in the Spec.
        """
        wanted = set(self._ids(ids))
        self.prepare(wanted)
        return DriftReport(tuple(self.result(rid) for rid in self._order if rid in wanted))

    def _evaluate(self, req: Requirement) -> tuple[CheckOutcome, float]:
        start = time.perf_counter()
        try:
            outcome = req.check.check(self.engine)
            if not isinstance(outcome, CheckOutcome):
                raise TypeError(f"check() returned {type(outcome).__name__}, not CheckOutcome")
        except Exception as exc:
            log.debug("check of %s raised", req.id, exc_info=True)
            outcome = CheckOutcome(
                Status.ERROR, f"{req.kind} check raised an unexpected {_one_line(exc)}"
            )
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
