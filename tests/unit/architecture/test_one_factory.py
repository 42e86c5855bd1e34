"""One session factory: the run's parts are built in one place, never by a CLI surface.

An AST walk over ``chimera/`` (a call is a call however it is imported or aliased through an
attribute): the CLI constructs none of the engine's parts, and each part has exactly the
builders listed here (the factory is ``orchestration/session_factory.py`` and the open session it
returns, ``orchestration/session.py``). A new surface or package reaches them through
:class:`chimera.orchestration.session_factory.SessionFactory`.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[3] / "chimera"

# The only modules (relative to chimera/) that may call each builder.
BUILDERS: dict[str, set[str]] = {
    # make_backend + budget in one function; WorkerBudgets wraps a worker's own child budget.
    "BudgetedBackend": {"providers/factory.py", "economics/workers.py"},
    # A run's log; the A/B registry's, the continuous bench's (binding its task runs) and the
    # skill store's own logs belong to no run.
    "AuditLog": {
        "orchestration/session_factory.py",
        "eval/ab.py",
        "eval/continuous.py",
        "evolution/skills.py",
    },
    # The open session (orchestration/session.py, split out of the factory) builds the
    # agent and the project orchestrator from the parts the factory made.
    "AutonomousAgent": {"orchestration/session.py"},
    "AgentDeps": {"orchestration/session.py"},
    # Session.governance; session_factory.py's read_only_governance for read-only surfaces (crews).
    "tool_governance": {"orchestration/session_factory.py", "orchestration/session.py"},
    "AgentCardSolver": {"orchestration/session.py"},
    "ProjectOrchestrator": {"orchestration/session.py"},
    "GuardSnapshots": {"orchestration/session.py"},
    "Sandbox": {"orchestration/session_factory.py"},
    # The session's one guard per snapshot folder; an agent built without one (a unit test,
    # a library user) makes its own on its run folder.
    "WorkspaceGuard": {"orchestration/session_factory.py", "core/autonomous.py"},
    # The parts each composed class owns are built by that class alone: the agent its run
    # context, its planner and a fresh Attempt per attempt; the orchestrator its kit, goal
    # setter and card loop; the publisher its step, guards and PR step.
    "SolveContext": {"core/autonomous.py"},
    "Planner": {"core/autonomous.py"},
    "Attempt": {"core/autonomous.py"},
    "RunKit": {"orchestration/project.py"},
    "GoalSetter": {"orchestration/project.py"},
    "CardLoop": {"orchestration/project.py"},
    "PublishStep": {"github/publish/publish.py"},
    "PublishGuards": {"github/publish/publish.py"},
    "PullRequestStep": {"github/publish/publish.py"},
}

# What a CLI module may not build or call: it turns argv into a request and renders.
CLI_FORBIDDEN = set(BUILDERS) | {
    "TokenBudget",
    "make_backend",
    "build_hierarchy",
    "ExperienceBuffer",
    "open_audit",
}


def _called_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _calls(path: Path) -> list[tuple[str, int]]:
    """Every call's callee name (an ``import X as Y`` alias mapped back to ``X``), with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    aliases = {
        a.asname: a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for a in node.names
        if a.asname
    }
    return sorted(
        (aliases.get(name, name), node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and (name := _called_name(node)) is not None
    )


@functools.cache
def _builders_by_module() -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        for name, _ in _calls(path):
            if name in BUILDERS:
                found[name].add(rel)
    return found


def test_the_cli_builds_no_engine_part() -> None:
    offences = [
        f"chimera/cli/{path.name}:{line}: {name}(...)"
        for path in sorted((PKG / "cli").glob("*.py"))
        for name, line in _calls(path)
        if name in CLI_FORBIDDEN
    ]
    assert offences == []


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_each_part_has_one_builder(name: str) -> None:
    assert _builders_by_module().get(name, set()) == BUILDERS[name]


def test_the_walk_sees_a_cli_construction(tmp_path: Path) -> None:
    # The walk must catch the forms a surface would use, or the tests above prove nothing.
    sample = tmp_path / "surface.py"
    sample.write_text(
        "from chimera.governance import audit\n"
        "from chimera.core.autonomous import AutonomousAgent as A\n"
        "def run():\n"
        "    log = audit.AuditLog('a', 'r')\n"
        "    return A(log)\n",
        encoding="utf-8",
    )
    found = [n for n, _ in _calls(sample) if n in CLI_FORBIDDEN]
    assert found == ["AuditLog", "AutonomousAgent"]
