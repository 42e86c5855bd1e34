"""ProjectOrchestrator killed at the exact points between its durable steps, then resumed.

A "kill" is an exception raised from inside a real part (the snapshot adapter, the solver)
at the chosen instant: nothing after it runs, as with ``kill -9``. The parts are real: git
repositories, WorkspaceGuard snapshots, the audit log and the run store.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chimera.core.workspace import WorkspaceGuard
from chimera.errors import UsageError
from chimera.governance.audit import AuditLog, verify_audit_log
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.graph import Card
from chimera.orchestration.project import CardOutcome, ProjectOrchestrator
from chimera.orchestration.state import RunState, RunStatus, RunStore
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec
from chimera.spec.model import Requirement

SPEC = """\
requirements:
  - id: greet
    defines: {path: app/greet.py, symbol: greet, kind: function}
  - id: readme
    depends_on: [greet]
    contains: {path: README.md, pattern: 'greet()', regex: false}
"""

GREET = "def greet():\n    return 'hi'\n"


class Killed(BaseException):
    """The process 'dies' here (BaseException: nothing on the way catches it)."""


@dataclass
class Solver:
    """Writes each card's change; ``fail`` makes a card's first solve fail."""

    root: Path
    fail: set[str] = field(default_factory=set)
    calls: list[str] = field(default_factory=list)
    position: int = 0

    def solve_card(
        self, card: Card, requirement: Requirement, *, state: RunState, **_: object
    ) -> CardOutcome:
        self.calls.append(card.id)
        self.position += 1
        if card.id in self.fail:
            self.fail.discard(card.id)
            (self.root / "app" / "greet.py").write_text("def gree")
            return CardOutcome("failed", attempts=1, summary="gave up")
        if requirement.id == "greet":
            (self.root / "app" / "greet.py").write_text(GREET)
        else:
            readme = self.root / "README.md"
            readme.write_text(readme.read_text() + "Call greet().\n")
        return CardOutcome("solved", attempts=1)

    def checkpoint(self) -> int | None:
        return self.position

    def rewind(self, position: int | None) -> None:
        if position is not None:
            self.position = position


class KillingSnapshots(GuardSnapshots):
    """GuardSnapshots that die right after the n-th call of ``method`` completes."""

    def __init__(self, root: Path, store: Path, method: str = "", nth: int = 1) -> None:
        super().__init__(WorkspaceGuard(root, store))
        self.method = method
        self.nth = nth

    def _maybe_die(self, method: str) -> None:
        if method == self.method:
            self.nth -= 1
            if self.nth == 0:
                raise Killed(method)

    def discard(self, snapshot_id: str) -> None:
        super().discard(snapshot_id)
        self._maybe_die("discard")

    def restore(self, snapshot_id: str) -> None:
        super().restore(snapshot_id)
        self._maybe_die("restore")


def git_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "app.yaml").write_text(SPEC)
    (root / "README.md").write_text("# demo\n")
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    return root


def orchestrator(
    root: Path,
    solver: Solver,
    make: Callable[[Path, Path], GuardSnapshots] = lambda r, s: GuardSnapshots(
        WorkspaceGuard(r, s)
    ),
) -> tuple[ProjectOrchestrator, AuditLog]:
    store = RunStore(root)
    run_dir = store.run_dir("r")
    audit = AuditLog(run_dir / "audit.jsonl", "r")
    orch = ProjectOrchestrator(
        root=root,
        spec_paths=["specs"],
        solver=solver,
        snapshots=make(root, run_dir / "snapshots"),
        runner=LocalRunner(),
        store=store,
        audit=audit,
        load_spec=load_spec,
    )
    return orch, audit


def events(audit: AuditLog) -> list[dict[str, Any]]:
    return [json.loads(line) for line in audit.path.read_text().splitlines()]


def assert_reference_end(root: Path, state: RunState, audit: AuditLog) -> None:
    assert state.status is RunStatus.DONE
    assert state.final_results == {"greet": "passed", "readme": "passed"}
    assert (root / "app" / "greet.py").read_text() == GREET
    assert (root / "README.md").read_text().count("Call greet().") == 1
    assert verify_audit_log(audit.path, head=state.audit_head).ok


@pytest.mark.parametrize("nth", [1, 2])
def test_kill_right_after_an_accepted_cards_snapshot_is_discarded(tmp_path: Path, nth: int) -> None:
    # Before the fix the snapshot was discarded before the state saying "no card in flight"
    # was written: the saved state kept a card in flight with no snapshot, and resume died
    # with "no snapshot ... in snapshots".
    root = git_repo(tmp_path)
    solver = Solver(root)
    orch, _ = orchestrator(
        root, solver, lambda r, s: KillingSnapshots(r, s, method="discard", nth=nth)
    )
    with pytest.raises(Killed):
        orch.start(run_id="r", task=None, started_by="alice")

    orch2, audit = orchestrator(root, solver)
    state = orch2.resume("r")
    assert_reference_end(root, state, audit)
    assert solver.calls == ["greet", "readme"]  # no card solved twice
    assert not any(e["event"] == "resumed" and e["fields"]["retry"] for e in events(audit))


def test_kill_after_a_failed_cards_revert_then_resume(tmp_path: Path) -> None:
    root = git_repo(tmp_path)
    solver = Solver(root, fail={"greet"})
    orch, _ = orchestrator(root, solver, lambda r, s: KillingSnapshots(r, s, method="restore"))
    with pytest.raises(Killed):
        orch.start(run_id="r", task=None, started_by="alice")
    saved = RunStore(root).load("r")
    assert saved.in_flight is not None and saved.in_flight.card_id == "greet"

    orch2, audit = orchestrator(root, solver)
    state = orch2.resume("r")
    assert_reference_end(root, state, audit)
    resumed = [e for e in events(audit) if e["event"] == "resumed"]
    assert resumed[-1]["fields"]["card"] == "greet" and resumed[-1]["fields"]["retry"] is True
    # The in-flight card's snapshot is discarded once the resumed state no longer needs it.
    assert not list((RunStore(root).run_dir("r") / "snapshots").glob("*.json"))


def test_resume_clears_git_locks_a_killed_process_left(tmp_path: Path) -> None:
    root = git_repo(tmp_path)
    solver = Solver(root)

    def crash(card: Card, requirement: Requirement, *, state: RunState, **_: object) -> CardOutcome:
        (root / "app" / "greet.py").write_text("def gre")
        raise Killed

    orch, _ = orchestrator(root, solver)
    crashing = {"solve_card": staticmethod(crash), "checkpoint": lambda s: 0}
    orch.kit.solver = type("S", (), crashing)()
    with pytest.raises(Killed):
        orch.start(run_id="r", task=None, started_by="alice")
    store = RunStore(root).run_dir("r") / "snapshots"
    # What a `kill -9` during the next `git add` / `git write-tree` in the store leaves.
    (store / "current.index.lock").write_bytes(b"")
    (store / "git" / "HEAD.lock").write_bytes(b"")

    orch2, audit = orchestrator(root, solver)
    state = orch2.resume("r")
    assert_reference_end(root, state, audit)
    cleared = [e for e in events(audit) if e["event"] == "stale_files_cleared"]
    assert cleared[0]["fields"]["files"] == ["current.index.lock", "git/HEAD.lock"]


def test_a_run_is_worked_on_by_one_process_at_a_time(tmp_path: Path) -> None:
    root = git_repo(tmp_path)
    solver = Solver(root, fail={"greet"})
    orch, _ = orchestrator(root, solver)
    with RunStore(root).lock("r"), pytest.raises(UsageError, match="in progress"):
        orch.start(run_id="r", task=None, started_by="alice")
    assert not (RunStore(root).run_dir("r") / "audit.jsonl").exists() or not events(
        AuditLog(RunStore(root).run_dir("r") / "audit.jsonl", "r")
    )
    # Released when the holder is done (and by the kernel when a holder dies).
    state = orch.start(run_id="r", task=None, started_by="alice")
    assert state.status is RunStatus.FAILED  # greet's one solve failed; nothing else ran
    with RunStore(root).lock("r"), pytest.raises(UsageError, match="in progress"):
        orch.resume("r")
