"""A run with a Basis iterates on the change in its work tree: the goal is judged against the
basis commit (acceptance red there, protection from there), the first card is attempted
although its requirement already passes on the tree, and an acceptance file an earlier round
wrote is carried, not written twice."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from chimera.core.workspace import WorkspaceGuard
from chimera.errors import ChimeraError
from chimera.governance.audit import AuditLog
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.basis import Basis, basis_tree, block_ids
from chimera.orchestration.graph import Card
from chimera.orchestration.project import CardOutcome, OrchestratorOptions, ProjectOrchestrator
from chimera.orchestration.state import RunStatus, RunStore, StopReason
from chimera.runner import LocalRunner
from chimera.sandbox import Sandbox, bwrap_available, probe_bwrap
from chimera.spec.loader import load_spec
from chimera.spec.model import Requirement
from chimera.spec.results import DriftReport

BASE = "requirements:\n  - id: has-readme\n    contains: {path: README.md, pattern: demo}\n"
BLOCK = "requirements:\n  - id: cart-a\n    contains: {path: cart.txt, pattern: 'a'}\n"
TASK = f"Fill the cart.\n\n```chimera\n{BLOCK}```\n\nFeedback: say it twice."
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]


@dataclass
class Solver:
    """Appends ``a`` to cart.txt; records what each card's base report said of its target."""

    root: Path
    seen: list[tuple[str, str]] = field(default_factory=list)

    def solve_card(
        self, card: Card, requirement: Requirement, *, base: DriftReport, **_: object
    ) -> CardOutcome:
        self.seen.append((card.id, base.by_id()[requirement.id].status.value))
        path = self.root / "cart.txt"
        path.write_text(path.read_text() + "a again\n")
        return CardOutcome("solved", attempts=1)

    def checkpoint(self) -> int | None:
        return None

    def rewind(self, position: int | None) -> None:
        return None


def commit(root: Path, message: str) -> str:
    for cmd in (["add", "-A"], ["commit", "-qm", message]):
        subprocess.run([*GIT, *cmd], cwd=root, check=True, capture_output=True)
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return out.stdout.strip()


def repo(tmp_path: Path) -> tuple[Path, str]:
    """A base commit, then the earlier round's change on top (cart.txt and its acceptance)."""
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "app.yaml").write_text(BASE)
    (root / "README.md").write_text("# demo\n")
    (root / ".gitignore").write_text(".chimera/\n")
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True, capture_output=True)
    base = commit(root, "base")
    (root / "cart.txt").write_text("a\n")
    (root / "specs" / "task-round1.yaml").write_text(BLOCK)
    commit(root, "round one")
    return root, base


def orchestrator(root: Path, basis: Basis | None) -> tuple[ProjectOrchestrator, Solver]:
    store = RunStore(root)
    run_dir = store.run_dir("r")
    solver = Solver(root)
    orch = ProjectOrchestrator(
        root=root,
        spec_paths=["specs"],
        solver=solver,
        snapshots=GuardSnapshots(WorkspaceGuard(root, run_dir / "snapshots")),
        runner=LocalRunner(),
        store=store,
        audit=AuditLog(run_dir / "audit.jsonl", "r"),
        load_spec=load_spec,
        options=OrchestratorOptions(task_spec_name="task-round2.yaml", basis=basis),
    )
    return orch, solver


def test_the_goal_is_judged_against_the_basis_and_the_first_card_runs(tmp_path: Path) -> None:
    root, base = repo(tmp_path)
    orch, solver = orchestrator(root, Basis(base))
    state = orch.start(run_id="r", task=TASK, started_by="bob", untrusted=True)
    assert state.status is RunStatus.DONE, state.stop_detail
    # Red on the basis (cart.txt missing), though it passes on the tree the run started from.
    assert state.acceptance_ids == ["cart-a"] and "cart-a" in state.base_red
    assert state.base_green == ["has-readme"]
    assert state.extra["basis_commit"] == base
    # The card was attempted, told its target is red (the basis's verdict).
    assert solver.seen == [("cart-a", "failed")]
    assert (root / "cart.txt").read_text() == "a\na again\n"
    # The earlier round's acceptance file is carried; no second file with the same ids.
    assert not (root / "specs" / "task-round2.yaml").exists()
    lines = (root / ".chimera" / "runs" / "r" / "audit.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["fields"]["ids"] for e in events if e["event"] == "acceptance_carried"] == [
        ["cart-a"]
    ]
    assert any(e["fields"].get("basis") == base for e in events if e["event"] == "check_drift")
    # The basis worktree is gone again.
    assert not any((root / ".chimera" / "basis").iterdir())


def test_without_a_basis_the_same_tree_has_nothing_left_to_do(tmp_path: Path) -> None:
    root, _base = repo(tmp_path)
    orch, solver = orchestrator(root, None)
    state = orch.start(run_id="r", task=TASK, started_by="bob", untrusted=True)
    # The acceptance clashes with the tree's own copy: nothing is attempted.
    assert state.status is RunStatus.FAILED and state.stop_reason is StopReason.REJECTED_GOAL
    assert solver.seen == []


def test_basis_tree_and_bad_commits(tmp_path: Path) -> None:
    root, base = repo(tmp_path)
    with basis_tree(root, base) as tree:
        assert not (tree / "cart.txt").exists() and (tree / "README.md").is_file()
    assert not tree.exists()
    with pytest.raises(ChimeraError, match="rev-parse"):
        Basis("0" * 40).report(root, load_spec([root / "specs"]), runner=LocalRunner())
    for bad in ("", "--output=x", "a..b", "has space"):
        with pytest.raises(ValueError, match="not a commit"):
            Basis(bad)


def test_block_ids() -> None:
    assert block_ids([BLOCK, "- id: two\n  contains: {path: x, pattern: y}\n"]) == [
        "cart-a",
        "two",
    ]
    assert block_ids(["not: [a list"]) is None
    assert block_ids(["just a string"]) is None


def test_command_checks_of_the_base_report_run_in_the_basis_tree(tmp_path: Path) -> None:
    root, base = repo(tmp_path)
    spec_file = root / "specs" / "cmd.yaml"
    spec_file.write_text(
        "requirements:\n  - id: cart-file\n    command: {run: 'test -f cart.txt', timeout: 30}\n"
    )
    spec = load_spec([root / "specs"])
    on_tree = Basis(git_head(root)).report(root, spec, runner=LocalRunner(), only=["cart-file"])
    on_base = Basis(base).report(root, spec, runner=LocalRunner(), only=["cart-file"])
    assert on_tree.by_id()["cart-file"].passed
    assert not on_base.by_id()["cart-file"].passed


def git_head(root: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return out.stdout.strip()


@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}")
def test_the_basis_tree_is_judged_inside_the_real_sandbox(tmp_path: Path) -> None:
    root, base = repo(tmp_path)
    (root / "specs" / "cmd.yaml").write_text(
        "requirements:\n  - id: cart-file\n    command: {run: 'test -f cart.txt', timeout: 30}\n"
    )
    spec = load_spec([root / "specs"])
    sandbox = Sandbox(root, mode="bwrap")
    on_base = Basis(base).report(root, spec, runner=sandbox, only=["cart-file"])
    on_tree = Basis(git_head(root)).report(root, spec, runner=sandbox, only=["cart-file"])
    assert on_tree.by_id()["cart-file"].passed, on_tree.by_id()["cart-file"].message
    assert not on_base.by_id()["cart-file"].passed
