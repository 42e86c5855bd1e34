"""SkillLifecyclePolicy: promotion, demotion, retirement and rollback on intervals, never counts.

A skill reaches a prompt only when it is **usable** — tested by the re-run gate on tasks it was
not proposed from *and* accepted by a person (:attr:`LearnedSkill.usable`) — and while it is
``provisional`` or ``promoted``. After every run that showed it, its counters move and this
policy decides its state (:func:`decide_all`, applied by :mod:`chimera.evolution.usage`):

* **retired** when the Wilson upper bound of its success rate falls below ``retire_below``
  (from any state: a skill at 0/30 is retired at once and leaves prompts);
* **demoted** when the upper bound falls below ``demote_below`` — the evidence says it is bad,
  not just unproven;
* **promoted** only with at least ``min_uses`` observed uses, a Wilson lower bound at or above
  ``promote_at`` *and* the exact one-sided binomial test of "rate > promote_at" at ``alpha``
  (:func:`chimera.stats.binomial_p`: the score test the Wilson interval inverts runs over
  alpha at some n, the exact test never does). When several skills are decided at once the
  promotion tests are Holm-corrected (:func:`chimera.stats.holm`). 1/1 never promotes.
* **rolled back** when a promoted skill's rate since promotion (at least ``min_uses`` uses)
  has a Wilson upper bound below its **pre-promotion lower bound** (recorded at promotion) and
  the exact one-sided binomial test of "rate < that bound" holds at ``alpha``:
  the previous version comes back (:meth:`SkillStore.rollback`), or it is demoted.

Counts an agent job only *claimed* (the Action: which skills its prompts held is its word,
the outcome is verify's) count toward demotion, retirement and rollback, never toward
promotion. A skill with any tainted source is never promoted automatically (a person does it,
``chimera skills promote``). Unused skills decay one step after ``decay_days``.

The thresholds are data (:class:`SkillLifecyclePolicy` fields) so a change to them goes
through a pre-registered A/B like any default (:mod:`chimera.eval.ab`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from chimera.evolution.skills import LearnedSkill, SkillState
from chimera.stats import Interval, binomial_p, holm, wilson_interval

MIN_USES = 5
"""The fewest uses any automatic promotion or rollback acts on (the gates' minimum n)."""


@dataclass(frozen=True, slots=True)
class Transition:
    """A lifecycle decision: the state a skill should be in, and why (one line).

    Attributes:
        state: the decided state.
        reason: one line.
        interval: the Wilson interval the decision rests on (``None``: no uses).
        p_value: the exact promotion test's p-value, when one was computed.
        rollback: the previous version should replace this one.
    """

    state: SkillState
    reason: str
    interval: Interval | None
    p_value: float | None = None
    rollback: bool = False

    def changed(self, skill: LearnedSkill) -> bool:
        return self.rollback or self.state is not skill.state


@dataclass(frozen=True, slots=True)
class SkillLifecyclePolicy:
    """Thresholds of the lifecycle (proportions in [0, 1]; days for decay; ``alpha`` the
    one-sided level of the promotion test; ``min_uses`` the minimum sample)."""

    promote_at: float = 0.6
    demote_below: float = 0.4
    retire_below: float = 0.2
    decay_days: int = 30
    confidence: float = 0.95
    alpha: float = 0.05
    min_uses: int = MIN_USES

    def decide(self, skill: LearnedSkill, now: datetime) -> Transition:
        """The state ``skill`` should be in at ``now`` (an aware datetime; injected, never read
        from the clock here), with promotion tested at ``alpha`` alone (see
        :func:`decide_all` for several skills at once)."""
        return decide_all(self, [skill], now)[0]

    def _single(self, skill: LearnedSkill, now: datetime) -> Transition:
        if skill.state is SkillState.RETIRED:
            return Transition(SkillState.RETIRED, "retired skills stay retired", None)
        uses = skill.uses + skill.claimed_uses
        wins = skill.successes + skill.claimed_successes
        interval = wilson_interval(wins, uses, confidence=self.confidence) if uses else None
        if self._idle(skill, now):
            down = {
                SkillState.PROMOTED: SkillState.DEMOTED,
                SkillState.PROVISIONAL: SkillState.DEMOTED,
                SkillState.DEMOTED: SkillState.RETIRED,
            }[skill.state]
            return Transition(down, f"unused for {self.decay_days}+ days", interval)
        if interval is None:
            return Transition(skill.state, "no uses yet", None)
        shown = f"{wins}/{uses} {interval.describe()}"
        if interval.high < self.retire_below:
            return Transition(
                SkillState.RETIRED, f"success {shown} below {self.retire_below}", interval
            )
        if skill.state is SkillState.PROMOTED and skill.promoted_low is not None:
            fallen = self._fallen(skill, uses, wins)
            if fallen is not None:
                return Transition(SkillState.PROVISIONAL, fallen, interval, rollback=True)
        if interval.high < self.demote_below and skill.state is not SkillState.DEMOTED:
            return Transition(
                SkillState.DEMOTED, f"success {shown} below {self.demote_below}", interval
            )
        if skill.state in (SkillState.PROMOTED, SkillState.DEMOTED):
            return Transition(skill.state, f"success {shown}: no change", interval)
        return self._promotion(skill, interval)

    def _promotion(self, skill: LearnedSkill, combined: Interval) -> Transition:
        """Whether a provisional skill earns promotion on its *observed* counts."""
        if not skill.usable:
            return Transition(
                skill.state, "not usable (untested or not accepted): never promoted", combined
            )
        n, k = skill.uses, skill.successes
        if n < self.min_uses:
            return Transition(
                skill.state,
                f"no promotion: needs at least {self.min_uses} observed uses, has {n}",
                combined,
            )
        if binomial_p(n, n, self.promote_at) > self.alpha:
            return Transition(
                skill.state,
                f"no promotion: {n} uses can never reach alpha {self.alpha} against "
                f"{self.promote_at}",
                combined,
            )
        observed = wilson_interval(k, n, confidence=self.confidence)
        p = binomial_p(k, n, self.promote_at)
        shown = f"{k}/{n} {observed.describe()}, exact p = {p:.3g}"
        if observed.low < self.promote_at or p > self.alpha:
            return Transition(skill.state, f"success {shown}: no change", observed, p)
        if not skill.trusted:
            return Transition(
                skill.state, f"success {shown} would promote, but a source run was tainted",
                observed, p,
            )  # fmt: skip
        return Transition(
            SkillState.PROMOTED, f"success {shown} at or above {self.promote_at}", observed, p
        )

    def _fallen(self, skill: LearnedSkill, uses: int, wins: int) -> str | None:
        """A one-line reason when the rate since promotion fell below the pre-promotion
        lower bound (``None``: it did not, or too few uses since)."""
        assert skill.promoted_low is not None
        post_n = uses - skill.promoted_uses
        post_k = wins - skill.promoted_successes
        if post_n < self.min_uses or not 0 <= post_k <= post_n:
            return None
        since = wilson_interval(post_k, post_n, confidence=self.confidence)
        # The exact lower tail too: the score test the Wilson bound inverts runs over its
        # nominal level at some n; the exact test never does.
        exact = binomial_p(post_n - post_k, post_n, 1 - skill.promoted_low) if (
            skill.promoted_low > 0
        ) else 1.0  # fmt: skip
        if since.high >= skill.promoted_low or exact > self.alpha:
            return None
        return (
            f"rolled back: {post_k}/{post_n} since promotion {since.describe()} fell below "
            f"the pre-promotion bound {skill.promoted_low:.3f}"
        )

    def _idle(self, skill: LearnedSkill, now: datetime) -> bool:
        stamp = skill.last_used or skill.created
        if not stamp:
            return False
        try:
            then = datetime.fromisoformat(stamp)
        except ValueError:
            return False
        return now - then > timedelta(days=self.decay_days)

    def apply(self, skill: LearnedSkill, now: datetime) -> tuple[LearnedSkill, Transition]:
        """The skill moved to its decided state, and the decision (a rollback is the caller's
        to carry out with :meth:`SkillStore.rollback`; the skill is returned unchanged)."""
        decision = self.decide(skill, now)
        return moved(skill, decision), decision


def moved(skill: LearnedSkill, decision: Transition) -> LearnedSkill:
    """``skill`` in ``decision``'s state; a promotion records the pre-promotion bound and the
    counters at promotion (what a later rollback is measured from)."""
    if decision.rollback or decision.state is skill.state:
        return skill
    if decision.state is SkillState.PROMOTED and decision.interval is not None:
        return replace(
            skill,
            state=decision.state,
            promoted_low=round(decision.interval.low, 6),
            promoted_uses=skill.uses + skill.claimed_uses,
            promoted_successes=skill.successes + skill.claimed_successes,
        )
    return replace(skill, state=decision.state)


def decide_all(
    policy: SkillLifecyclePolicy, skills: Sequence[LearnedSkill], now: datetime
) -> list[Transition]:
    """Decide several skills at once: each as :meth:`SkillLifecyclePolicy.decide` would, except
    that the promotions are Holm-corrected over every skill whose promotion was tested, so
    deciding k skills after one run does not multiply the false-promotion rate by k."""
    decided = [policy._single(s, now) for s in skills]
    tested = [
        i for i, d in enumerate(decided)
        if d.p_value is not None and skills[i].state is SkillState.PROVISIONAL
    ]  # fmt: skip
    keep = holm([decided[i].p_value or 1.0 for i in tested], policy.alpha)
    out = list(decided)
    for index, ok in zip(tested, keep, strict=True):
        d = decided[index]
        if d.state is SkillState.PROMOTED and not ok:
            out[index] = Transition(
                skills[index].state,
                f"no promotion: p = {d.p_value:.3g} does not survive Holm's correction over "
                f"{len(tested)} skills at alpha {policy.alpha}",
                d.interval,
                d.p_value,
            )
    return out


def retrievable(skill: LearnedSkill, *, include_demoted: bool = False) -> bool:
    """Whether retrieval may return ``skill``: usable (tested and accepted) and provisional
    or promoted (demoted too with ``include_demoted``)."""
    if not skill.usable:
        return False
    if skill.state in (SkillState.PROVISIONAL, SkillState.PROMOTED):
        return True
    return include_demoted and skill.state is SkillState.DEMOTED
