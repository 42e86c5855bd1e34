"""Requirements from a task's ```chimera block are scheduled like the base spec's own.

Each behaviour is checked twice, on the same requirements: once written in the base spec (a
repair run), once in the task's block (a task run, the path every issue takes in the
Action). ``risk: high`` pauses for a human, ``depends_on`` orders the cards, and the goal's
to-do list names the work before any card runs.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chimera.core.workspace import WorkspaceGuard
from chimera.governance.audit import AuditLog
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.graph import Card
from chimera.orchestration.project import CardOutcome, OrchestratorOptions, ProjectOrchestrator
from chimera.orchestration.state import RunState, RunStatus, RunStore, StopReason
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec
from chimera.spec.model import Requirement

BASE = "requirements:\n  - id: has-readme\n    contains: {path: README.md, pattern: demo}\n"

# cart-b is listed first but depends on cart-a; cart-r is risky.
REQS = """\
  - id: cart-b
    depends_on: [cart-a]
    contains: {path: cart.txt, pattern: 'b'}
  - id: cart-a
    contains: {path: cart.txt, pattern: 'a'}
  - id: cart-r
    risk: high
    contains: {path: risky.txt, pattern: 'r'}
"""

WHERE = ["base", "task"]


@dataclass
class AppendSolver:
    """Appends the letter a card's requirement searches for to the file it names."""

    root: Path
    calls: list[str] = field(default_factory=list)

    def solve_card(
        self, card: Card, requirement: Requirement, *, state: RunState, **_: object
    ) -> CardOutcome:
        self.calls.append(card.id)
        check: Any = requirement.check
        path = self.root / check.path
        path.write_text((path.read_text() if path.exists() else "") + check.pattern + "\n")
        return CardOutcome("solved", attempts=1)

    def checkpoint(self) -> int | None:
        return None

    def rewind(self, position: int | None) -> None:
        return None


def setup(tmp_path: Path, where: str) -> tuple[ProjectOrchestrator, AppendSolver, str | None]:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    spec = BASE + (REQS if where == "base" else "")
    (root / "specs" / "app.yaml").write_text(spec)
    (root / "README.md").write_text("# demo\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    store = RunStore(root)
    run_dir = store.run_dir("r")
    solver = AppendSolver(root)
    orch = ProjectOrchestrator(
        root=root,
        spec_paths=["specs"],
        solver=solver,
        snapshots=GuardSnapshots(WorkspaceGuard(root, run_dir / "snapshots")),
        runner=LocalRunner(),
        store=store,
        audit=AuditLog(run_dir / "audit.jsonl", "r"),
        load_spec=load_spec,
        options=OrchestratorOptions(task_spec_name="task.yaml"),
    )
    task = f"Fill the cart.\n\n```chimera\nrequirements:\n{REQS}```\n" if where == "task" else None
    return orch, solver, task


def audit_events(root: Path, name: str) -> list[dict[str, Any]]:
    lines = (root / ".chimera" / "runs" / "r" / "audit.jsonl").read_text().splitlines()
    return [e["fields"] for e in map(json.loads, lines) if e["event"] == name]


@pytest.mark.parametrize("where", WHERE)
def test_a_risky_requirement_pauses_for_approval(tmp_path: Path, where: str) -> None:
    orch, _solver, task = setup(tmp_path, where)
    state = orch.start(run_id="r", task=task, started_by="alice")
    assert state.status is RunStatus.AWAITING_APPROVAL, state.stop_detail
    assert state.stop_reason is StopReason.HUMAN_CHECKPOINT
    assert state.pending_approval == ["cart-r"]
    cards = {c["id"]: c for c in state.cards}
    assert cards["cart-r"]["risky"] is True
    assert cards["cart-r"]["risk_reasons"] == ["requirement is risk: high"]
    done = orch.approve("r", by="bob")
    assert done.status is RunStatus.DONE, done.stop_detail


@pytest.mark.parametrize("where", WHERE)
def test_depends_on_orders_the_cards(tmp_path: Path, where: str) -> None:
    orch, solver, task = setup(tmp_path, where)
    orch.start(run_id="r", task=task, started_by="alice")
    # cart-a before cart-b (its dependency), the risky card last.
    assert solver.calls == ["cart-a", "cart-b", "cart-r"]
    cards = {c["id"]: c for c in RunStore(orch.kit.root).load("r").cards}
    assert cards["cart-b"]["depends_on"] == ["cart-a"]


@pytest.mark.parametrize("where", WHERE)
def test_the_goal_names_the_work_before_a_card_runs(tmp_path: Path, where: str) -> None:
    orch, _solver, task = setup(tmp_path, where)
    lines: list[str] = []
    from chimera.cli._progress import progress_line

    orch.kit.on_event = lambda e, f: lines.append(progress_line(e, f) or "")
    orch.start(run_id="r", task=task, started_by="alice")
    (goal,) = audit_events(orch.kit.root, "goal")
    assert sorted(goal["unmet"]) == ["cart-a", "cart-b", "cart-r"]
    shown = next(line for line in lines if line.startswith("chimera: goal"))
    assert "to do: nothing" not in shown and "cart-a" in shown
    # Every card exists from the start: none is spawned after the fact.
    assert audit_events(orch.kit.root, "cards_spawned") == []


def test_a_respawned_card_of_a_risky_requirement_stays_risky() -> None:
    from chimera.orchestration.graph import TaskGraph

    graph = TaskGraph([Card(id="x", requirement_id="x", risky=True)])
    again = graph.respawn("x", risky=True)
    assert again.id == "x#2" and again.risky
    assert again.risk_reasons == ["requirement is risk: high"]
    assert not graph.respawn("y").risky
