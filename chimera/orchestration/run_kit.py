"""The RunKit a ProjectOrchestrator hands its goal setter and card loop: the run's
collaborators and plumbing — events, Spec loading and checks, state saves, the clock, the run
lock and the stop (:mod:`chimera.orchestration.project`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chimera.orchestration.basis import BASIS_KEY, Basis
from chimera.orchestration.collaborators import (
    AcceptanceWriter,
    AuditSink,
    CardSolver,
    OrchestratorOptions,
    Snapshots,
    SpecLoader,
)
from chimera.orchestration.graph import TaskGraph
from chimera.orchestration.state import RunState, RunStatus, RunStore, StopReason
from chimera.runner import CommandRunner
from chimera.spec.drift import check_drift
from chimera.spec.model import Spec
from chimera.spec.results import DriftReport, RequirementResult


class RunKit:
    """What the orchestrator, its goal setter and its card loop share;
    :class:`~chimera.orchestration.project.ProjectOrchestrator` documents the arguments."""

    def __init__(
        self,
        *,
        root: Path,
        spec_paths: Sequence[str],
        solver: CardSolver,
        snapshots: Snapshots,
        runner: CommandRunner,
        store: RunStore,
        audit: AuditSink,
        load_spec: SpecLoader,
        options: OrchestratorOptions | None = None,
        acceptance_writer: AcceptanceWriter | None = None,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.root = root
        self.spec_paths = list(spec_paths)
        self.solver = solver
        self.snapshots = snapshots
        self.runner = runner
        self.store = store
        self.audit = audit
        self.load_spec = load_spec
        self.options = options or OrchestratorOptions()
        self.acceptance_writer = acceptance_writer
        self.on_event = on_event
        self._started = time.monotonic()
        self._elapsed_before = 0.0
        self.basis_red: dict[str, RequirementResult] = {}
        """Requirements red on the basis commit (this process's base checks), by id."""

    def restart_clock(self, elapsed_before: float) -> None:
        """Count wall time from now on top of ``elapsed_before`` seconds (a resumed run's)."""
        self._elapsed_before = elapsed_before
        self._started = time.monotonic()

    def elapsed(self) -> float:
        """Seconds the run has worked, over every process that worked on it."""
        return self._elapsed_before + (time.monotonic() - self._started)

    def emit(self, event: str, **fields: Any) -> None:
        """Append ``event`` to the audit log and tell the progress callback."""
        self.audit.append(event, **fields)
        if self.on_event is not None:
            self.on_event(event, fields)

    def spec(self) -> Spec:
        """The Spec of ``spec_paths`` as it is now.

        Raises:
            SpecError: it does not load.
        """
        return self.load_spec([self.root / p for p in self.spec_paths])

    def drift(self, spec: Spec, ids: Sequence[str] | None = None) -> DriftReport:
        """``check_drift`` of ``ids`` (all when ``None``) on the work tree, audited."""
        report = check_drift(
            spec, self.root, runner=self.runner, only=ids, options=self.options.check_options
        )
        self.emit(
            "check_drift",
            counts=report.counts(),
            red={r.id: r.status.value for r in report.red},
        )
        return report

    def base_drift(
        self, state: RunState, spec: Spec, ids: Sequence[str] | None = None
    ) -> DriftReport:
        """The base report: the work tree now, or the basis commit's tree when iterating."""
        commit = state.extra.get(BASIS_KEY)
        if not commit:
            return self.drift(spec, ids)
        report = Basis(str(commit)).report(
            self.root, spec, runner=self.runner, only=ids, options=self.options.check_options
        )
        self.basis_red.update({r.id: r for r in report.red})
        red = {r.id: r.status.value for r in report.red}
        self.emit("check_drift", counts=report.counts(), red=red, basis=commit)
        return report

    def save(self, state: RunState, graph: TaskGraph) -> None:
        """Write the run state with its cards, time worked and audit head (atomically)."""
        state.cards = graph.to_json()
        state.elapsed_s = self.elapsed()
        state.audit_head = self.audit.head_hash
        self.store.save(state)

    @contextmanager
    def owning(self, run_id: str) -> Iterator[None]:
        """Hold the run lock; clear a dead process's leftovers in the snapshot store first."""
        with self.store.lock(run_id):
            cleared = self.snapshots.recover()
            if cleared:
                self.emit("stale_files_cleared", store="snapshots", files=cleared)
            yield

    def stop(
        self,
        state: RunState,
        graph: TaskGraph,
        status: RunStatus,
        reason: StopReason,
        detail: str,
    ) -> RunState:
        """End the run with ``status`` for ``reason`` (the suspicion line appended); saved."""
        state.status = status
        state.stop_reason = reason
        line = _suspicion_line(state)
        state.stop_detail = detail + (f"\n  {line}" if line else "")
        self.emit("run_stopped", status=status.value, reason=reason.value, detail=detail)
        self.save(state, graph)
        return state


_LEVELS = ("none", "low", "medium", "high")


def _suspicion_line(state: RunState) -> str:
    """The run's suspicion line: the most suspicious card's (``""`` when no card has one)."""
    lines = [str(v) for v in state.extra.get("suspicion", {}).values()]

    def level(line: str) -> int:
        word = line.removeprefix("suspicion: ").split(" ", 1)[0]
        return _LEVELS.index(word) if word in _LEVELS else 0

    return max(lines, key=level) if lines else ""
