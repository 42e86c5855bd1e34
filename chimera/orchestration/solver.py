"""AgentCardSolver: the AutonomousAgent behind the ProjectOrchestrator's CardSolver protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from chimera.core.autonomous import AutonomousAgent, SolveResult
from chimera.core.deps import ReplayCursor
from chimera.orchestration.collaborators import CardOutcome
from chimera.orchestration.graph import Card
from chimera.orchestration.state import RunState
from chimera.protocols import SupportsComplete
from chimera.spec.model import Requirement, Spec
from chimera.spec.results import DriftReport

if TYPE_CHECKING:
    from chimera.governance.guard import Guard

CARD_TASK = """\
Make the requirement `{rid}` pass{title}.
Its check: {check}.
{extra}"""


def _positions(ladder: Sequence[SupportsComplete]) -> list[Any]:
    """The replay cursors inside a ladder (ScriptedBackends, possibly under wrappers; an
    EffortBackend's rungs count as the ladder)."""
    found: list[Any] = []
    flat: list[Any] = []
    for backend in ladder:
        rungs = getattr(backend, "rungs", None)
        if isinstance(rungs, tuple):
            flat.extend(r.backend for r in rungs)
        else:
            flat.append(backend)
    for backend in flat:
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


class AgentBuilder(Protocol):
    """Builds one card's agent and its tool guards (``Session.agent`` of the session factory)."""

    def __call__(
        self,
        spec: Spec,
        *,
        task: str,
        untrusted: bool,
        trusted_commands: Sequence[str],
        label: str = ...,
        review: bool = ...,
        cursor: ReplayCursor | None = ...,
    ) -> tuple[AutonomousAgent, list[Guard]]: ...


class AgentCardSolver:
    """Solves one card with a fresh :class:`AutonomousAgent` on the Spec the orchestrator holds.

    The card's task is the run's task (sanitized and fenced by the agent) plus the card's
    requirement; the agent's targets are that requirement alone, and everything green must
    stay green. The agent receives the orchestrator's Spec and its report on the tree before
    the card (no second load or base check). Scripted backends' positions are exposed as the
    orchestrator's checkpoint so a resumed run replays the same turns.

    Args:
        ladder: the session's ladder (only its replay cursors are read here).
        build_agent: builds each card's agent from the session's parts.
    """

    def __init__(self, ladder: Sequence[SupportsComplete], build_agent: AgentBuilder) -> None:
        self.ladder = list(ladder)
        self.build_agent = build_agent
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

    def solve_card(
        self,
        card: Card,
        requirement: Requirement,
        *,
        state: RunState,
        spec: Spec,
        base: DriftReport,
    ) -> CardOutcome:
        # Commands a tainted run may execute come from the base spec only (recorded at start).
        agent, guards = self.build_agent(
            spec,
            task=state.task or "",
            untrusted=state.untrusted,
            trusted_commands=state.extra.get("trusted_commands", []),
            label=card.id.replace("#", "-"),
            cursor=self,
        )
        title = f" ({requirement.title})" if requirement.title else ""
        extra = f"Overall task:\n{state.task}" if state.task else "The run repairs the whole Spec."
        task = CARD_TASK.format(
            rid=requirement.id, title=title, check=requirement.check.describe(), extra=extra
        )
        # A card interrupted mid-solve continues its attempt record (its checkpoint).
        result = agent.solve(
            task,
            [requirement.id],
            untrusted=state.untrusted,
            base=base,
            resume=card.interrupted > 0,
        )
        self.last_result = result
        last = result.attempts[-1] if result.attempts else None
        summary = result.final_report.strip().splitlines()[0] if result.final_report else ""
        # A budget or provider stop names itself; an exhausted card its last failure.
        if last is not None and result.outcome in ("failed", "hollow", "held"):
            summary = f"attempt {last.number}: {last.cause}"
        return CardOutcome(
            verdict=result.outcome,
            attempts=len(result.attempts),
            tokens=result.tokens,
            cost_usd=result.cost_usd,
            summary=summary,
            denied_actions=tuple(d.to_dict() for g in guards for d in g.denied),
            budget_limit=result.budget_limit,
            suspicion=result.suspicion,
        )
