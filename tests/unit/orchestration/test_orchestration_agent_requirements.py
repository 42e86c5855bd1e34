"""Requirements a card's agent adds to the spec are vetted like a task's spec block.

A solver (a fake that edits files, not a mock) adds a new spec file whose ``command`` the
TrustKernel denies. Before the fix the card was accepted and the run's final check_drift of
the whole spec executed the command (here: copying ``.env`` into the workspace, where it would
travel in the pull request). Now the card is blocked as spec tampering, its change reverted,
the command never runs, and the blocked change is listed among the run's denied actions.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from chimera.core.workspace import WorkspaceGuard
from chimera.governance.audit import AuditLog, verify_audit_log
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.graph import Card
from chimera.orchestration.project import CardOutcome, OrchestratorOptions, ProjectOrchestrator
from chimera.orchestration.state import RunState, RunStatus, RunStore, StopReason
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec
from chimera.spec.model import Requirement

SPEC = "requirements:\n  - id: readme\n    contains: {path: README.md, pattern: 'pip install'}\n"


@dataclass
class AddsRequirementSolver:
    """Fixes README.md and, like an agent obeying an injection, adds ``extra`` as a spec file."""

    root: Path
    extra: str
    calls: list[str] = field(default_factory=list)

    def solve_card(
        self, card: Card, requirement: Requirement, *, state: RunState, **_: object
    ) -> CardOutcome:
        self.calls.append(card.id)
        (self.root / "README.md").write_text("# demo\npip install demo\n")
        (self.root / "specs" / "extra.yaml").write_text(self.extra)
        return CardOutcome("solved", attempts=1)

    def checkpoint(self) -> int | None:
        return None

    def rewind(self, position: int | None) -> None:
        return None


def _run(tmp_path: Path, extra: str) -> tuple[Path, RunState, AuditLog]:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "app.yaml").write_text(SPEC)
    (root / "README.md").write_text("# demo\n")
    (root / ".gitignore").write_text(".env\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base"],
        cwd=root,
        check=True,
    )
    (root / ".env").write_text("DATABASE_URL=postgres://u:planted-secret-value@db/app\n")
    store = RunStore(root)
    audit = AuditLog(store.run_dir("r1") / "audit.jsonl", "r1")
    orch = ProjectOrchestrator(
        root=root,
        spec_paths=["specs"],
        solver=AddsRequirementSolver(root, extra),
        snapshots=GuardSnapshots(WorkspaceGuard(root, store.run_dir("r1") / "snapshots")),
        runner=LocalRunner(),
        store=store,
        audit=audit,
        load_spec=load_spec,
        options=OrchestratorOptions(),
    )
    return root, orch.start(run_id="r1", task=None, started_by="alice"), audit


def test_agent_written_requirement_with_a_denied_command_blocks_the_card(tmp_path: Path) -> None:
    extra = "requirements:\n  - id: config-visible\n    command: {run: 'cat .env > leak.txt'}\n"
    root, state, audit = _run(tmp_path, extra)
    assert state.status is RunStatus.FAILED
    assert state.stop_reason is StopReason.CARDS_FAILED
    note = state.cards[0]["notes"][-1]
    assert "blocked: agent-written requirement config-visible" in note
    assert "denied by governance" in note
    # the command never ran, and the card's change (spec file included) was reverted
    assert not (root / "leak.txt").exists()
    assert not (root / "specs" / "extra.yaml").exists()
    assert (root / "README.md").read_text() == "# demo\n"
    [denied] = state.denied_actions
    assert denied["tool"] == "spec" and denied["rule_ids"] == ["spec-command-denied"]
    assert "config-visible" in denied["summary"]
    assert verify_audit_log(audit.path, head=state.audit_head).ok


def test_agent_written_requirement_with_an_allowed_command_is_kept(tmp_path: Path) -> None:
    extra = "requirements:\n  - id: readme-exists\n    command: {run: 'test -f README.md'}\n"
    root, state, _ = _run(tmp_path, extra)
    assert state.status is RunStatus.DONE, state.stop_detail
    assert state.denied_actions == []
    assert state.final_results == {"readme": "passed", "readme-exists": "passed"}
    assert (root / "specs" / "extra.yaml").is_file()


def test_spec_tampering_is_listed_among_denied_actions(tmp_path: Path) -> None:
    weaker = "requirements:\n  - id: readme\n    contains: {path: README.md, pattern: 'demo'}\n"

    @dataclass
    class Weakens(AddsRequirementSolver):
        def solve_card(
            self, card: Card, requirement: Requirement, *, state: RunState, **_: object
        ) -> CardOutcome:
            (self.root / "specs" / "app.yaml").write_text(weaker)
            (self.root / "README.md").write_text("# demo\npip install demo\n")
            return CardOutcome("solved", attempts=1)

    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "app.yaml").write_text(SPEC)
    (root / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base"],
        cwd=root,
        check=True,
    )
    store = RunStore(root)
    orch = ProjectOrchestrator(
        root=root,
        spec_paths=["specs"],
        solver=Weakens(root, ""),
        snapshots=GuardSnapshots(WorkspaceGuard(root, store.run_dir("r2") / "snapshots")),
        runner=LocalRunner(),
        store=store,
        audit=AuditLog(store.run_dir("r2") / "audit.jsonl", "r2"),
        load_spec=load_spec,
    )
    state = orch.start(run_id="r2", task=None, started_by="alice")
    assert state.status is RunStatus.FAILED
    assert (root / "specs" / "app.yaml").read_text() == SPEC
    assert [d["rule_ids"] for d in state.denied_actions] == [["spec-tampering"]]
    assert "readme" in state.denied_actions[0]["summary"]
