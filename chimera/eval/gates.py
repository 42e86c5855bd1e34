"""Decisions that rest on paired counts: the re-run gate, the transfer gate, the significant drop.

Every gate compares two arms on the **same** tasks (paired) and never acts on one number.
Pass/fail scores are paired counts, so the test is McNemar's **exact** test (a binomial test on
the discordant pairs, :func:`chimera.stats.mcnemar_exact`), one-sided in the direction the gate
acts on, at a registered alpha: its false-action rate under no true effect never exceeds
alpha, whatever n (a simulation test checks it at n = 5, 20 and 50, and the docs' learning page
shows the table). Metric scores (not 0/1) fall back to the paired bootstrap
(:func:`chimera.stats.paired_bootstrap`).

Two more rules guard every positive decision, each refusal a one-line reason:

* **minimum sample size**: fewer than ``min_n`` paired tasks (default :data:`MIN_PAIRS`) never
  act, and neither does an n at which the exact test could not reach alpha even if every task
  moved (two holdout tasks that both flip give p = 0.25 one-sided; they once promoted on a
  zero-width bootstrap interval);
* **non-degenerate interval**: the interval the decision rests on must have width — no changed
  pair (nothing to judge), or a bootstrap over identical differences, refuses.

* :func:`paired_gate` — the one decision: does ``after`` beat (or fall below) ``before``?
* :class:`TransferGate` — promote an artifact (a refined skill, a tuned template) only when it
  beats its parent on **holdout tasks** disjoint (by task id) from its train and validation
  tasks; winning on train while not winning on holdout is flagged (overfitting).
* :func:`rollback_verdict` — roll a change back only on a significant drop: 20/20 → 17/20 is
  not one (exact McNemar p = 0.125 one-sided).

Sources: McNemar (1947); the transfer requirement follows GEPA's Pareto-and-holdout discipline
(Agrawal et al., 2025, arXiv 2507.19457) and the seed's "promotion through a holdout" rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chimera.errors import UsageError
from chimera.stats import (
    Interval,
    mcnemar_counts,
    paired_bootstrap,
    paired_difference,
    smallest_rejecting,
)

DEFAULT_ALPHA = 0.05
MIN_PAIRS = 5
"""The fewest paired tasks any gate acts on: with fewer, one-sided exact McNemar at 0.05
cannot reject at all (0.5^4 = 0.0625), so a gate would be deciding on noise."""

Direction = Literal["better", "worse"]


def _paired(
    before: Mapping[str, float], after: Mapping[str, float], tasks: Sequence[str]
) -> tuple[list[float], list[float]]:
    missing = [t for t in tasks if t not in before or t not in after]
    if missing:
        raise UsageError(f"no paired score for task(s): {', '.join(sorted(missing)[:5])}")
    return [float(before[t]) for t in tasks], [float(after[t]) for t in tasks]


def _binary(values: Sequence[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


@dataclass(frozen=True, slots=True)
class PairedVerdict:
    """One paired decision.

    Attributes:
        established: the effect in ``direction`` is established (the gate may act).
        direction: ``better`` (after beats before) or ``worse`` (after falls below).
        n: paired tasks.
        only_before, only_after: tasks only ``before`` / only ``after`` passed (0/1 scores;
            both 0 for metric scores).
        p_value: the one-sided exact McNemar p-value (``None`` for metric scores).
        difference: the interval of ``mean(after - before)`` at ``1 - 2 * alpha`` (the
            one-sided test's dual): exact and conditional on the discordant count for 0/1
            scores, bootstrap for metrics.
        alpha: the level the decision was taken at.
        reason: one line: why it acted or refused.
    """

    established: bool
    direction: Direction
    n: int
    only_before: int
    only_after: int
    p_value: float | None
    difference: Interval
    alpha: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "established": self.established,
            "direction": self.direction,
            "n": self.n,
            "only_before": self.only_before,
            "only_after": self.only_after,
            "p_value": self.p_value,
            "difference": self.difference.to_json(),
            "alpha": self.alpha,
            "reason": self.reason,
        }


def sample_refusal(
    n: int, alpha: float, min_n: int = MIN_PAIRS, *, two_sided: bool = False
) -> str | None:
    """Why ``n`` paired tasks are too few to act on at ``alpha`` (``None``: enough)."""
    if n < min_n:
        return f"needs at least {min_n} paired tasks, has {n}"
    if smallest_rejecting(n, alpha, two_sided=two_sided) is None:
        return f"{n} paired tasks can never reach alpha {alpha} with the exact test"
    return None


def paired_gate(
    before: Sequence[float],
    after: Sequence[float],
    *,
    direction: Direction = "better",
    alpha: float = DEFAULT_ALPHA,
    min_n: int = MIN_PAIRS,
    seed: int = 0,
) -> PairedVerdict:
    """Decide whether ``after`` is better (or worse) than ``before`` on the same tasks.

    Args:
        before, after: per-task scores in the same order (1.0/0.0 pass/fail, or metrics).
        direction: the effect the caller would act on.
        alpha: the one-sided level.
        min_n: the fewest paired tasks to act on.
        seed: the bootstrap's seed (metric scores only).

    Raises:
        UsageError: lengths differ, or alpha outside (0, 0.5).
    """
    if len(before) != len(after):
        raise UsageError(f"paired samples differ in length: {len(before)} and {len(after)}")
    if not 0 < alpha < 0.5:
        raise UsageError(f"alpha must be between 0 and 0.5 (exclusive), not {alpha}")
    n = len(before)
    confidence = 1 - 2 * alpha
    if _binary(before) and _binary(after):
        only_before = sum(1 for a, b in zip(before, after, strict=True) if a > b)
        only_after = sum(1 for a, b in zip(before, after, strict=True) if b > a)
        if n == 0:
            return PairedVerdict(
                False, direction, 0, 0, 0, None, Interval(0.0, 0.0, 0.0, confidence, 0), alpha,
                "no paired tasks",
            )  # fmt: skip
        test = mcnemar_counts(
            only_before, only_after, alternative="greater" if direction == "better" else "less"
        )
        diff = paired_difference(only_before, only_after, n, confidence=confidence)
        p: float | None = test.p_value
        counts = f"{only_after} task(s) gained, {only_before} lost of {n}"
        shown = f"{counts}; exact McNemar p = {test.p_value:.3g}"
    else:
        only_before = only_after = 0
        if n < 2:
            return PairedVerdict(
                False, direction, n, 0, 0, None, Interval(0.0, 0.0, 0.0, confidence, n), alpha,
                f"needs at least {min_n} paired tasks, has {n}",
            )  # fmt: skip
        diff = paired_bootstrap(before, after, confidence=confidence, seed=seed)
        p = None
        shown = f"mean difference {diff.describe()}"
    too_few = sample_refusal(n, alpha, min_n)
    if too_few is not None:
        return PairedVerdict(
            False, direction, n, only_before, only_after, p, diff, alpha, f"refused: {too_few}"
        )
    if diff.high == diff.low:
        why = "no task changed" if p is not None else "every difference is the same (zero width)"
        return PairedVerdict(
            False, direction, n, only_before, only_after, p, diff, alpha,
            f"refused: degenerate interval ({why}): {shown}",
        )  # fmt: skip
    if p is not None:
        established = p <= alpha
    else:
        established = diff.low > 0 if direction == "better" else diff.high < 0
    word = "better" if direction == "better" else "worse"
    verdict = f"significantly {word}" if established else f"not significantly {word}"
    return PairedVerdict(
        established, direction, n, only_before, only_after, p, diff, alpha,
        f"{verdict} at alpha {alpha}: {shown}",
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class RollbackVerdict:
    """Whether to roll back, and the paired decision it rests on (``after - before``)."""

    rollback: bool
    difference: Interval
    alpha: float
    reason: str
    test: PairedVerdict

    def to_json(self) -> dict[str, Any]:
        return {
            "rollback": self.rollback,
            "difference": self.difference.to_json(),
            "alpha": self.alpha,
            "reason": self.reason,
            "test": self.test.to_json(),
        }


def rollback_verdict(
    before: Mapping[str, float],
    after: Mapping[str, float],
    *,
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
    min_n: int = MIN_PAIRS,
) -> RollbackVerdict:
    """Roll back only on a significant drop (one-sided exact McNemar for 0/1 scores).

    Args:
        before, after: task id → score (1.0 pass, 0.0 fail, or a metric) for the same tasks.
        alpha: the registered one-sided significance level.
        seed: the bootstrap's seed (metric scores).
        min_n: the fewest paired tasks a rollback acts on.

    Raises:
        UsageError: the task sets differ, or alpha outside (0, 0.5).
    """
    tasks = sorted(before)
    if set(tasks) != set(after):
        raise UsageError("rollback compares the same tasks before and after")
    a, b = _paired(before, after, tasks)
    test = paired_gate(a, b, direction="worse", alpha=alpha, min_n=min_n, seed=seed)
    if test.established:
        return RollbackVerdict(
            True, test.difference, alpha, f"significant drop: {test.reason}", test
        )
    return RollbackVerdict(
        False, test.difference, alpha, f"no significant drop: {test.reason}", test
    )


TransferOutcome = Literal["promote", "insufficient evidence", "reject"]


@dataclass(frozen=True, slots=True)
class TransferVerdict:
    """The transfer gate's decision.

    Attributes:
        outcome: ``promote`` (significantly better on holdout), ``reject`` (significantly
            worse) or ``insufficient evidence`` (including every refusal).
        holdout: the paired difference (candidate − parent) on the holdout tasks.
        train: the same on the train tasks, when scored (for the overfitting note).
        overfit: the candidate won on train but did not win on holdout.
        reason: one line (the refusal's reason when one applied).
        test: the holdout decision in full.
    """

    outcome: TransferOutcome
    holdout: Interval
    train: Interval | None
    overfit: bool
    alpha: float
    reason: str = ""
    test: PairedVerdict | None = None

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
            "reason": self.reason,
            "test": self.test.to_json() if self.test else None,
        }


@dataclass(frozen=True, slots=True)
class TransferGate:
    """Promotion through holdout tasks disjoint from the artifact's train and validation tasks.

    Attributes:
        train_tasks, validation_tasks: the task ids the artifact was built or selected on.
        holdout_tasks: task ids kept out of learning; must be disjoint from both.
        alpha: the registered one-sided significance level.
        seed: the bootstrap's seed (metric scores).
        min_n: the fewest holdout tasks the gate promotes on (fewer: ``insufficient evidence``
            with the reason).

    Raises:
        UsageError: (on construction) the holdout overlaps train or validation, or is empty.
    """

    train_tasks: frozenset[str]
    validation_tasks: frozenset[str]
    holdout_tasks: frozenset[str]
    alpha: float = DEFAULT_ALPHA
    seed: int = 0
    min_n: int = MIN_PAIRS

    def __post_init__(self) -> None:
        leaked = self.holdout_tasks & (self.train_tasks | self.validation_tasks)
        if leaked:
            raise UsageError(
                "holdout tasks must be disjoint from train and validation tasks; shared: "
                + ", ".join(sorted(leaked)[:5])
            )
        if not self.holdout_tasks:
            raise UsageError("the transfer gate needs holdout tasks")

    def evaluate(
        self, parent: Mapping[str, float], candidate: Mapping[str, float]
    ) -> TransferVerdict:
        """Decide on the candidate from per-task scores of both arms.

        Raises:
            UsageError: a holdout task lacks a score in either arm.
        """
        holdout = sorted(self.holdout_tasks)
        a, b = _paired(parent, candidate, holdout)
        better = paired_gate(a, b, alpha=self.alpha, min_n=self.min_n, seed=self.seed)
        worse = paired_gate(
            a, b, direction="worse", alpha=self.alpha, min_n=self.min_n, seed=self.seed
        )
        train_diff: Interval | None = None
        train_won = False
        scored_train = sorted(t for t in self.train_tasks if t in parent and t in candidate)
        if scored_train:
            ta, tb = _paired(parent, candidate, scored_train)
            on_train = paired_gate(ta, tb, alpha=self.alpha, min_n=1, seed=self.seed)
            train_diff, train_won = on_train.difference, on_train.difference.low > 0
        outcome: TransferOutcome
        if better.established:
            outcome, reason = "promote", better.reason
        elif worse.established:
            outcome, reason = "reject", worse.reason
        else:
            outcome, reason = "insufficient evidence", better.reason
        overfit = train_won and outcome != "promote"
        return TransferVerdict(
            outcome, better.difference, train_diff, overfit, self.alpha, reason, better
        )
