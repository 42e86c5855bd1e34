"""chimera.stats against hand-computed values."""

from __future__ import annotations

import math

import pytest

from chimera.errors import UsageError
from chimera.stats import Interval, mcnemar_exact, paired_bootstrap, wilson_interval


def _wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("k", "n"), [(7, 50), (0, 10), (10, 10), (19, 20), (1, 1)])
def test_wilson_matches_the_formula(k: int, n: int) -> None:
    got = wilson_interval(k, n)
    low, high = _wilson_by_hand(k, n)
    assert got.low == pytest.approx(low, abs=1e-9)
    assert got.high == pytest.approx(high, abs=1e-9)
    assert got.estimate == k / n and got.n == n


def test_wilson_seven_of_fifty_is_the_documented_interval() -> None:
    got = wilson_interval(7, 50)
    assert (round(got.low, 3), round(got.high, 3)) == (0.070, 0.262)
    assert got.describe(percent=True) == "14.0% [7.0%, 26.2%] (95%, n=50)"


def test_wilson_of_nothing_is_uninformative_and_bad_counts_are_refused() -> None:
    assert wilson_interval(0, 0) == Interval(0.0, 0.0, 1.0, 0.95, 0)
    for k, n in ((3, 2), (-1, 2)):
        with pytest.raises(UsageError, match="successes <= trials"):
            wilson_interval(k, n)
    with pytest.raises(UsageError, match="confidence"):
        wilson_interval(1, 2, confidence=1.0)


def test_paired_bootstrap_is_seeded_and_brackets_the_mean_difference() -> None:
    a = [1, 0, 1, 0, 0, 1, 0, 0, 1, 0] * 3
    b = [1, 1, 1, 0, 1, 1, 1, 0, 1, 1] * 3
    first = paired_bootstrap(a, b, seed=7)
    assert first == paired_bootstrap(a, b, seed=7)
    assert first.estimate == pytest.approx(0.4)
    assert 0 < first.low < 0.4 < first.high <= 1
    assert first.excludes_zero()


def test_paired_bootstrap_of_equal_differences_is_a_point() -> None:
    got = paired_bootstrap([0, 0, 1], [1, 1, 2])
    assert (got.low, got.estimate, got.high) == (1.0, 1.0, 1.0)


def test_paired_bootstrap_refuses_unpaired_input() -> None:
    with pytest.raises(UsageError, match="differ in length"):
        paired_bootstrap([1, 0], [1])
    with pytest.raises(UsageError, match="at least 2 pairs"):
        paired_bootstrap([1], [0])


def test_mcnemar_exact_is_a_binomial_test_on_discordant_pairs() -> None:
    a = [True] * 10 + [False] * 2 + [True] * 5
    b = [False] * 10 + [True] * 2 + [True] * 5
    got = mcnemar_exact(a, b)
    # 2 * P(X <= 2) for X ~ Bin(12, 1/2) = 2 * (1 + 12 + 66) / 4096
    assert (got.only_a, got.only_b) == (10, 2)
    assert got.p_value == pytest.approx(158 / 4096)
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0


def test_one_sided_mcnemar_is_the_binomial_tail_of_the_winning_side() -> None:
    from chimera.stats import mcnemar_counts

    assert mcnemar_counts(0, 5, alternative="greater").p_value == pytest.approx(1 / 32)
    assert mcnemar_counts(0, 5, alternative="less").p_value == 1.0
    assert mcnemar_counts(3, 0, alternative="less").p_value == pytest.approx(1 / 8)
    assert mcnemar_counts(3, 0).p_value == pytest.approx(0.25)  # 20/20 -> 17/20, two-sided


def test_holm_steps_down_and_stops_at_the_first_non_rejection() -> None:
    from chimera.stats import holm

    assert holm([0.01, 0.04, 0.03], 0.05) == [True, False, False]
    assert holm([0.01, 0.02, 0.03], 0.05) == [True, True, True]  # 0.01<=.0167, .02<=.025, .03<=.05
    assert holm([0.04], 0.05) == [True]
    assert holm([], 0.05) == []


def test_exact_binomial_p_and_clopper_pearson_are_dual() -> None:
    from chimera.stats import binomial_p, clopper_pearson

    # 18/20 against 0.6: the 90% exact lower bound clears 0.6 exactly when p <= 0.05.
    for k in range(21):
        p = binomial_p(k, 20, 0.6)
        low = clopper_pearson(k, 20, confidence=0.9).low
        assert (p <= 0.05) == (low > 0.6), k


def test_the_smallest_detectable_effect_grows_as_n_shrinks() -> None:
    from chimera.stats import min_detectable_effect

    at = {n: min_detectable_effect(n, 0.05) for n in (5, 12, 20, 50)}
    assert at[5] is not None and at[50] is not None
    assert at[5] > at[12] > at[20] > at[50]  # type: ignore[operator]
    assert min_detectable_effect(4, 0.05) is None  # 0.5^4 > 0.05: never significant
    # n = 20 at 80% power: P(Bin(20, d) >= 5) first reaches 0.8 at d = 0.314.
    assert at[20] == pytest.approx(0.314)
