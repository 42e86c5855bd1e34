"""SkillLifecyclePolicy: promotion, demotion, decay and retirement on intervals, never counts.

A skill is born ``provisional``. Its success rate when in context gets a Wilson interval
(:func:`chimera.stats.wilson_interval`); it is **promoted** only when the interval's lower
bound clears ``promote_at`` (1/1 never does: its lower bound is about 0.21), and **demoted**
when the upper bound falls below ``demote_below`` — the evidence says it is bad, not just
unproven. A demoted skill whose upper bound falls below ``retire_below`` is **retired**.
Unused skills decay: ``decay_days`` without use moves a skill one step down. A skill with any
tainted source is never promoted automatically (a person does it, ``chimera skills promote``).
Demoted and retired skills are not retrieved by default.

The thresholds are data (:class:`SkillLifecyclePolicy` fields) so a change to them goes
through a pre-registered A/B like any default (:mod:`chimera.eval.ab`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from chimera.evolution.skills import LearnedSkill, SkillState
from chimera.stats import Interval, wilson_interval


@dataclass(frozen=True, slots=True)
class Transition:
    """A lifecycle decision: the state a skill should be in, and why (one line)."""

    state: SkillState
    reason: str
    interval: Interval | None

    def changed(self, skill: LearnedSkill) -> bool:
        return self.state is not skill.state


@dataclass(frozen=True, slots=True)
class SkillLifecyclePolicy:
    """Thresholds of the lifecycle (proportions in [0, 1]; days for decay)."""

    promote_at: float = 0.6
    demote_below: float = 0.4
    retire_below: float = 0.2
    decay_days: int = 30
    confidence: float = 0.95

    def decide(self, skill: LearnedSkill, now: datetime) -> Transition:
        """The state ``skill`` should be in at ``now`` (an aware datetime; injected, never read
        from the clock here)."""
        if skill.state is SkillState.RETIRED:
            return Transition(SkillState.RETIRED, "retired skills stay retired", None)
        interval = (
            wilson_interval(skill.successes, skill.uses, confidence=self.confidence)
            if skill.uses
            else None
        )
        if self._idle(skill, now):
            down = {
                SkillState.PROMOTED: SkillState.DEMOTED,
                SkillState.PROVISIONAL: SkillState.DEMOTED,
                SkillState.DEMOTED: SkillState.RETIRED,
            }[skill.state]
            return Transition(down, f"unused for {self.decay_days}+ days", interval)
        if interval is None:
            return Transition(skill.state, "no uses yet", None)
        shown = interval.describe()
        if interval.high < self.retire_below and skill.state is SkillState.DEMOTED:
            return Transition(
                SkillState.RETIRED, f"success {shown} below {self.retire_below}", interval
            )
        if interval.high < self.demote_below and skill.state is not SkillState.DEMOTED:
            return Transition(
                SkillState.DEMOTED, f"success {shown} below {self.demote_below}", interval
            )
        if interval.low >= self.promote_at and skill.state is not SkillState.PROMOTED:
            if not skill.trusted:
                return Transition(
                    skill.state, f"success {shown} would promote, but a source run was tainted",
                    interval,
                )  # fmt: skip
            return Transition(
                SkillState.PROMOTED, f"success {shown} at or above {self.promote_at}", interval
            )
        return Transition(skill.state, f"success {shown}: no change", interval)

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
        """The skill moved to its decided state, and the decision."""
        decision = self.decide(skill, now)
        return replace(skill, state=decision.state), decision


def retrievable(skill: LearnedSkill, *, include_demoted: bool = False) -> bool:
    """Whether retrieval may return ``skill`` (provisional and promoted by default)."""
    if skill.state in (SkillState.PROVISIONAL, SkillState.PROMOTED):
        return True
    return include_demoted and skill.state is SkillState.DEMOTED
