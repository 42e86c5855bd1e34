"""One context budget: a prompt's tokens split among persona, memory, skills, playbook and the
carried-forward attempt history.

Persona (the maintainers' standing instructions) is served first, up to ``persona_cap`` of the
total and never more (so a long persona cannot crowd out the rest), since it is always in
context. The rest is water-filled by weight: each section gets its weighted share of what is
left, a section that needs less gives the difference back, and the loop repeats until every
section is satisfied or the tokens are gone. The result is deterministic integers, recorded
in the audit log (:meth:`BudgetPlan.audit_fields`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from chimera.errors import UsageError
from chimera.governance.redactor import cut_redacted

SECTIONS = ("persona", "memory", "skills", "playbook", "history")
DEFAULT_WEIGHTS: Mapping[str, float] = {
    "persona": 1.0,
    "memory": 2.0,
    "skills": 2.0,
    "playbook": 1.0,
    "history": 3.0,
}
TRUNCATED = "\n[... cut to fit the context budget]"


def estimate_tokens(text: str) -> int:
    """A model-free token estimate: about four characters per token, rounded up."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class BudgetPlan:
    """The shares of one prompt: ``shares[section]`` tokens out of ``total``."""

    total: int
    wants: Mapping[str, int]
    shares: Mapping[str, int]

    def audit_fields(self) -> dict[str, object]:
        """JSON-ready fields for a ``context_budget`` audit event."""
        return {"total": self.total, "wants": dict(self.wants), "shares": dict(self.shares)}

    def fit(self, section: str, text: str, count: Callable[[str], int] = estimate_tokens) -> str:
        """``text`` cut to the section's share (whole lines kept where possible, with a
        marker saying it was cut); unchanged when it fits."""
        share = self.shares.get(section, 0)
        if count(text) <= share:
            return text
        if share <= count(TRUNCATED):
            return ""
        lines = text.splitlines()
        while lines and count("\n".join(lines) + TRUNCATED) > share:
            lines.pop()
        if lines:
            return "\n".join(lines) + TRUNCATED
        keep = max(0, (share - count(TRUNCATED)) * 4)
        return cut_redacted(text, keep) + TRUNCATED  # redacted before the cut


@dataclass(frozen=True)
class ContextBudget:
    """Split ``total_tokens`` among :data:`SECTIONS`.

    Args:
        total_tokens: the prompt budget for these sections (> 0).
        weights: relative weights (sections left out weigh 0 and get nothing).
        persona_cap: the share of the total persona may take first (0..1).

    Raises:
        UsageError: a non-positive total, a negative weight, an unknown section or a cap
            outside 0..1.
    """

    total_tokens: int
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    persona_cap: float = 0.5

    def __post_init__(self) -> None:
        if self.total_tokens <= 0:
            raise UsageError(f"context budget: total_tokens must be > 0, not {self.total_tokens}")
        unknown = sorted(set(self.weights) - set(SECTIONS))
        if unknown:
            raise UsageError(f"context budget: unknown section(s) {', '.join(unknown)}")
        if any(w < 0 for w in self.weights.values()):
            raise UsageError("context budget: weights must be >= 0")
        if not 0 <= self.persona_cap <= 1:
            raise UsageError("context budget: persona_cap must be within 0..1")

    def split(self, wants: Mapping[str, int]) -> BudgetPlan:
        """Shares for sections wanting ``wants[section]`` tokens (missing: 0).

        No section gets more than it wants, and the shares never add up to more than the
        total.
        """
        want = {s: max(0, int(wants.get(s, 0))) for s in SECTIONS}
        share = dict.fromkeys(SECTIONS, 0)
        left = self.total_tokens
        if self.weights.get("persona", 0) > 0:
            share["persona"] = min(want["persona"], int(self.total_tokens * self.persona_cap))
            left -= share["persona"]
        while left > 0:
            active = [
                s for s in SECTIONS[1:] if share[s] < want[s] and self.weights.get(s, 0.0) > 0
            ]
            if not active:
                break
            weight = sum(self.weights[s] for s in active)
            given = 0
            for s in active:
                portion = int(left * self.weights[s] / weight)
                take = min(want[s] - share[s], portion)
                share[s] += take
                given += take
            if given == 0:
                # Rounding left less than one token per section: hand them out in order.
                for s in active:
                    if left - given <= 0:
                        break
                    share[s] += 1
                    given += 1
            left -= given
        return BudgetPlan(self.total_tokens, want, share)


__all__ = ["SECTIONS", "BudgetPlan", "ContextBudget", "estimate_tokens"]
