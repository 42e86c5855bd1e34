"""A card interrupted mid-solve continues its attempt record on resume.

Real parts: the ProjectOrchestrator, the AgentCardSolver and AutonomousAgent, git snapshots,
the run store and the audit log; the model is scripted. The "kill" is an exception raised
from inside the model call of the chosen turn (nothing after it runs, as with ``kill -9``).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from chimera.config import AgentConfig
from chimera.core.attempts import HISTORY_HEADING
from chimera.core.autonomous import AutonomousAgent
from chimera.core.deps import AgentDeps, ReplayCursor
from chimera.core.workspace import WorkspaceGuard
from chimera.governance.audit import AuditLog, verify_audit_log
from chimera.governance.guard import Guard
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.project import ProjectOrchestrator
from chimera.orchestration.solver import AgentBuilder, AgentCardSolver
from chimera.orchestration.state import RunStatus, RunStore
from chimera.protocols import Completion, Message, Purpose, ToolSchema
from chimera.providers import ScriptedBackend
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec
from chimera.spec.model import Spec

SPEC = "requirements:\n  - id: total\n    defines: {path: calc.py, symbol: total, kind: function}\n"
CALC = "def add(a, b):\n    return a + b\n"


class Killed(BaseException):
    """The process dies here."""


class Killer:
    """Passes calls to ``inner`` and dies at call number ``at`` (1-based), once."""

    def __init__(self, inner: ScriptedBackend, at: int) -> None:
        self.inner = inner
        self.model = inner.model
        self.at = at
        self.count = 0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        self.count += 1
        if self.count == self.at:
            raise Killed
        return self.inner.complete(messages, tools=tools, purpose=purpose, max_tokens=max_tokens)


def write(path: str, content: str, **kw: Any) -> dict[str, Any]:
    call = {"name": "write_file", "arguments": {"path": path, "content": content}}
    return {"purpose": "act", "tool_calls": [call], **kw}


TURNS = [
    {"purpose": "plan", "text": "1. Add total()."},
    write("calc_total.py", "def total(xs):\n    return sum(xs)\n"),  # attempt 1: wrong file
    {"purpose": "act", "text": "Added total()."},
    {"purpose": "review", "text": "APPROVE"},
    write("calc.py", CALC + "\n\ndef total(xs):\n    return sum(xs)\n", expect=[HISTORY_HEADING]),
    {"purpose": "act", "text": "Moved it into calc.py."},
    {"purpose": "review", "text": "APPROVE"},
]


def git_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "app.yaml").write_text(SPEC)
    (root / "calc.py").write_text(CALC)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    return root


def builder(
    root: Path, backend: Any, run_dir: Path, audit: AuditLog, guard: WorkspaceGuard | None = None
) -> AgentBuilder:
    """What ``Session.agent`` does, on a local runner and without tool governance."""

    def build(
        spec: Spec,
        *,
        task: str,
        untrusted: bool,
        trusted_commands: Sequence[str],
        label: str = "solve",
        review: bool = True,
        cursor: ReplayCursor | None = None,
    ) -> tuple[AutonomousAgent, list[Guard]]:
        deps = AgentDeps(
            ladder=(backend,), runner=LocalRunner(), audit=audit, guard=guard, cursor=cursor
        )
        agent = AutonomousAgent(
            deps,
            workspace=root,
            spec=spec,
            run_dir=run_dir,
            config=AgentConfig(max_attempts=2),
            review=review,
            label=label,
        )
        return agent, []

    return build


def orchestrator(root: Path, backend: Any) -> tuple[ProjectOrchestrator, AuditLog]:
    store = RunStore(root)
    run_dir = store.run_dir("r")
    audit = AuditLog(run_dir / "audit.jsonl", "r")
    guard = WorkspaceGuard(root, run_dir / "snapshots")  # one guard per snapshot folder
    solver = AgentCardSolver([backend], builder(root, backend, run_dir, audit, guard))
    orch = ProjectOrchestrator(
        root=root,
        spec_paths=["specs"],
        solver=solver,
        snapshots=GuardSnapshots(guard),
        runner=LocalRunner(),
        store=store,
        audit=audit,
        load_spec=load_spec,
    )
    return orch, audit


def test_a_card_killed_in_its_second_attempt_resumes_with_its_first_attempt_carried(
    tmp_path: Path,
) -> None:
    root = git_repo(tmp_path)
    scripted = ScriptedBackend(TURNS)
    # Call 6 is attempt 2's second turn, after its write to calc.py.
    orch, _ = orchestrator(root, Killer(scripted, at=6))
    with pytest.raises(Killed):
        orch.start(run_id="r", task=None, started_by="alice")
    calls_before = len(scripted.calls)

    orch2, audit = orchestrator(root, scripted)
    state = orch2.resume("r")
    assert state.status is RunStatus.DONE, state.stop_detail
    # The same record as an uninterrupted run: two attempts, the first carried forward.
    (card,) = state.cards
    assert card["attempts"] == 2 and card["interrupted"] == 1
    after = scripted.calls[calls_before:]
    assert after[0].purpose is Purpose.ACT  # no new plan: the card went on with attempt 2
    assert HISTORY_HEADING in str(after[0].messages[1]["content"])
    assert "Attempt 1 — verdict: verify_failed" in str(after[0].messages[1]["content"])
    lines = [json.loads(line) for line in audit.path.read_text().splitlines()]
    (resumed,) = [e["fields"] for e in lines if e["event"] == "history_resumed"]
    assert resumed["attempt"] == 2 and resumed["records"] == 1
    assert not (root / "calc_total.py").exists()
    assert verify_audit_log(audit.path, head=state.audit_head).ok


def test_without_a_checkpoint_a_resumed_card_starts_afresh(tmp_path: Path) -> None:
    root = git_repo(tmp_path)
    scripted = ScriptedBackend(TURNS)
    orch, _ = orchestrator(root, Killer(scripted, at=1))  # dies in the plan call
    with pytest.raises(Killed):
        orch.start(run_id="r", task=None, started_by="alice")
    orch2, _ = orchestrator(root, scripted)
    state = orch2.resume("r")
    assert state.status is RunStatus.DONE, state.stop_detail
    assert state.cards[0]["attempts"] == 2


def test_the_replay_position_is_found_behind_an_effort_ladder(tmp_path: Path) -> None:
    from chimera.economics.effort import EffortBackend, EffortPolicy, Rung

    weak, strong = ScriptedBackend(TURNS, name="w"), ScriptedBackend(TURNS, name="s")
    ladder = EffortBackend(
        [Rung(weak, "scripted:w"), Rung(strong, "scripted:s")],
        EffortPolicy(rungs=2, supports_reasoning=lambda m: False),
    )
    solver = AgentCardSolver(
        [ladder], builder(tmp_path, ladder, tmp_path, AuditLog(tmp_path / "a.jsonl", "r"))
    )
    weak.complete([{"role": "user", "content": "x"}], purpose=Purpose.PLAN)
    at = solver.checkpoint()
    assert at is not None
    strong.restore(3)
    solver.rewind(at)
    assert (weak.position, strong.position) == (1, 0)
