"""What the ProjectOrchestrator works with: the card solver, snapshots, audit sink and
acceptance writer it is given (protocols), its options and limits, and a card's outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from chimera.config.run import DEFAULT_HIGH_RISK_PATHS
from chimera.core.heldout import HeldOutGate
from chimera.orchestration.basis import Basis
from chimera.orchestration.graph import Card
from chimera.orchestration.state import RunState
from chimera.spec.engine.options import EngineOptions
from chimera.spec.model import Requirement, Spec
from chimera.spec.results import DriftReport


@dataclass(frozen=True)
class CardOutcome:
    """What the solver reports for one card.

    Attributes:
        verdict: ``solved`` (its own verification passed), ``hollow`` (passed with an empty
            diff), ``failed`` (attempts exhausted), ``budget`` (a budget refused a call),
            ``error`` (the solver could not run).
        attempts: attempts spent.
        tokens: tokens used by the card's model calls.
        cost_usd: their cost, ``None`` when a price is unknown.
        summary: one line (the last failure's cause for red verdicts).
        denied_actions: actions the governance layer denied for review.
        budget_limit: for ``budget``, the ceiling that refused: ``tokens`` or ``usd``.
        suspicion: the solver's suspicion line (:class:`chimera.core.heldout.Suspicion`).
    """

    verdict: str
    attempts: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0
    summary: str = ""
    denied_actions: tuple[dict[str, Any], ...] = ()
    budget_limit: str | None = None
    suspicion: str = ""


@dataclass(frozen=True)
class ChangeSummary:
    """Paths a card changed since its snapshot (for the human-checkpoint rules)."""

    touched: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()


class CardSolver(Protocol):
    """Solves one card (the AutonomousAgent behind an adapter)."""

    def solve_card(
        self,
        card: Card,
        requirement: Requirement,
        *,
        state: RunState,
        spec: Spec,
        base: DriftReport,
    ) -> CardOutcome:
        """Make ``requirement`` pass in the workspace (leaving the change in place on success).

        ``spec`` is the Spec the card was read from and ``base`` the whole Spec's report on
        the tree before the card: the solver checks nothing again before it starts.
        """
        ...

    def checkpoint(self) -> int | None:
        """An opaque position of the model backend (scripted replay), or ``None``."""
        ...

    def rewind(self, position: int | None) -> None:
        """Return the backend to ``position`` (no-op for real models)."""
        ...


class Snapshots(Protocol):
    """Workspace snapshots (WorkspaceGuard behind an adapter)."""

    def snapshot(self, label: str) -> str: ...

    def restore(self, snapshot_id: str) -> None: ...

    def changes(self, snapshot_id: str) -> ChangeSummary: ...

    def discard(self, snapshot_id: str) -> None: ...

    def recover(self) -> list[str]:
        """Clear what a killed process left in the store; called only under the run lock."""
        ...


class AuditSink(Protocol):
    def append(self, event: str, /, **fields: Any) -> dict[str, Any]: ...

    @property
    def head_hash(self) -> str | None: ...


class AcceptanceWriter(Protocol):
    """Writes acceptance requirements (a ``chimera`` YAML block) for a task without one."""

    def write_acceptance(self, task: str, spec: Spec) -> str: ...


@dataclass
class RunLimits:
    """Stops of a run other than the goal: iterations, wall time, token and USD budgets."""

    max_iterations: int = 20
    max_wall_s: float | None = None
    budget_tokens: int | None = None
    budget_usd: float | None = None


@dataclass
class OrchestratorOptions:
    limits: RunLimits = field(default_factory=RunLimits)
    high_risk_paths: Sequence[str] = DEFAULT_HIGH_RISK_PATHS
    allow_self_approval: bool = False
    task_spec_name: str | None = None
    # The Spec engine's limits for every acceptance check ([tool.chimera.check]).
    check_options: EngineOptions | None = None
    # Held-out requirements ([tool.chimera.heldout]): a card passing the visible checks is
    # accepted only when they pass too.
    heldout: HeldOutGate | None = None
    # Iterating on an earlier change (a review re-run): the goal is judged against this
    # commit, not the tree the run starts from (chimera.orchestration.basis).
    basis: Basis | None = None


SpecLoader = Callable[[Sequence[Path]], Spec]
