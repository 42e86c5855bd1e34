"""Intervals and paired tests: the one statistics module every learning gate answers to.

Promotion, rollback and default changes rest on intervals and pre-registered paired
comparisons, never on one number. Three tools cover them:

* :func:`wilson_interval` — a pass rate with its Wilson score interval (Wilson 1927; through
  ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``). Used by the capability
  scorecard, ranked by the lower bound.
* :func:`paired_bootstrap` — the interval of the mean paired difference ``b - a`` over the same
  tasks (Efron & Tibshirani's bootstrap; ``scipy.stats.bootstrap(..., paired=True)``, BCa),
  with a seeded generator so a result is reproducible. Used by the transfer gate, the
  significant-drop rollback and the A/B report.
* :func:`mcnemar_exact` — McNemar's test on paired pass/fail outcomes, exact: a binomial test
  on the discordant pairs (McNemar 1947), two-sided or one-sided.
* :func:`binomial_p` — the exact one-sided binomial test of a pass rate against a bound (the
  test behind every promotion on a single rate: its size never exceeds alpha, unlike the
  score test the Wilson interval inverts, which runs over alpha at some n).
* :func:`holm` — Holm's step-down correction (Holm 1979) when several skills, arms or kinds
  are tested at once: the family-wise error stays at alpha.
* :func:`min_detectable_effect` — the smallest paired improvement a registered n can detect
  with the exact McNemar test at a stated power.

scipy is imported lazily and lives in the ``eval`` extra; a call without it raises
:class:`~chimera.errors.MissingExtraError`. Ground floor: imports only :mod:`chimera.errors`.
The module is past 400 lines on purpose: it is the one place every learning decision's
statistics live (one idea — intervals and exact tests on counts), so no gate grows its own.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from chimera.errors import MissingExtraError, UsageError

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 9999


def _scipy_stats() -> ModuleType:
    try:
        import numpy  # noqa: F401 - the resampling statistics take numpy arrays
        import scipy.stats
    except ImportError as exc:
        raise MissingExtraError("statistics (intervals and paired tests)", "eval") from exc
    module: ModuleType = scipy.stats
    return module


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a two-sided confidence interval.

    Attributes:
        estimate: the point estimate (a proportion in [0, 1], or a mean difference).
        low, high: the interval's bounds (``low <= estimate <= high`` for Wilson).
        confidence: the interval's confidence level in (0, 1), e.g. ``0.95``.
        n: the number of observations (trials, or pairs).
    """

    estimate: float
    low: float
    high: float
    confidence: float
    n: int

    def excludes_zero(self) -> bool:
        """True when the whole interval lies on one side of zero."""
        return self.low > 0 or self.high < 0

    def describe(self, *, percent: bool = False) -> str:
        """``0.140 [0.070, 0.262] (95%, n=50)``; with ``percent`` the values are in %."""
        scale, fmt = (100.0, "{:.1f}%") if percent else (1.0, "{:.3f}")
        values = (fmt.format(v * scale) for v in (self.estimate, self.low, self.high))
        est, low, high = values
        return f"{est} [{low}, {high}] ({self.confidence:.0%}, n={self.n})"

    def to_json(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "n": self.n,
        }


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise UsageError(f"confidence must be between 0 and 1 (exclusive), not {confidence}")


def wilson_interval(
    successes: int, trials: int, *, confidence: float = DEFAULT_CONFIDENCE
) -> Interval:
    """The Wilson score interval of a pass rate.

    Args:
        successes: passes, ``0 <= successes <= trials``.
        trials: attempts; ``0`` gives the uninformative interval ``[0, 1]`` around ``0``.
        confidence: the confidence level in (0, 1).

    Returns:
        An :class:`Interval` of proportions, e.g. 7/50 → ``0.140 [0.070, 0.262]``.

    Raises:
        UsageError: counts out of range or a confidence outside (0, 1).
        MissingExtraError: scipy (the ``eval`` extra) is not installed.
    """
    _check_confidence(confidence)
    if trials < 0 or not 0 <= successes <= trials:
        raise UsageError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return Interval(0.0, 0.0, 1.0, confidence, 0)
    ci = (
        _scipy_stats()
        .binomtest(successes, trials)
        .proportion_ci(confidence_level=confidence, method="wilson")
    )
    return Interval(successes / trials, float(ci.low), float(ci.high), confidence, trials)


def clopper_pearson(
    successes: int, trials: int, *, confidence: float = DEFAULT_CONFIDENCE
) -> Interval:
    """The exact (Clopper–Pearson) interval of a proportion: the inversion of the exact
    binomial test, so its bound clears a value exactly when that test rejects it.

    Raises:
        UsageError: counts out of range or a bad confidence.
        MissingExtraError: scipy (the ``eval`` extra) is not installed.
    """
    _check_confidence(confidence)
    if trials < 0 or not 0 <= successes <= trials:
        raise UsageError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return Interval(0.0, 0.0, 1.0, confidence, 0)
    low, high = _exact_bounds(successes, trials, confidence)
    return Interval(successes / trials, low, high, confidence, trials)


@functools.lru_cache(maxsize=65536)
def _exact_bounds(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    ci = (
        _scipy_stats()
        .binomtest(successes, trials)
        .proportion_ci(confidence_level=confidence, method="exact")
    )
    return float(ci.low), float(ci.high)


def paired_difference(
    only_a: int, only_b: int, n: int, *, confidence: float = DEFAULT_CONFIDENCE
) -> Interval:
    """The interval of the paired difference in pass rate ``(only_b - only_a) / n``, conditional
    on the number of discordant pairs ``D = only_a + only_b``: the exact interval ``[L, U]`` of
    the share of discordant pairs won by ``b`` maps to ``D / n * (2L - 1, 2U - 1)`` — the
    interval dual to the exact McNemar test, so it never has zero width while a pair differs,
    and is zero-width (degenerate: nothing to judge) when none does.

    Raises:
        UsageError: counts out of range or a bad confidence.
    """
    discordant = only_a + only_b
    if n < 1 or only_a < 0 or only_b < 0 or discordant > n:
        raise UsageError(f"need 0 <= only_a + only_b <= n and n >= 1, got {only_a}, {only_b}, {n}")
    estimate = (only_b - only_a) / n
    if discordant == 0:
        return Interval(0.0, 0.0, 0.0, confidence, n)
    share = clopper_pearson(only_b, discordant, confidence=confidence)
    scale = discordant / n
    return Interval(
        estimate, scale * (2 * share.low - 1), scale * (2 * share.high - 1), confidence, n
    )


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The bootstrap interval of the mean paired difference ``mean(b - a)``.

    ``a[i]`` and ``b[i]`` are the two arms' scores on the same task ``i`` (1.0/0.0 for pass and
    fail, or any metric). The resampling is over pairs (``paired=True``), BCa, with
    ``numpy.random.default_rng(seed)``, so equal inputs give equal intervals.

    When every difference is the same value the bootstrap distribution is degenerate: the
    interval is that value on both sides (there is no evidence of spread to report).

    Args:
        a, b: equal-length score sequences, at least 2 pairs.
        confidence: the confidence level in (0, 1).
        n_resamples: bootstrap resamples.
        seed: the generator's seed.

    Returns:
        An :class:`Interval` of the mean difference ``b - a`` (positive: ``b`` scores higher).

    Raises:
        UsageError: lengths differ, fewer than 2 pairs, or a bad confidence.
        MissingExtraError: scipy (the ``eval`` extra) is not installed.
    """
    _check_confidence(confidence)
    if len(a) != len(b):
        raise UsageError(f"paired samples differ in length: {len(a)} and {len(b)}")
    if len(a) < 2:
        raise UsageError(f"a paired bootstrap needs at least 2 pairs, got {len(a)}")
    diffs = [float(y) - float(x) for x, y in zip(a, b, strict=True)]
    mean = math.fsum(diffs) / len(diffs)
    if all(d == diffs[0] for d in diffs):
        return Interval(mean, mean, mean, confidence, len(diffs))
    stats = _scipy_stats()
    import numpy as np

    def statistic(x: Any, y: Any, axis: int = -1) -> Any:
        return np.mean(y - x, axis=axis)

    with warnings.catch_warnings():
        # BCa on a few distinct values can warn about its acceleration estimate; the interval
        # is still the documented one, and warnings are errors in the test suite.
        warnings.simplefilter("ignore", category=RuntimeWarning)
        res = stats.bootstrap(
            (np.asarray(a, dtype=float), np.asarray(b, dtype=float)),
            statistic,
            paired=True,
            vectorized=True,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="BCa",
            rng=np.random.default_rng(seed),
        )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):  # BCa undefined: fall back to percentile
        res = stats.bootstrap(
            (np.asarray(a, dtype=float), np.asarray(b, dtype=float)),
            statistic,
            paired=True,
            vectorized=True,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return Interval(mean, low, high, confidence, len(diffs))


@dataclass(frozen=True, slots=True)
class McNemar:
    """Exact McNemar test on paired pass/fail outcomes.

    Attributes:
        only_a: pairs where only arm ``a`` passed.
        only_b: pairs where only arm ``b`` passed.
        p_value: two-sided exact p-value (1.0 with no discordant pair).
    """

    only_a: int
    only_b: int
    p_value: float


Alternative = Literal["two-sided", "greater", "less"]


@functools.lru_cache(maxsize=65536)
def binomial_tail(k: int, n: int, p: float = 0.5) -> float:
    """``P(X >= k)`` for ``X ~ Binomial(n, p)``, exact (cached: the gates and their
    simulation ask for the same small counts many times).

    Raises:
        MissingExtraError: scipy (the ``eval`` extra) is not installed.
    """
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return min(1.0, float(_scipy_stats().binom.sf(k - 1, n, p)))


def mcnemar_exact(
    a: Sequence[bool], b: Sequence[bool], *, alternative: Alternative = "two-sided"
) -> McNemar:
    """McNemar's exact test: a binomial test (p = 0.5) on the discordant pairs.

    Args:
        a, b: the two arms' pass/fail outcomes on the same tasks, in the same order.
        alternative: ``two-sided``; ``greater`` (``b`` passes more often than ``a``: p is
            ``P(X >= only_b)``); ``less`` (``b`` passes less often: ``P(X >= only_a)``).

    Raises:
        UsageError: the sequences differ in length.
        MissingExtraError: scipy (the ``eval`` extra) is not installed.
    """
    if len(a) != len(b):
        raise UsageError(f"paired samples differ in length: {len(a)} and {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    return mcnemar_counts(only_a, only_b, alternative=alternative)


def mcnemar_counts(only_a: int, only_b: int, *, alternative: Alternative = "two-sided") -> McNemar:
    """:func:`mcnemar_exact` from the discordant counts alone (``only_a``: pairs where only
    arm ``a`` passed; ``only_b``: only ``b``).

    Raises:
        UsageError: a negative count.
    """
    if only_a < 0 or only_b < 0:
        raise UsageError(f"discordant counts are never negative: {only_a}, {only_b}")
    n = only_a + only_b
    if n == 0:
        return McNemar(0, 0, 1.0)
    if alternative == "greater":
        return McNemar(only_a, only_b, binomial_tail(only_b, n))
    if alternative == "less":
        return McNemar(only_a, only_b, binomial_tail(only_a, n))
    p = 2 * binomial_tail(max(only_a, only_b), n)
    return McNemar(only_a, only_b, min(1.0, p))


def binomial_p(successes: int, trials: int, bound: float) -> float:
    """The exact one-sided p-value of "the pass rate is above ``bound``": ``P(X >= successes)``
    for ``X ~ Binomial(trials, bound)`` (1.0 with no trials).

    Raises:
        UsageError: counts out of range or ``bound`` outside [0, 1).
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise UsageError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if not 0 <= bound < 1:
        raise UsageError(f"the bound must be in [0, 1), not {bound}")
    if trials == 0:
        return 1.0
    return binomial_tail(successes, trials, bound)


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level ``alpha``.

    Sort the p-values ascending; reject the i-th smallest (0-based) while it is at most
    ``alpha / (m - i)``; stop at the first that is not (Holm 1979). With one p-value it is the
    plain test at ``alpha``.

    Returns:
        One bool per input, in input order (``True``: rejected).

    Raises:
        UsageError: alpha outside (0, 1).
    """
    if not 0 < alpha < 1:
        raise UsageError(f"alpha must be between 0 and 1 (exclusive), not {alpha}")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    rejected = [False] * m
    for rank, index in enumerate(order):
        if p_values[index] > alpha / (m - rank):
            break
        rejected[index] = True
    return rejected


def smallest_rejecting(n: int, alpha: float, *, two_sided: bool = False) -> int | None:
    """The fewest discordant pairs, all in one direction, that the exact McNemar test rejects
    on at ``alpha`` (``None``: with ``n`` pairs it never can)."""
    for k in range(1, n + 1):
        p = binomial_tail(k, k) * (2 if two_sided else 1)
        if p <= alpha:
            return k
    return None


def min_detectable_effect(
    n: int, alpha: float, *, power: float = 0.8, two_sided: bool = False
) -> float | None:
    """The smallest improvement in pass rate that ``n`` paired tasks detect with ``power``.

    The model is the most favourable one: each task independently turns from fail to pass
    with probability ``d`` and no task turns the other way, so the exact McNemar test rejects
    once at least :func:`smallest_rejecting` tasks turned. Any discordance the other way needs
    a larger effect: the number returned is a floor, and the outputs that show it say so.

    Returns:
        ``d`` in (0, 1] to three decimals (searched on a 0.001 grid), or ``None`` when even
        ``d = 1`` cannot reach ``power`` (too few tasks for ``alpha``).

    Raises:
        UsageError: ``n < 1`` or ``power``/``alpha`` outside (0, 1).
    """
    if n < 1:
        raise UsageError(f"n must be at least 1, not {n}")
    for value, name in ((alpha, "alpha"), (power, "power")):
        if not 0 < value < 1:
            raise UsageError(f"{name} must be between 0 and 1 (exclusive), not {value}")
    k = smallest_rejecting(n, alpha, two_sided=two_sided)
    if k is None:
        return None
    for step in range(1, 1001):
        d = step / 1000
        if binomial_tail(k, n, d) >= power:
            return d
    return None
