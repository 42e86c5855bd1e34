"""Budget stops are classified by the refusing ceiling (a typed field), never by the text.

Before, the run matched "usd" or "$" in the card's one-line summary, which holds the last
failed attempt's cause when there is one: a token refusal after an attempt whose output
mentioned ``$HOME`` was reported as a USD stop, and a USD refusal whose text had no "$"
("the call's cost is unknown...") as a token stop.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from chimera.config import AgentConfig
from chimera.core.autonomous import AutonomousAgent
from chimera.core.deps import AgentDeps
from chimera.core.workspace import WorkspaceGuard
from chimera.errors import BudgetExceeded
from chimera.governance.audit import AuditLog
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.graph import Card
from chimera.orchestration.project import CardOutcome, ProjectOrchestrator
from chimera.orchestration.state import RunState, RunStatus, RunStore, StopReason
from chimera.providers import BudgetedBackend, ScriptedBackend, TokenBudget
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec
from chimera.spec.model import Requirement

SPEC = "requirements:\n  - id: readme\n    contains: {path: README.md, pattern: 'pip install'}\n"


def git_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "app.yaml").write_text(SPEC)
    (root / "README.md").write_text("# demo\n")
    (root / ".gitignore").write_text(".chimera/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    return root


class OutOfBudget:
    """A solver whose card ends with a budget refusal of the given ceiling."""

    def __init__(self, limit: str, summary: str) -> None:
        self.limit = limit
        self.summary = summary

    def solve_card(
        self, card: Card, requirement: Requirement, *, state: RunState, **_: object
    ) -> CardOutcome:
        return CardOutcome("budget", attempts=1, summary=self.summary, budget_limit=self.limit)

    def checkpoint(self) -> int | None:
        return None

    def rewind(self, position: int | None) -> None:
        return None


def run(root: Path, solver: Any) -> RunState:
    store = RunStore(root)
    orch = ProjectOrchestrator(
        root=root,
        spec_paths=["specs"],
        solver=solver,
        snapshots=GuardSnapshots(WorkspaceGuard(root, store.run_dir("r") / "snapshots")),
        runner=LocalRunner(),
        store=store,
        audit=AuditLog(store.run_dir("r") / "audit.jsonl", "r"),
        load_spec=load_spec,
    )
    return orch.start(run_id="r", task=None, started_by="alice")


@pytest.mark.parametrize(
    ("limit", "summary", "reason"),
    [
        ("tokens", "attempt 1: the output said $HOME is not set (usd)", StopReason.BUDGET_TOKENS),
        ("usd", "budget 'run': the call's cost is unknown", StopReason.BUDGET_USD),
    ],
)
def test_the_stop_reason_is_the_refusing_ceiling(
    tmp_path: Path, limit: str, summary: str, reason: StopReason
) -> None:
    state = run(git_repo(tmp_path), OutOfBudget(limit, summary))
    assert state.status is RunStatus.STOPPED
    assert state.stop_reason is reason


def test_budget_exceeded_names_its_ceiling() -> None:
    tokens = TokenBudget(max_tokens=10)
    with pytest.raises(BudgetExceeded) as exc:
        tokens.reserve(11, None)
    assert exc.value.limit == "tokens"
    usd = TokenBudget(max_tokens=1000, max_usd=0.01)
    with pytest.raises(BudgetExceeded) as exc:
        usd.reserve(1, 0.02)
    assert exc.value.limit == "usd"
    unknown = TokenBudget(max_usd=1.0)
    with pytest.raises(BudgetExceeded) as exc:
        unknown.reserve(1, None)  # an unknown price under a USD ceiling only
    assert exc.value.limit == "usd"


def _agent(root: Path, backend: Any) -> AutonomousAgent:
    run_dir = root / ".chimera" / "runs" / "s"
    deps = AgentDeps(
        ladder=(backend,), runner=LocalRunner(), audit=AuditLog(run_dir / "audit.jsonl", "s")
    )
    return AutonomousAgent(
        deps,
        workspace=root,
        spec=load_spec([root / "specs"]),
        run_dir=run_dir,
        config=AgentConfig(max_attempts=3),
    )


WRONG = {
    "purpose": "act",
    "tool_calls": [{"name": "write_file", "arguments": {"path": "NOTES", "content": "$HOME\n"}}],
}


@pytest.mark.parametrize("where", ["plan", "act"])
def test_a_real_token_refusal_reaches_the_solve_result(tmp_path: Path, where: str) -> None:
    root = git_repo(tmp_path)
    plan = {
        "purpose": "plan",
        "text": "1. Edit README.md. Cost: $5",
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
    }
    scripted = ScriptedBackend([plan, WRONG])
    # Room for the plan's estimate (its prompt + 2048), but after what it spent not for the
    # first tool turn's (or, with 10, not even for the plan).
    ceiling = 2300 if where == "act" else 10
    budget = TokenBudget(max_tokens=ceiling)
    backend = BudgetedBackend(scripted, budget, model="scripted:s", default_max_tokens=200)
    result = _agent(root, backend).solve("Mention pip install in the README")
    assert result.outcome == "budget", result.final_report
    assert result.budget_limit == "tokens"
    log = root / ".chimera" / "runs" / "s" / "audit.jsonl"
    stops = [e["fields"] for e in map(json.loads, log.read_text().splitlines())]
    stops = [f for f in stops if "reason" in f and "only" in str(f["reason"])]
    assert stops and ("step" in stops[0]) is (where == "act")
