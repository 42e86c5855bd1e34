"""The gates under simulation: how often each acts when nothing changed, and how often when
something did.

Every decision the learning loop takes on counts is a *gate*; this module runs each one, the
real function, on simulated outcomes (seeded, so the table is reproducible):

* **false-action rate** — under no true effect (both arms of a paired gate pass each task with
  probability 0.5, independently: the most discordant null; a single rate exactly at the
  policy's bound) at n = 5, 20 and 50. The bar each must stay under is
  ``alpha + 3 * sqrt(alpha * (1 - alpha) / trials)``: alpha plus three standard errors of a
  rate estimated from ``trials`` draws;
* **power** — the share of trials it acts under a stated effect, at n = 20 and 50;
* the **minimum-sample rule** — every gate refuses at n = 2.

A gate on 0/1 outcomes decides on counts alone (the paired gates on the discordant counts and
n; the lifecycle on successes and uses), so each distinct count tuple is decided once by the
real gate and the decision reused: the outcomes are drawn per trial, the gate is never
bypassed. ``scripts/learning_gates.py`` writes :func:`render_markdown`'s table into the docs'
learning page; a test compares them, as it checks the bounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from chimera.eval.ab import ab_verdict
from chimera.eval.gates import DEFAULT_ALPHA, TransferGate, paired_gate, rollback_verdict
from chimera.evolution.lifecycle import SkillLifecyclePolicy
from chimera.evolution.skills import LearnedSkill, SkillState

SIZES = (5, 20, 50)
POWER_SIZES = (20, 50)
DEFAULT_TRIALS = 10_000
DEFAULT_SEED = 20261207
NOW = datetime(2026, 12, 7, tzinfo=UTC)

Paired = tuple[int, int, int, int]
"""(both pass, only before, only after, neither) counts of n pairs."""


@dataclass(frozen=True)
class Gate:
    """One gate under simulation.

    Attributes:
        name: as the docs' table shows it.
        alpha: the level its false-action rate is held to.
        null: a one-line description of "no true effect".
        effect: a one-line description of the stated effect its power is measured at.
        draw_null, draw_effect: ``(rng, n) → outcome counts``.
        acts: the real gate's decision on those counts.
    """

    name: str
    alpha: float
    null: str
    effect: str
    draw_null: Callable[[object, int], tuple[int, ...]]
    draw_effect: Callable[[object, int], tuple[int, ...]]
    acts: Callable[[tuple[int, ...]], bool]


def _pairs(rng: object, n: int, before: float, after: float) -> Paired:
    """Counts of n pairs whose arms pass independently with ``before`` / ``after``."""
    probs = [before * after, before * (1 - after), (1 - before) * after]
    probs.append(max(0.0, 1 - sum(probs)))
    drawn = rng.multinomial(n, probs)  # type: ignore[attr-defined]
    return int(drawn[0]), int(drawn[1]), int(drawn[2]), int(drawn[3])


def _sequences(counts: tuple[int, ...]) -> tuple[list[float], list[float]]:
    both, only_before, only_after, neither = counts
    before = [1.0] * both + [1.0] * only_before + [0.0] * only_after + [0.0] * neither
    after = [1.0] * both + [0.0] * only_before + [1.0] * only_after + [0.0] * neither
    return before, after


def _rerun(counts: tuple[int, ...]) -> bool:
    before, after = _sequences(counts)
    return paired_gate(before, after).established


def _transfer(counts: tuple[int, ...]) -> bool:
    before, after = _sequences(counts)
    ids = [f"h{i}" for i in range(len(before))]
    gate = TransferGate(frozenset(), frozenset(), frozenset(ids))
    return gate.evaluate(
        dict(zip(ids, before, strict=True)), dict(zip(ids, after, strict=True))
    ).promoted


def _rollback(counts: tuple[int, ...]) -> bool:
    before, after = _sequences(counts)
    ids = [f"t{i}" for i in range(len(before))]
    return rollback_verdict(
        dict(zip(ids, before, strict=True)), dict(zip(ids, after, strict=True))
    ).rollback


def _ab(counts: tuple[int, ...]) -> bool:
    before, after = _sequences(counts)
    verdict, _, _ = ab_verdict([b == 1.0 for b in before], [a == 1.0 for a in after], DEFAULT_ALPHA)
    return verdict == "treatment better"


POLICY = SkillLifecyclePolicy()
_SKILL = LearnedSkill(
    "simulated", "A simulated skill.", "Body.\n", trusted=True, tested="gate", accepted_by="sim",
    created=NOW.isoformat(), last_used=NOW.isoformat(),
)  # fmt: skip
PROMOTED_LOW = 0.7
"""The pre-promotion lower bound the simulated promoted skill is held to."""


def _promotion(counts: tuple[int, ...]) -> bool:
    successes, uses = counts
    skill = replace(_SKILL, uses=uses, successes=successes)
    return POLICY.decide(skill, NOW).state is SkillState.PROMOTED


def _auto_rollback(counts: tuple[int, ...]) -> bool:
    successes, uses = counts
    skill = replace(
        _SKILL, state=SkillState.PROMOTED, promoted_low=PROMOTED_LOW, promoted_uses=100,
        promoted_successes=90, uses=100 + uses, successes=90 + successes,
    )  # fmt: skip
    return POLICY.decide(skill, NOW).rollback


def _rate(rng: object, n: int, p: float) -> tuple[int, int]:
    return int(rng.binomial(n, p)), n  # type: ignore[attr-defined]


GATES: tuple[Gate, ...] = (
    Gate("re-run gate (skill into prompts)", DEFAULT_ALPHA,
         "without and with the skill: each task passes with p = 0.5",
         "without 0.3, with 0.6 (independent per task)",
         lambda r, n: _pairs(r, n, 0.5, 0.5), lambda r, n: _pairs(r, n, 0.3, 0.6), _rerun),
    Gate("transfer gate (refined skill)", DEFAULT_ALPHA,
         "parent and candidate: p = 0.5 on each holdout task",
         "parent 0.3, candidate 0.6", lambda r, n: _pairs(r, n, 0.5, 0.5),
         lambda r, n: _pairs(r, n, 0.3, 0.6), _transfer),
    Gate("significant-drop rollback", DEFAULT_ALPHA, "before and after: p = 0.5",
         "before 0.8, after 0.4", lambda r, n: _pairs(r, n, 0.5, 0.5),
         lambda r, n: _pairs(r, n, 0.8, 0.4), _rollback),
    Gate("A/B 'treatment better' (two-sided)", DEFAULT_ALPHA / 2,
         "control and treatment: p = 0.5", "control 0.3, treatment 0.6",
         lambda r, n: _pairs(r, n, 0.5, 0.5), lambda r, n: _pairs(r, n, 0.3, 0.6), _ab),
    Gate(f"lifecycle promotion (bound {POLICY.promote_at})", POLICY.alpha,
         f"success rate exactly {POLICY.promote_at}", "success rate 0.9",
         lambda r, n: _rate(r, n, POLICY.promote_at), lambda r, n: _rate(r, n, 0.9), _promotion),
    Gate(f"automatic rollback (pre-promotion bound {PROMOTED_LOW})", POLICY.alpha,
         f"rate since promotion exactly {PROMOTED_LOW}", "rate since promotion 0.3",
         lambda r, n: _rate(r, n, PROMOTED_LOW), lambda r, n: _rate(r, n, 0.3), _auto_rollback),
)  # fmt: skip


@dataclass(frozen=True)
class Row:
    """One gate's results: ``false_rate[n]`` and ``power[n]`` are shares of trials in [0, 1];
    ``refuses_at_two`` says the minimum-sample rule held at n = 2 for every outcome."""

    gate: Gate
    false_rate: dict[int, float]
    power: dict[int, float]
    refuses_at_two: bool

    def bar(self, trials: int) -> float:
        """The most the false-action rate may be: alpha plus three standard errors."""
        a = self.gate.alpha
        return a + 3 * math.sqrt(a * (1 - a) / trials)


def _all_at_two(gate: Gate) -> bool:
    """The gate never acts at n = 2, whatever the outcomes."""
    if gate.acts in (_promotion, _auto_rollback):
        return not any(gate.acts((k, 2)) for k in range(3))
    tuples = [
        (a, b, c, 2 - a - b - c)
        for a in range(3) for b in range(3 - a) for c in range(3 - a - b)
    ]  # fmt: skip
    return not any(gate.acts(t) for t in tuples)


def simulate(trials: int = DEFAULT_TRIALS, seed: int = DEFAULT_SEED) -> list[Row]:
    """Every gate of :data:`GATES` under the null at :data:`SIZES` and under its effect at
    :data:`POWER_SIZES`, ``trials`` draws each, from ``numpy.random.default_rng(seed)``."""
    import numpy as np

    rows: list[Row] = []
    for index, gate in enumerate(GATES):
        cache: dict[tuple[int, ...], bool] = {}

        def decide(
            counts: tuple[int, ...],
            gate: Gate = gate,
            cache: dict[tuple[int, ...], bool] = cache,
        ) -> bool:
            if counts not in cache:
                cache[counts] = bool(gate.acts(counts))
            return cache[counts]

        false_rate: dict[int, float] = {}
        power: dict[int, float] = {}
        for n in SIZES:
            rng = np.random.default_rng([seed, index, n, 0])
            false_rate[n] = sum(decide(gate.draw_null(rng, n)) for _ in range(trials)) / trials
        for n in POWER_SIZES:
            rng = np.random.default_rng([seed, index, n, 1])
            power[n] = sum(decide(gate.draw_effect(rng, n)) for _ in range(trials)) / trials
        rows.append(Row(gate, false_rate, power, _all_at_two(gate)))
    return rows


def render_markdown(rows: list[Row], trials: int = DEFAULT_TRIALS, seed: int = DEFAULT_SEED) -> str:
    """The docs' table: gate × n → false-action rate, the bar, power at the stated effect."""
    head = (
        "| gate | alpha | false action at n = 5 | n = 20 | n = 50 | bar | refuses at n = 2 "
        "| stated effect | power at n = 20 | n = 50 |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {r.gate.name} | {r.gate.alpha:g} | "
        + " | ".join(f"{r.false_rate[n]:.4f}" for n in SIZES)
        + f" | {r.bar(trials):.4f} | {'yes' if r.refuses_at_two else 'NO'} | {r.gate.effect} | "
        + " | ".join(f"{r.power[n]:.3f}" for n in POWER_SIZES)
        + " |\n"
        for r in rows
    )
    nulls = "".join(f"- {r.gate.name}: {r.gate.null}.\n" for r in rows)
    return (
        f"<!-- generated by scripts/learning_gates.py ({trials} trials per cell, seed {seed}); "
        "do not edit -->\n" + head + body + "\nNo true effect, per gate:\n\n" + nulls
    )


__all__ = ["GATES", "Gate", "Row", "render_markdown", "simulate"]
