"""Decisions that rest on paired intervals: the significant-drop rollback and the transfer gate.

Both compare two arms on the **same** tasks (paired), through
:func:`chimera.stats.paired_bootstrap` at a registered alpha, and never act on one number:

* :func:`rollback_verdict` — roll a change back only when the upper bound of the paired
  difference (after − before) is below zero: the drop is significant. 20/20 → 19/20 is not.
* :class:`TransferGate` — promote an artifact (a skill, a playbook bullet, a tuned template)
  only when it beats its parent on **holdout tasks** disjoint (by task id) from its train and
  validation tasks: the lower bound of the paired difference is above zero. Otherwise the
  verdict is ``insufficient evidence`` and nothing is promoted; winning on train while losing
  on holdout is reported as such (the overfitting the gate exists to catch).

Sources: the transfer requirement follows GEPA's Pareto-and-holdout discipline (Agrawal et al.,
2025, arXiv 2507.19457) and the seed's "promotion through a holdout" rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chimera.errors import UsageError
from chimera.stats import Interval, paired_bootstrap

DEFAULT_ALPHA = 0.05


def _paired(
    before: Mapping[str, float], after: Mapping[str, float], tasks: Sequence[str]
) -> tuple[list[float], list[float]]:
    missing = [t for t in tasks if t not in before or t not in after]
    if missing:
        raise UsageError(f"no paired score for task(s): {', '.join(sorted(missing)[:5])}")
    return [float(before[t]) for t in tasks], [float(after[t]) for t in tasks]


@dataclass(frozen=True, slots=True)
class RollbackVerdict:
    """Whether to roll back, and the interval it rests on (``after - before``)."""

    rollback: bool
    difference: Interval
    alpha: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "rollback": self.rollback,
            "difference": self.difference.to_json(),
            "alpha": self.alpha,
            "reason": self.reason,
        }


def rollback_verdict(
    before: Mapping[str, float],
    after: Mapping[str, float],
    *,
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
) -> RollbackVerdict:
    """Roll back only on a significant drop.

    Args:
        before, after: task id → score (1.0 pass, 0.0 fail, or a metric) for the same tasks.
        alpha: the registered significance level; the interval's confidence is ``1 - alpha``.
        seed: the bootstrap's seed.

    Raises:
        UsageError: the task sets differ, fewer than 2 tasks, or alpha outside (0, 1).
    """
    tasks = sorted(before)
    if set(tasks) != set(after):
        raise UsageError("rollback compares the same tasks before and after")
    a, b = _paired(before, after, tasks)
    diff = paired_bootstrap(a, b, confidence=1 - alpha, seed=seed)
    if diff.high < 0:
        return RollbackVerdict(True, diff, alpha, f"significant drop: {diff.describe()}")
    return RollbackVerdict(False, diff, alpha, f"no significant drop: {diff.describe()}")


TransferOutcome = Literal["promote", "insufficient evidence", "reject"]


@dataclass(frozen=True, slots=True)
class TransferVerdict:
    """The transfer gate's decision.

    Attributes:
        outcome: ``promote`` (holdout lower bound > 0), ``reject`` (holdout upper bound < 0:
            significantly worse) or ``insufficient evidence``.
        holdout: the paired difference (candidate − parent) on the holdout tasks.
        train: the same on the train tasks, when given (for the overfitting note).
        overfit: the candidate won on train (lower bound > 0) but did not win on holdout.
    """

    outcome: TransferOutcome
    holdout: Interval
    train: Interval | None
    overfit: bool
    alpha: float

    @property
    def promoted(self) -> bool:
        return self.outcome == "promote"

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "holdout": self.holdout.to_json(),
            "train": self.train.to_json() if self.train else None,
            "overfit": self.overfit,
            "alpha": self.alpha,
        }


@dataclass(frozen=True, slots=True)
class TransferGate:
    """Promotion through holdout tasks disjoint from the artifact's train and validation tasks.

    Attributes:
        train_tasks, validation_tasks: the task ids the artifact was built or selected on.
        holdout_tasks: task ids kept out of learning; must be disjoint from both.
        alpha: the registered significance level.
        seed: the bootstrap's seed.

    Raises:
        UsageError: (on construction) the holdout overlaps train or validation, or has fewer
            than 2 tasks.
    """

    train_tasks: frozenset[str]
    validation_tasks: frozenset[str]
    holdout_tasks: frozenset[str]
    alpha: float = DEFAULT_ALPHA
    seed: int = 0

    def __post_init__(self) -> None:
        leaked = self.holdout_tasks & (self.train_tasks | self.validation_tasks)
        if leaked:
            raise UsageError(
                "holdout tasks must be disjoint from train and validation tasks; shared: "
                + ", ".join(sorted(leaked)[:5])
            )
        if len(self.holdout_tasks) < 2:
            raise UsageError("the transfer gate needs at least 2 holdout tasks")

    def evaluate(
        self, parent: Mapping[str, float], candidate: Mapping[str, float]
    ) -> TransferVerdict:
        """Decide on the candidate from per-task scores of both arms.

        Raises:
            UsageError: a holdout (or, when scored, train) task lacks a score in either arm.
        """
        holdout = sorted(self.holdout_tasks)
        a, b = _paired(parent, candidate, holdout)
        diff = paired_bootstrap(a, b, confidence=1 - self.alpha, seed=self.seed)
        train_diff: Interval | None = None
        scored_train = sorted(t for t in self.train_tasks if t in parent and t in candidate)
        if len(scored_train) >= 2:
            ta, tb = _paired(parent, candidate, scored_train)
            train_diff = paired_bootstrap(ta, tb, confidence=1 - self.alpha, seed=self.seed)
        outcome: TransferOutcome
        if diff.low > 0:
            outcome = "promote"
        elif diff.high < 0:
            outcome = "reject"
        else:
            outcome = "insufficient evidence"
        overfit = train_diff is not None and train_diff.low > 0 and outcome != "promote"
        return TransferVerdict(outcome, diff, train_diff, overfit, self.alpha)
