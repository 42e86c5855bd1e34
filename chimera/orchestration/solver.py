"""AgentCardSolver: the AutonomousAgent behind the ProjectOrchestrator's CardSolver protocol."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.config import AgentConfig
from chimera.core.autonomous import AutonomousAgent, SolveResult
from chimera.governance.audit import AuditLog
from chimera.orchestration.graph import Card
from chimera.orchestration.project import CardOutcome
from chimera.orchestration.state import RunState
from chimera.protocols import SupportsComplete, ToolCaller
from chimera.runner import CommandRunner
from chimera.spec.loader import load_spec
from chimera.spec.model import Requirement
from chimera.tools import ToolRegistry

if TYPE_CHECKING:
    from chimera.governance.guard import Guard

CARD_TASK = """\
Make the requirement `{rid}` pass{title}.
Its check: {check}.
{extra}"""


def _positions(ladder: Sequence[SupportsComplete]) -> list[Any]:
    """The replay cursors inside a ladder (ScriptedBackends, possibly under wrappers)."""
    found: list[Any] = []
    for backend in ladder:
        inner: Any = backend
        for _ in range(4):  # BudgetedBackend / routers wrap at most a few levels deep
            if hasattr(inner, "position") and hasattr(inner, "restore"):
                if all(inner is not f for f in found):
                    found.append(inner)
                break
            inner = getattr(inner, "inner", None)
            if inner is None:
                break
    return found


class AgentCardSolver:
    """Solves one card with a fresh :class:`AutonomousAgent` on the current Spec.

    The card's task is the run's task (sanitized and fenced by the agent) plus the card's
    requirement; the agent's targets are that requirement alone, and everything green must
    stay green. Scripted backends' positions are exposed as the orchestrator's checkpoint so
    a resumed run replays the same turns.
    """

    def __init__(
        self,
        ladder: Sequence[SupportsComplete],
        *,
        workspace: Path,
        spec_paths: Sequence[Path],
        runner: CommandRunner,
        run_dir: Path,
        audit: AuditLog,
        config: AgentConfig,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
        guard: bool = True,
        agent_factory: Callable[..., AutonomousAgent] = AutonomousAgent,
        **agent_kwargs: Any,
    ) -> None:
        self.ladder = list(ladder)
        self.workspace = workspace
        self.spec_paths = list(spec_paths)
        self.runner = runner
        self.run_dir = run_dir
        self.audit = audit
        self.config = config
        self.on_event = on_event
        self.guard = guard
        self.agent_factory = agent_factory
        self.agent_kwargs = agent_kwargs
        self._cursors = _positions(self.ladder)
        self.last_result: SolveResult | None = None

    def checkpoint(self) -> int | None:
        # One scripted cursor is the common case; several are packed into one number.
        if not self._cursors:
            return None
        if len(self._cursors) == 1:
            return int(self._cursors[0].position)
        packed = 0
        for cursor in self._cursors:
            packed = packed * 100_000 + int(cursor.position)
        return packed

    def rewind(self, position: int | None) -> None:
        if position is None or not self._cursors:
            return
        if len(self._cursors) == 1:
            self._cursors[0].restore(position)
            return
        for cursor in reversed(self._cursors):
            cursor.restore(position % 100_000)
            position //= 100_000

    def _governance(
        self, state: RunState
    ) -> tuple[Callable[[ToolRegistry], ToolCaller] | None, list[Guard]]:
        """``--guard`` / ``--untrusted`` around the card's tools (see ``tool_governance``)."""
        from chimera.governance.wiring import tool_governance

        return tool_governance(
            self.workspace,
            self.audit,
            guard=self.guard,
            untrusted=state.untrusted,
            task=state.task or "",
            trusted_commands=state.extra.get("trusted_commands", []),
            run_id=state.run_id,
        )

    def solve_card(self, card: Card, requirement: Requirement, *, state: RunState) -> CardOutcome:
        spec = load_spec(self.spec_paths)
        wrapper, guards = self._governance(state)
        agent = self.agent_factory(
            self.ladder,
            workspace=self.workspace,
            spec=spec,
            runner=self.runner,
            run_dir=self.run_dir,
            audit=self.audit,
            config=self.config,
            on_event=self.on_event,
            label=card.id.replace("#", "-"),
            tool_wrapper=wrapper,
            **self.agent_kwargs,
        )
        title = f" ({requirement.title})" if requirement.title else ""
        extra = f"Overall task:\n{state.task}" if state.task else "The run repairs the whole Spec."
        task = CARD_TASK.format(
            rid=requirement.id, title=title, check=requirement.check.describe(), extra=extra
        )
        result = agent.solve(task, [requirement.id], untrusted=state.untrusted)
        self.last_result = result
        last = result.attempts[-1] if result.attempts else None
        summary = result.final_report.strip().splitlines()[0] if result.final_report else ""
        if last is not None and result.outcome != "solved":
            summary = f"attempt {last.number}: {last.cause}"
        return CardOutcome(
            verdict=result.outcome,
            attempts=len(result.attempts),
            tokens=result.tokens,
            cost_usd=result.cost_usd,
            summary=summary,
            denied_actions=tuple(d.to_dict() for g in guards for d in g.denied),
        )
