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
* :func:`mcnemar_exact` — McNemar's test on paired pass/fail outcomes, exact: a two-sided
  binomial test on the discordant pairs (McNemar 1947).

scipy is imported lazily and lives in the ``eval`` extra; a call without it raises
:class:`~chimera.errors.MissingExtraError`. Ground floor: imports only :mod:`chimera.errors`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

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


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """McNemar's exact test: a two-sided binomial test (p = 0.5) on the discordant pairs.

    Raises:
        UsageError: the sequences differ in length.
        MissingExtraError: scipy (the ``eval`` extra) is not installed.
    """
    if len(a) != len(b):
        raise UsageError(f"paired samples differ in length: {len(a)} and {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    n = only_a + only_b
    if n == 0:
        return McNemar(0, 0, 1.0)
    p = float(_scipy_stats().binomtest(min(only_a, only_b), n, 0.5).pvalue)
    return McNemar(only_a, only_b, min(1.0, p))
