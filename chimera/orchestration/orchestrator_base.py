"""The ProjectOrchestrator's state and plumbing: events, Spec loading and checks, state saves,
the run lock and the stop (:mod:`chimera.orchestration.project`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pathspec

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


class OrchestratorBase:
    """The orchestrator's state and plumbing;
    :class:`~chimera.orchestration.project.ProjectOrchestrator`
    documents the constructor's arguments."""

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
        self._load_spec = load_spec
        self.options = options or OrchestratorOptions()
        self.acceptance_writer = acceptance_writer
        self.on_event = on_event
        self._risk_spec = pathspec.GitIgnoreSpec.from_lines(self.options.high_risk_paths)
        self._started = time.monotonic()
        self._elapsed_before = 0.0
        # Requirements red on the basis commit (this process's base checks), by id.
        self._basis_red: dict[str, RequirementResult] = {}

    def _emit(self, event: str, **fields: Any) -> None:
        self.audit.append(event, **fields)
        if self.on_event is not None:
            self.on_event(event, fields)

    def _spec(self) -> Spec:
        return self._load_spec([self.root / p for p in self.spec_paths])

    def _drift(self, spec: Spec, ids: Sequence[str] | None = None) -> DriftReport:
        report = check_drift(
            spec, self.root, runner=self.runner, only=ids, options=self.options.check_options
        )
        self._emit(
            "check_drift",
            counts=report.counts(),
            red={r.id: r.status.value for r in report.red},
        )
        return report

    def _base_drift(
        self, state: RunState, spec: Spec, ids: Sequence[str] | None = None
    ) -> DriftReport:
        """The base report: the work tree now, or the basis commit's tree when iterating."""
        commit = state.extra.get(BASIS_KEY)
        if not commit:
            return self._drift(spec, ids)
        report = Basis(str(commit)).report(
            self.root, spec, runner=self.runner, only=ids, options=self.options.check_options
        )
        self._basis_red.update({r.id: r for r in report.red})
        red = {r.id: r.status.value for r in report.red}
        self._emit("check_drift", counts=report.counts(), red=red, basis=commit)
        return report

    def _save(self, state: RunState, graph: TaskGraph) -> None:
        state.cards = graph.to_json()
        state.elapsed_s = self._elapsed_before + (time.monotonic() - self._started)
        state.audit_head = self.audit.head_hash
        self.store.save(state)

    @contextmanager
    def _owning(self, run_id: str) -> Iterator[None]:
        """Hold the run lock; clear a dead process's leftovers in the snapshot store first."""
        with self.store.lock(run_id):
            cleared = self.snapshots.recover()
            if cleared:
                self._emit("stale_files_cleared", store="snapshots", files=cleared)
            yield

    def _stop(
        self,
        state: RunState,
        graph: TaskGraph,
        status: RunStatus,
        reason: StopReason,
        detail: str,
    ) -> RunState:
        state.status = status
        state.stop_reason = reason
        line = _suspicion_line(state)
        state.stop_detail = detail + (f"\n  {line}" if line else "")
        self._emit("run_stopped", status=status.value, reason=reason.value, detail=detail)
        self._save(state, graph)
        return state


_LEVELS = ("none", "low", "medium", "high")


def _suspicion_line(state: RunState) -> str:
    """The run's suspicion line: the most suspicious card's (``""`` when no card has one)."""
    lines = [str(v) for v in state.extra.get("suspicion", {}).values()]

    def level(line: str) -> int:
        word = line.removeprefix("suspicion: ").split(" ", 1)[0]
        return _LEVELS.index(word) if word in _LEVELS else 0

    return max(lines, key=level) if lines else ""
