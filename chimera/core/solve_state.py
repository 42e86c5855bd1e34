"""What one ``solve`` of the AutonomousAgent carries between its steps: the run's state
(``SolveRun``), what an attempt saw before its verdict (``AttemptSeen``), the early stop
(``StopSolve``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.atomic import atomic_write_bytes
from chimera.core.agent import AgentResult, ToolCaller
from chimera.core.attempts import AttemptHistory, TaskLedger
from chimera.core.heldout.suspicion import Suspicion
from chimera.core.solve_result import BudgetLimit, SolveOutcome
from chimera.core.supervisor import ReviewVerdict
from chimera.protocols import SupportsComplete
from chimera.spec.results import DriftReport

if TYPE_CHECKING:
    from chimera.core.heldout import HeldOutVerdict
    from chimera.core.workspace import WorkspaceDiff, WorkspaceGuard


@dataclass
class SolveRun:
    """What one ``solve`` carries between attempts."""

    guard: WorkspaceGuard
    tools: ToolCaller
    task_block: str
    spine: str
    goal: list[str]
    keep_green: list[str]
    ledger: TaskLedger
    spine_scope: list[str] = field(default_factory=list)
    spine_overflow: bool = False
    history: AttemptHistory = field(default_factory=AttemptHistory)
    plan: str = ""
    checked: set[str] = field(default_factory=set)
    """Paths the visible checks run (for the suspicion line)."""
    blocked: int = 0
    """Tool calls governance blocked in this solve's attempts so far (for the suspicion line)."""
    suspicion: Suspicion | None = None


@dataclass(frozen=True)
class AttemptSeen:
    """What an attempt produced before the verdict: the loop's result, the real diff, the
    review and the verification report."""

    acted: AgentResult
    diff: WorkspaceDiff
    diff_rel: Path
    review: ReviewVerdict | None
    report: DriftReport
    secrets: tuple[str, ...] = ()
    """Names (never values) of the secrets the change held; its text is redacted."""
    heldout: HeldOutVerdict | None = None
    """Held-out requirements' verdict, asked only when the visible ones all pass."""
    config_changed: bool = False
    """The attempt changed Chimera's own configuration (never accepted)."""


class StopSolve(Exception):
    """Ends the attempt loop early with an outcome (budget refusal, provider failure)."""

    def __init__(
        self, outcome: SolveOutcome, reason: str, budget_limit: BudgetLimit | None = None
    ) -> None:
        super().__init__(reason)
        self.outcome = outcome
        self.reason = reason
        self.budget_limit = budget_limit


def model_name(backend: SupportsComplete) -> str:
    """The model a backend speaks for (its ``model`` attribute, else its class name)."""
    name = getattr(backend, "model", None)
    return str(name) if name else type(backend).__name__


def write_transcript_json(path: Path, transcript: Mapping[str, Any]) -> None:
    """The attempt's whole Agent transcript (``Transcript.to_json()``, redacted by the
    caller), written atomically (inspectable)."""
    data = json.dumps(transcript, ensure_ascii=False, default=str, indent=1)
    atomic_write_bytes(path, data.encode("utf-8"))
