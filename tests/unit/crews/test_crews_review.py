"""The review crew: one verdict from several reviewers, an unparseable one is no review, and
an AutonomousAgent whose attempt it sends back."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chimera.config import AgentConfig, ChimeraConfig
from chimera.core.autonomous import AutonomousAgent
from chimera.core.deps import AgentDeps, Reviewer
from chimera.crews import CrewsPart, FilteredTools, ReviewCrew, load_crew
from chimera.errors import ConfigError, CrewError
from chimera.governance.audit import AuditLog
from chimera.protocols import SupportsComplete
from chimera.providers import ScriptedBackend, TokenBudget
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec
from chimera.tools import ToolRegistry

PARALLEL = """\
crew: review
roles:
  - {name: tests, goal: Decide whether the change is tested.}
  - {name: security, goal: Decide whether the change is safe., model: sec}
parallel: {}
"""

EVIDENCE: dict[str, Any] = {
    "task": "Add total()",
    "targets": ["t"],
    "diff": "+def total",
    "summary": "done",
}


def _review(env: Any, text: str, shared: list[str], sec: list[str]) -> Any:
    crew = ReviewCrew(
        env.crew(text),
        run_budget=TokenBudget(name="run"),
        make=lambda m: {"sec": ScriptedBackend([{"text": t} for t in sec])}[m],
        default_model="default",
        audit=env.audit,
    )
    backend = ScriptedBackend([{"purpose": "review", "text": t} for t in shared])
    return crew.review(backend, **EVIDENCE)


def test_one_rejection_sends_the_attempt_back_with_its_role(env: Any) -> None:
    verdict = _review(
        env, PARALLEL, ["APPROVE\n- test_total covers it."], ["REJECT: total() evals input."]
    )
    assert (verdict.approved, verdict.parsed) == (False, True)
    assert verdict.reason == "security: total() evals input"
    assert verdict.model == "crew:review"
    (logged,) = env.audit_events("crew.verdict")
    assert (logged["approved"], logged["parsed"]) == (False, True)


def test_approval_needs_every_reviewer(env: Any) -> None:
    verdict = _review(env, PARALLEL, ["APPROVE"], ["APPROVE: no input reaches a shell."])
    assert (verdict.approved, verdict.parsed) == (True, True)
    assert verdict.reason == "tests; security: no input reaches a shell"


def test_an_unparseable_reviewer_makes_it_no_review_never_approval(env: Any) -> None:
    verdict = _review(env, PARALLEL, ["APPROVE"], ["\u2705 ship it"])
    assert (verdict.approved, verdict.parsed) == (False, False)


def test_a_crew_that_produced_nothing_is_no_review(env: Any) -> None:
    verdict = _review(env, PARALLEL, [], [])
    assert (verdict.approved, verdict.parsed) == (False, False)


def test_a_supervisor_review_crew_decides_by_its_synthesis(env: Any) -> None:
    text = PARALLEL.replace("parallel: {}", "supervisor: {role: lead, rounds: 1}").replace(
        "roles:\n", "roles:\n  - {name: lead, goal: Give one verdict., model: lead}\n"
    )
    crew = ReviewCrew(
        env.crew(text),
        run_budget=TokenBudget(name="run"),
        make=lambda m: {
            "sec": ScriptedBackend([{"text": "REJECT: it shells out"}]),
            "lead": ScriptedBackend(
                [{"text": "REJECT: security found a shell call", "expect": "vs"}]
            ),
        }[m],
        default_model="default",
    )
    backend = ScriptedBackend([{"purpose": "review", "text": "APPROVE: it is tested"}])
    verdict = crew.review(backend, **EVIDENCE)
    assert (verdict.approved, verdict.parsed, verdict.reason) == (
        False,
        True,
        "security found a shell call",
    )


def test_review_crew_roles_take_no_tools(env: Any) -> None:
    armed = PARALLEL.replace("model: sec}", "model: sec, tools: [search]}")
    with pytest.raises(ConfigError, match="review crew roles take no tools"):
        ReviewCrew(
            env.crew(armed),
            run_budget=TokenBudget(),
            make=lambda m: ScriptedBackend([]),
            default_model="x",
        )


def test_review_crew_has_the_ground_floor_reviewer_shape(env: Any) -> None:
    crew: Reviewer = ReviewCrew(
        env.crew(PARALLEL),
        run_budget=TokenBudget(),
        make=lambda m: ScriptedBackend([]),
        default_model="x",
    )
    # A mypy check as much as a runtime one: the assignment above type-checks.
    assert callable(crew.review)


def test_filtered_tools_refuse_a_name_outside_the_allowlist() -> None:
    tools = FilteredTools(ToolRegistry(), ["search"])
    result = tools.call("read_file", {"path": "x"})
    assert (result.ok, result.output) == (
        False,
        "error: tool 'read_file' is not allowed for this role",
    )
    assert FilteredTools(None, ["search"]).schemas() == []


# -- the session part -------------------------------------------------------------------


@dataclass
class FakeSession:
    """The session factory's Session, as far as a part reads it."""

    root: Path
    config: ChimeraConfig
    audit: AuditLog
    run_id: str = "r1"
    model: str = "scripted:none.yaml"
    budget: TokenBudget = field(default_factory=TokenBudget)
    events: Any = None


@dataclass(frozen=True)
class FakeDeps:
    ladder: tuple[SupportsComplete, ...] = ()
    reviewer: Any = None


def test_crews_part_plugs_the_configured_crew_in_as_the_reviewer(tmp_path: Path) -> None:
    folder = tmp_path / ".chimera.d" / "crews"
    folder.mkdir(parents=True)
    (folder / "review.yaml").write_text(PARALLEL)
    audit = AuditLog(tmp_path / "run" / "audit.jsonl", "r1")
    config = ChimeraConfig.model_validate({"review": {"crew": "review"}})
    session = FakeSession(tmp_path, config, audit)
    part = CrewsPart()
    part.attach(session)
    deps = part.agent_deps(FakeDeps(), session)
    assert isinstance(deps.reviewer, ReviewCrew)
    assert deps.reviewer is part.reviewer(session)
    attached = [json.loads(x) for x in audit.path.read_text().splitlines()]
    assert attached[-1]["event"] == "crew.attached"
    assert attached[-1]["fields"]["roles"] == ["tests", "security"]
    # Without configuration nothing changes.
    plain = FakeSession(tmp_path, ChimeraConfig(), audit, run_id="r2")
    part.attach(plain)
    assert part.agent_deps(FakeDeps(), plain) == FakeDeps()


def test_crews_part_refuses_an_invalid_crew_before_any_agent(tmp_path: Path) -> None:
    folder = tmp_path / ".chimera.d" / "crews"
    folder.mkdir(parents=True)
    (folder / "review.yaml").write_text("roles: []\nparallel: {}\n")
    config = ChimeraConfig.model_validate({"review": {"crew": "review"}})
    with pytest.raises(CrewError, match=r"review.yaml:1:8: 'roles' must be a non-empty list"):
        CrewsPart().attach(FakeSession(tmp_path, config, AuditLog(tmp_path / "a.jsonl", "r")))


# -- an AutonomousAgent reviewed by a crew ------------------------------------------------

SPEC = "requirements:\n  - id: total-defined\n    defines: {path: calc.py, symbol: total}\n"


def _repo(root: Path) -> None:
    root.mkdir()
    (root / "specs").mkdir()
    (root / "specs" / "reqs.yaml").write_text(SPEC)
    (root / ".gitignore").write_text(".chimera/\n")
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "b"],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _write(content: str) -> dict[str, Any]:
    call = {"name": "write_file", "arguments": {"path": "calc.py", "content": content}}
    return {"purpose": "act", "tool_calls": [call]}


def test_a_review_crew_sends_an_attempt_back_and_approves_the_next(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _repo(root)
    run_dir = root / ".chimera" / "runs" / "r1"
    audit = AuditLog(run_dir / "audit.jsonl", "r1")
    hacked = (
        "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n"
        "    return eval('+'.join(map(str, xs)))\n"
    )
    fixed = "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n    return sum(xs)\n"
    worker = ScriptedBackend(
        [
            {"purpose": "plan", "text": "1. Add total()."},
            _write(hacked),
            {"purpose": "act", "text": "Added total()."},
            {"purpose": "review", "text": "APPROVE: total() exists"},  # the 'tests' reviewer
            _write(fixed),
            {"purpose": "act", "text": "total() uses sum()."},
            {"purpose": "review", "text": "APPROVE"},
        ]
    )
    security = ScriptedBackend(
        [
            {"text": "REJECT: total() calls eval on its input.", "expect": "eval("},
            {"text": "APPROVE: no eval left.", "expect": "sum(xs)"},
        ]
    )
    (tmp_path / "crew.yaml").write_text(PARALLEL)
    definition = load_crew(tmp_path / "crew.yaml")
    review_crew = ReviewCrew(
        definition,
        run_budget=TokenBudget(name="run"),
        make=lambda m: security,
        default_model="default",
        audit=audit,
    )
    # What CrewsPart.agent_deps does: the crew is the agent's reviewer.
    deps = AgentDeps(ladder=(worker,), runner=LocalRunner(), audit=audit, reviewer=review_crew)
    agent = AutonomousAgent(
        deps,
        workspace=root,
        spec=load_spec([root / "specs"]),
        run_dir=run_dir,
        config=AgentConfig(max_attempts=3),
    )
    result = agent.solve("Add total() to calc.py")
    assert result.outcome == "solved", result.final_report
    assert [a.verdict.value for a in result.attempts] == ["review_rejected", "passed"]
    assert result.attempts[0].review == "security: total() calls eval on its input"
    assert (root / "calc.py").read_text() == fixed
    assert worker.remaining == 0 and security.remaining == 0


def test_a_supervisor_that_gave_no_verdict_is_no_review_even_if_a_worker_approved(
    env: Any,
) -> None:
    text = PARALLEL.replace("parallel: {}", "supervisor: {role: lead, rounds: 1}").replace(
        "roles:\n", "roles:\n  - {name: lead, goal: Give one verdict., model: lead}\n"
    )
    crew = ReviewCrew(
        env.crew(text),
        run_budget=TokenBudget(name="run"),
        make=lambda m: {"sec": ScriptedBackend([{"text": "APPROVE"}]), "lead": ScriptedBackend([])}[
            m
        ],
        default_model="default",
    )
    backend = ScriptedBackend([{"purpose": "review", "text": "APPROVE: it is tested"}])
    verdict = crew.review(backend, **EVIDENCE)
    assert (verdict.approved, verdict.parsed) == (False, False)
