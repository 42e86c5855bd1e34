"""Where the learning loop spends next: the scorecard's weakest capability, by lower bound.

The scorecard (:class:`~chimera.eval.maturity.Scorecard`) ranks capabilities by the lower
bound of their Wilson interval (:meth:`~chimera.eval.maturity.Scorecard.weakest`), never the
point estimate. :func:`choose_focus` walks that ranking and returns the first capability some
*candidate* can work on — a skill with recorded failures on that family or kind (``chimera
evolve``), a chain family (``chimera bench continuous --focus weakest``) — so the budget goes
where the evidence says Chimera is weakest, and the output says which one and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass

from chimera.eval.maturity import CapabilityScore, Dimension, Scorecard


@dataclass(frozen=True, slots=True)
class Focus:
    """The chosen capability and the candidate that works on it.

    Attributes:
        score: the capability's score (its interval is the ranking's evidence).
        candidate: the chosen candidate's name.
        rank: the capability's place in the weakest-first ranking (1 = weakest overall).
    """

    score: CapabilityScore
    candidate: str
    rank: int

    def describe(self) -> str:
        """One line: ``focus: family plurals 0/3 0.0% [0.0%, 56.1%] (weakest #1 by lower
        bound) -> skill-name``."""
        s = self.score
        return (
            f"focus: {s.dimension} {s.capability} {s.passes}/{s.trials} "
            f"{s.interval.describe(percent=True)} (weakest #{self.rank} by lower bound) "
            f"-> {self.candidate}"
        )


def choose_focus(
    card: Scorecard,
    candidates: Mapping[str, Set[tuple[Dimension, str]]],
    *,
    weight: Mapping[str, int] | None = None,
) -> Focus | None:
    """The weakest capability (by lower bound) that a candidate covers, and that candidate.

    Args:
        card: the scorecard.
        candidates: candidate name → the capabilities ``(dimension, value)`` it works on.
        weight: candidate name → how much it has on offer (e.g. recorded failures); the
            heaviest covering candidate wins a capability (ties by name).

    Returns:
        ``None`` when no scored capability is covered by any candidate.
    """
    ranked = card.weakest(k=len(card.scores()))
    weigh = weight or {}
    for rank, score in enumerate(ranked, 1):
        key = (score.dimension, score.capability)
        covering = sorted(
            (name for name, caps in candidates.items() if key in caps),
            key=lambda n: (-weigh.get(n, 0), n),
        )
        if covering:
            return Focus(score, covering[0], rank)
    return None


__all__ = ["Focus", "choose_focus"]
