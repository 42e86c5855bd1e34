"""Rollback only on a significant drop; promotion only through disjoint holdout tasks."""

from __future__ import annotations

import pytest

from chimera.errors import UsageError
from chimera.eval.gates import TransferGate, rollback_verdict


def _scores(passes: list[int], prefix: str = "t") -> dict[str, float]:
    return {f"{prefix}{i:02d}": float(p) for i, p in enumerate(passes)}


def test_one_lost_task_of_twenty_does_not_roll_back() -> None:
    before = _scores([1] * 20)
    after = _scores([1] * 19 + [0])
    verdict = rollback_verdict(before, after)
    assert not verdict.rollback
    assert verdict.difference.estimate == pytest.approx(-0.05)
    assert verdict.difference.high >= 0


def test_a_large_paired_drop_rolls_back() -> None:
    verdict = rollback_verdict(_scores([1] * 20), _scores([1] * 5 + [0] * 15))
    assert verdict.rollback
    assert verdict.difference.high < 0
    assert verdict.reason.startswith("significant drop")


def test_rollback_compares_the_same_tasks() -> None:
    with pytest.raises(UsageError, match="same tasks"):
        rollback_verdict(_scores([1, 1]), _scores([1, 1, 1]))


def _gate(holdout: int = 12) -> TransferGate:
    return TransferGate(
        frozenset({"a1", "a2", "a3", "a4", "a5", "a6"}),
        frozenset({"v1"}),
        frozenset(f"h{i}" for i in range(holdout)),
    )


def test_holdout_must_be_disjoint_from_train_and_validation() -> None:
    with pytest.raises(UsageError, match="disjoint"):
        TransferGate(frozenset({"a", "b"}), frozenset(), frozenset({"b", "c"}))


def test_a_clear_holdout_win_promotes() -> None:
    parent = {f"h{i}": 0.0 for i in range(12)}
    candidate = {f"h{i}": 1.0 if i < 10 else 0.0 for i in range(12)}
    verdict = _gate().evaluate(parent, candidate)
    assert verdict.promoted and verdict.holdout.low > 0


def test_no_difference_on_holdout_is_insufficient_evidence_and_train_wins_are_flagged() -> None:
    # Six train tasks: with four, even 4/4 flips is not significant (exact p = 0.0625).
    parent = {**{f"a{i}": 0.0 for i in range(1, 7)}, **{f"h{i}": 1.0 for i in range(12)}}
    candidate = {**{f"a{i}": 1.0 for i in range(1, 7)}, **{f"h{i}": 1.0 for i in range(12)}}
    verdict = _gate().evaluate(parent, candidate)
    assert verdict.outcome == "insufficient evidence" and not verdict.promoted
    assert verdict.overfit


def test_a_significant_holdout_loss_rejects() -> None:
    parent = {f"h{i}": 1.0 for i in range(12)}
    candidate = {f"h{i}": 0.0 if i < 11 else 1.0 for i in range(12)}
    assert _gate().evaluate(parent, candidate).outcome == "reject"


def test_missing_holdout_scores_are_an_error() -> None:
    with pytest.raises(UsageError, match="no paired score"):
        _gate(2).evaluate({"h0": 1.0}, {"h0": 1.0, "h1": 1.0})


def test_twenty_of_twenty_to_seventeen_is_not_a_significant_drop() -> None:
    """The exact McNemar test says p = 0.125 one-sided (0.25 two-sided): no rollback."""
    verdict = rollback_verdict(_scores([1] * 20), _scores([1] * 17 + [0] * 3))
    assert not verdict.rollback
    assert verdict.test.p_value == pytest.approx(0.125)
    assert "not significantly worse" in verdict.reason


def test_two_holdout_tasks_that_both_flip_are_refused_with_a_reason() -> None:
    gate = TransferGate(frozenset({"s1"}), frozenset({"v1"}), frozenset({"h1", "h2"}))
    verdict = gate.evaluate({"h1": 0.0, "h2": 0.0}, {"h1": 1.0, "h2": 1.0})
    assert not verdict.promoted
    assert verdict.reason == "refused: needs at least 5 paired tasks, has 2"
    assert verdict.holdout.high > verdict.holdout.low  # never a zero-width interval


def test_no_changed_task_is_a_degenerate_interval_and_refuses() -> None:
    gate = TransferGate(frozenset(), frozenset(), frozenset(f"h{i}" for i in range(6)))
    same = {f"h{i}": 1.0 for i in range(6)}
    verdict = gate.evaluate(same, same)
    assert not verdict.promoted and "degenerate interval" in verdict.reason


def test_five_of_five_flips_promote_and_the_interval_agrees() -> None:
    gate = TransferGate(frozenset(), frozenset(), frozenset(f"h{i}" for i in range(5)))
    verdict = gate.evaluate({f"h{i}": 0.0 for i in range(5)}, {f"h{i}": 1.0 for i in range(5)})
    assert verdict.promoted and verdict.holdout.low > 0
    assert verdict.test is not None and verdict.test.p_value == pytest.approx(1 / 32)
