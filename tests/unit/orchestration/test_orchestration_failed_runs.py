"""A run or resume that fails with an error is left ``stopped`` (``crashed``), never
``running``, and can be resumed once the cause is fixed (issue 38, row 1)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from chimera.core.workspace import WorkspaceGuard
from chimera.errors import WorkspaceError
from chimera.governance.audit import AuditLog
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.graph import Card
from chimera.orchestration.project import CardOutcome, ProjectOrchestrator
from chimera.orchestration.state import RunState, RunStatus, RunStore, StopReason
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec
from chimera.spec.model import Requirement

SPEC = """\
requirements:
  - id: greet
    defines: {path: app/greet.py, symbol: greet, kind: function}
"""


@dataclass
class Solver:
    root: Path
    broken: bool = False
    calls: list[str] = field(default_factory=list)

    def solve_card(
        self, card: Card, requirement: Requirement, *, state: RunState, **_: object
    ) -> CardOutcome:
        self.calls.append(card.id)
        (self.root / "app" / "greet.py").write_text("def gre")  # partial work
        if self.broken:
            raise WorkspaceError("git write-tree failed: fatal: disk quota exceeded")
        (self.root / "app" / "greet.py").write_text("def greet():\n    return 'hi'\n")
        return CardOutcome("solved", attempts=1)

    def checkpoint(self) -> int | None:
        return 0

    def rewind(self, position: int | None) -> None:
        pass


class BrokenRestore(GuardSnapshots):
    def restore(self, snapshot_id: str) -> None:
        raise WorkspaceError("git read-tree failed: fatal: index file corrupt")


def git_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "app.yaml").write_text(SPEC)
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    return root


def orchestrator(
    root: Path, solver: Solver, snapshots: type[GuardSnapshots] = GuardSnapshots
) -> ProjectOrchestrator:
    store = RunStore(root)
    run_dir = store.run_dir("r")
    return ProjectOrchestrator(
        root=root,
        spec_paths=["specs"],
        solver=solver,
        snapshots=snapshots(WorkspaceGuard(root, run_dir / "snapshots")),
        runner=LocalRunner(),
        store=store,
        audit=AuditLog(run_dir / "audit.jsonl", "r"),
        load_spec=load_spec,
    )


def test_a_run_that_fails_is_stopped_as_crashed_and_resumes_once_fixed(tmp_path: Path) -> None:
    root = git_repo(tmp_path)
    solver = Solver(root, broken=True)
    with pytest.raises(WorkspaceError, match="disk quota"):
        orchestrator(root, solver).start(run_id="r", task=None, started_by="alice")

    store = RunStore(root)
    state = store.load("r")
    assert state.status is RunStatus.STOPPED
    assert state.stop_reason is StopReason.CRASHED
    assert state.stop_detail is not None
    assert "WorkspaceError: git write-tree failed: fatal: disk quota exceeded" in state.stop_detail
    assert "chimera resume r" in state.stop_detail
    assert store.interrupted() == []  # not "running", so not reported as interrupted
    assert state.in_flight is not None  # resume reverts the card's partial work

    solver.broken = False
    done = orchestrator(root, solver).resume("r")
    assert done.status is RunStatus.DONE
    assert done.final_results == {"greet": "passed"}
    assert solver.calls == ["greet", "greet"]


def test_a_resume_that_fails_is_not_left_running(tmp_path: Path) -> None:
    root = git_repo(tmp_path)
    solver = Solver(root, broken=True)
    with pytest.raises(WorkspaceError):
        orchestrator(root, solver).start(run_id="r", task=None, started_by="alice")
    solver.broken = False
    with pytest.raises(WorkspaceError, match="index file corrupt"):
        orchestrator(root, solver, BrokenRestore).resume("r")
    state = RunStore(root).load("r")
    assert state.status is RunStatus.STOPPED
    assert state.stop_reason is StopReason.CRASHED
    assert state.stop_detail is not None and "index file corrupt" in state.stop_detail
    assert state.in_flight is not None
