"""How a ``solve`` call ended (:class:`SolveResult`) and its human summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from chimera.core.agent import UsageTotals
from chimera.core.attempts import AttemptRecord
from chimera.core.heldout.verdict import HELD_OUTCOME

SolveOutcome = Literal["solved", "hollow", "failed", "held", "budget", "error"]


BudgetLimit = Literal["tokens", "usd"]


@dataclass
class SolveResult:
    """How a ``solve`` call ended.

    Attributes:
        outcome: ``solved`` (verification passed with a real change), ``hollow`` (passed
            with no change, or nothing to change), ``failed`` (attempts exhausted),
            ``held`` (attempts exhausted, the last passing the visible requirements and
            failing a held-out one),
            ``budget`` (a budget refused a call), ``error`` (a provider failure or bad input).
        attempts: every attempt's record, in order (the passing one included).
        final_report: a human, multi-line summary.
        files_changed, added, removed: stats of the change left in the workspace (0 unless
            solved).
        usage: tokens and cost over every model call (``usage.cost_usd`` ``None`` = unknown).
        sandbox_mode: the runner's mode (``bwrap``, ``scrubbed``, ``local``...).
        sandbox_weaker: True when the sandbox ran in a mode weaker than bubblewrap.
        sandbox_description: the runner's one-line description (the summary shows it once).
        targets: the requirement ids the run had to turn green.
        history_injections: how many prompts carried the attempt history.
        reviews_unparsed: manager reviews whose answer held no verdict (no review took place).
        budget_limit: for outcome ``budget``, the ceiling that refused (``tokens`` / ``usd``).
        model: the model of the rung that made the last attempt.
        run_dir: the run's folder (transcript, audit log, snapshots).
        tainted: the task text came from outside (``untrusted=True``).
        suspicion: the last attempt's suspicion line (held-out failures, edited checks, the
            review's verdict; :class:`chimera.core.heldout.Suspicion`).
    """

    outcome: SolveOutcome
    attempts: list[AttemptRecord]
    final_report: str
    files_changed: int = 0
    added: int = 0
    removed: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)
    sandbox_mode: str = ""
    sandbox_weaker: bool = False
    sandbox_description: str = ""
    targets: tuple[str, ...] = ()
    history_injections: int = 0
    reviews_unparsed: int = 0
    budget_limit: BudgetLimit | None = None
    model: str = ""
    run_dir: Path | None = None
    tainted: bool = False
    suspicion: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "solved"

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens

    @property
    def cost_usd(self) -> float | None:
        return self.usage.cost_usd

    def diff_stats(self) -> str:
        return f"{self.files_changed} file(s), +{self.added} -{self.removed}"

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "attempts": [a.to_json() for a in self.attempts],
            "final_report": self.final_report,
            "files_changed": self.files_changed,
            "added": self.added,
            "removed": self.removed,
            "usage": self.usage.to_json(),
            "sandbox_mode": self.sandbox_mode,
            "sandbox_weaker": self.sandbox_weaker,
            "targets": list(self.targets),
            "history_injections": self.history_injections,
            "reviews_unparsed": self.reviews_unparsed,
            "budget_limit": self.budget_limit,
            "model": self.model,
            "tainted": self.tainted,
            "suspicion": self.suspicion,
        }


def result_report(result: SolveResult) -> str:
    cost = "unknown" if result.cost_usd is None else f"${result.cost_usd:.4f}"
    sandbox = result.sandbox_mode + (" (weaker: no bubblewrap)" if result.sandbox_weaker else "")
    if result.sandbox_description:
        # The full description, once per run; a weaker mode still says so first.
        described = result.sandbox_description
        sandbox = f"{sandbox}; {described}" if result.sandbox_weaker else described
    lines = [
        f"outcome: {result.outcome}",
        f"attempts: {len(result.attempts)}"
        + (
            " (" + ", ".join(f"{a.number}: {a.verdict.value}" for a in result.attempts) + ")"
            if result.attempts
            else ""
        ),
        f"targets: {', '.join(result.targets) or '(none)'}",
        f"tokens: {result.tokens}",
        f"cost: {cost}",
        f"diff: {result.diff_stats()}",
        f"sandbox: {sandbox}",
        f"history injections: {result.history_injections}",
    ]
    if result.reviews_unparsed:
        lines.append(
            f"reviews unparsed: {result.reviews_unparsed} (no verdict in the reviewer's answer: "
            "no review took place, the checks alone decided)"
        )
    if result.tainted:
        lines.append("task: untrusted (tainted run)")
    if result.outcome == "held":
        lines.insert(1, HELD_OUTCOME)
    if result.suspicion:
        lines.append(result.suspicion)
    return "\n".join(lines)
