"""The run report: what the agent job tells the publish job about a run — for display only.

The agent job builds it from the run's state (:meth:`RunReport.from_state`) and writes
``report.json`` into the artifacts folder; the publish job parses it once
(:func:`read_report`) and shows it in the PR body and the outcome comment. A renamed field is
a type error on both sides, never a silently empty PR body.

**Every field is untrusted display data.** The agent job ran model-written code, so anything
it wrote may be forged. The publish side shows these values inside sanitised code spans and
decides nothing from them: whether to publish, the risk and its label, ``spec-change``, the
issue and the base commit come from the agent job's :class:`~chimera.github.trust.artifacts.Outcome`
and the patch today, and are re-derived from decide's and verify's outputs and the patch by
the trust-chain work. Keep it that way: a field added here is shown, never acted on.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from chimera.github.trust.handoff import read_model, supported_version, write_model
from chimera.orchestration.state import RunStatus, StopReason

if TYPE_CHECKING:
    from chimera.orchestration.state import RunState

__all__ = [
    "REPORT_FILE",
    "REPORT_VERSION",
    "CardReport",
    "DeniedReport",
    "RunReport",
    "read_report",
    "write_report",
]

REPORT_FILE = "report.json"
REPORT_VERSION = 1

_UNTRUSTED = "Untrusted display data (written by the agent job): shown, never acted on."


class CardReport(BaseModel):
    """One card of the run, for the PR body's attempt history. Untrusted display data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description=f"The card's id (a requirement id). {_UNTRUSTED}")
    status: str = Field(description=f"The card's status (accepted, failed, ...). {_UNTRUSTED}")
    attempts: int = Field(default=0, ge=0, description=f"Attempts spent. {_UNTRUSTED}")
    notes: list[str] = Field(
        default_factory=list, description=f"One-line outcomes, oldest first. {_UNTRUSTED}"
    )


class DeniedReport(BaseModel):
    """An action governance denied or held for review. Untrusted display data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: str = Field(default="", description=f"What was attempted, one line. {_UNTRUSTED}")
    reason: str = Field(default="", description=f"Why it was denied. {_UNTRUSTED}")


class _DeniedEntry(BaseModel):
    """The shape ``RunState.denied_actions`` holds (``DeniedAction.to_dict``; older runs wrote
    ``command`` or ``tool`` where newer ones write ``action``)."""

    model_config = ConfigDict(extra="ignore")

    action: str = ""
    command: str = ""
    tool: str = ""
    reason: str = ""
    message: str = ""

    def to_report(self) -> DeniedReport:
        return DeniedReport(
            action=self.action or self.command or self.tool, reason=self.reason or self.message
        )


class RunReport(BaseModel):
    """The run as the PR body and the outcome comment show it (``report.json``, version 1).

    Every field is untrusted display data (see the module docstring): the publish side makes
    no decision from it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(description="The report format; this Chimera reads 1.")
    run_id: str = Field(description=f"The run's id. {_UNTRUSTED}")
    status: RunStatus = Field(description=f"How the run ended. {_UNTRUSTED}")
    stop_reason: StopReason | None = Field(default=None, description=f"Why. {_UNTRUSTED}")
    stop_detail: str = Field(default="", description=f"The stop, in words. {_UNTRUSTED}")
    started_by: str = Field(default="", description=f"Who started the run. {_UNTRUSTED}")
    acceptance_ids: list[str] = Field(
        default_factory=list, description=f"The task's acceptance requirements. {_UNTRUSTED}"
    )
    goal_ids: list[str] = Field(
        default_factory=list, description=f"The goal when the task had none. {_UNTRUSTED}"
    )
    base_green: list[str] = Field(
        default_factory=list, description=f"Requirements that passed on the base. {_UNTRUSTED}"
    )
    final_results: dict[str, str] = Field(
        default_factory=dict, description=f"Requirement id → final status. {_UNTRUSTED}"
    )
    unrelated_red: list[str] = Field(
        default_factory=list, description=f"Red on the base, not the task's. {_UNTRUSTED}"
    )
    cards: list[CardReport] = Field(
        default_factory=list, description=f"The attempt history. {_UNTRUSTED}"
    )
    pending_approval: list[str] = Field(
        default_factory=list, description=f"Cards held for a person. {_UNTRUSTED}"
    )
    tokens: int = Field(default=0, ge=0, description=f"Tokens spent. {_UNTRUSTED}")
    cost_usd: float | None = Field(
        default=None, description=f"USD spent; None for a model without a price. {_UNTRUSTED}"
    )
    sandbox_mode: str | None = Field(default=None, description=f"The sandbox. {_UNTRUSTED}")
    tainted: bool = Field(default=False, description=f"The task was untrusted. {_UNTRUSTED}")
    denied_actions: list[DeniedReport] = Field(
        default_factory=list, description=f"Actions denied or held. {_UNTRUSTED}"
    )
    audit_head: str | None = Field(
        default=None, description=f"The audit log's head hash. {_UNTRUSTED}"
    )

    @field_validator("version", mode="before")
    @classmethod
    def _known_version(cls, value: Any) -> int:
        return supported_version(value, REPORT_VERSION, "run report")

    @property
    def goal(self) -> list[str]:
        """The requirements the run had to turn green (acceptance, else the goal)."""
        return self.acceptance_ids or self.goal_ids

    @property
    def last_failure(self) -> str:
        """The last note of the last failed or blocked card (``""`` when none)."""
        for card in reversed(self.cards):
            if card.status in ("failed", "blocked") and card.notes:
                return card.notes[-1]
        return ""

    @classmethod
    def from_state(cls, state: RunState) -> RunReport:
        """The report of a run's state (the agent job's side of the hand-off)."""
        from chimera.orchestration.graph import Card

        cards = [Card.from_json(raw) for raw in state.cards]
        return cls(
            version=REPORT_VERSION,
            run_id=state.run_id,
            status=state.status,
            stop_reason=state.stop_reason,
            stop_detail=state.stop_detail,
            started_by=state.started_by,
            acceptance_ids=list(state.acceptance_ids),
            goal_ids=list(state.goal_ids),
            base_green=list(state.base_green),
            final_results=dict(state.final_results),
            unrelated_red=list(state.unrelated_red),
            cards=[
                CardReport(id=c.id, status=c.status.value, attempts=c.attempts, notes=c.notes)
                for c in cards
            ],
            pending_approval=list(state.pending_approval),
            tokens=state.tokens,
            cost_usd=state.cost_usd,
            sandbox_mode=state.sandbox_mode,
            tainted=state.tainted,
            denied_actions=[
                _DeniedEntry.model_validate(entry).to_report() for entry in state.denied_actions
            ],
            audit_head=state.audit_head,
        )


def write_report(folder: Path, report: RunReport) -> Path:
    """Write ``folder/report.json`` atomically; returns its path."""
    return write_model(folder / REPORT_FILE, report)


def read_report(folder: Path) -> RunReport | None:
    """Parse ``folder/report.json`` once; ``None`` when the agent job wrote none (it stopped
    before a run existed).

    Raises:
        HandoffError: one line naming the file and the first problem (invalid JSON, an unknown
            version, a missing field, a wrong type, an unknown field).
    """
    path = folder / REPORT_FILE
    if not os.path.lexists(path):  # a dangling link is refused by read_model, not skipped
        return None
    return read_model(path, RunReport, "run report")
