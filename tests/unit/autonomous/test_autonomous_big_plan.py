"""The plan step delegates to the hierarchy only when the Spine overflows its budget."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chimera.config import AgentConfig
from chimera.core.autonomous import AutonomousAgent
from chimera.core.deps import AgentDeps
from chimera.providers import ScriptedBackend
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec


class RecordingPlanner:
    """A big planner that answers with a fixed plan and remembers what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str], str]] = []

    def __call__(self, task: str, files: Sequence[str], failures: str) -> str:
        self.calls.append((task, list(files), failures))
        return "1. Add total() to calc.py (delegated plan)."


def _agent(env: Any, backend: ScriptedBackend, planner: RecordingPlanner, spine: int) -> Any:
    return AutonomousAgent(
        AgentDeps(ladder=(backend,), runner=LocalRunner(), audit=env.audit, big_planner=planner),
        workspace=env.root,
        spec=load_spec([env.root / "specs"]),
        run_dir=env.run_dir,
        config=AgentConfig(),
        spine_tokens=spine,
    )


def test_overflowing_spine_plans_through_the_hierarchy(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env(files={"notes.md": "x " * 5000})
    backend = ScriptedBackend(
        [t.write("calc.py", t.CALC_WITH_TOTAL, expect=["delegated plan"]), t.done(), t.review()]
    )
    planner = RecordingPlanner()
    result = _agent(env, backend, planner, spine=50).solve("Add total() to calc.py")
    assert result.outcome == "solved", result.final_report
    assert len(planner.calls) == 1
    task, files, failures = planner.calls[0]
    assert "Add total() to calc.py" in task
    assert "calc.py" in files
    assert failures == ""
    plans = [e for e in env.audit_events("plan") if e["fields"].get("via") == "hierarchy"]
    assert len(plans) == 1


def test_spine_within_budget_plans_directly(make_env: Callable[..., Any], t: Any) -> None:
    env = make_env()
    backend = ScriptedBackend(
        [t.plan(), t.write("calc.py", t.CALC_WITH_TOTAL), t.done(), t.review()]
    )
    planner = RecordingPlanner()
    result = _agent(env, backend, planner, spine=8000).solve("Add total() to calc.py")
    assert result.outcome == "solved", result.final_report
    assert planner.calls == []
