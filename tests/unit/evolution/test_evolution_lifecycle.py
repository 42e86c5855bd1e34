"""The lifecycle on real counts: retire at 0/30, minimum uses, Holm, claims, rollback."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chimera.errors import UsageError
from chimera.evolution.lifecycle import SkillLifecyclePolicy, decide_all, moved, retrievable
from chimera.evolution.skills import LearnedSkill, SkillState, SkillStore

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def _skill(**kw: object) -> LearnedSkill:
    base = LearnedSkill(
        name="use-pluralize",
        description="Plural nouns come from inflection.pluralize.",
        body="Call inflection.pluralize(noun).\n",
        trusted=True,
        created=NOW.isoformat(),
        last_used=NOW.isoformat(),
        tested="re-run gate: 5 gained, 0 lost of 5",
        accepted_by="alice",
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_a_skill_at_zero_of_thirty_is_retired_at_once_and_leaves_prompts() -> None:
    skill = _skill(uses=30, successes=0)
    assert retrievable(skill)
    decision = SkillLifecyclePolicy().decide(skill, NOW)
    assert decision.state is SkillState.RETIRED
    assert not retrievable(moved(skill, decision), include_demoted=True)


def test_untested_or_unaccepted_skills_never_reach_a_prompt() -> None:
    assert not retrievable(_skill(tested=""))
    assert not retrievable(_skill(accepted_by=""))
    assert retrievable(_skill())


def test_promotion_needs_the_minimum_sample_and_says_why() -> None:
    decision = SkillLifecyclePolicy().decide(_skill(uses=2, successes=2), NOW)
    assert decision.state is SkillState.PROVISIONAL
    assert decision.reason == "no promotion: needs at least 5 observed uses, has 2"
    assert SkillLifecyclePolicy().decide(_skill(uses=20, successes=20), NOW).state is (
        SkillState.PROMOTED
    )


def test_claimed_uses_demote_or_retire_but_never_promote() -> None:
    policy = SkillLifecyclePolicy()
    claimed_good = _skill(claimed_uses=40, claimed_successes=40)
    assert policy.decide(claimed_good, NOW).state is SkillState.PROVISIONAL
    claimed_bad = _skill(claimed_uses=30, claimed_successes=0)
    assert policy.decide(claimed_bad, NOW).state is SkillState.RETIRED


def test_promotions_decided_together_are_holm_corrected() -> None:
    policy = SkillLifecyclePolicy()
    # 17/20 against 0.6: exact p = 0.016 alone (promotes), but with a second skill at the
    # same p Holm needs p <= 0.025 for the first and 0.05 for the second: both survive;
    # with four such skills the first needs 0.0125 and none survives.
    one = _skill(uses=20, successes=17)
    assert policy.decide(one, NOW).state is SkillState.PROMOTED
    four = [replace(one, name=f"skill-{i}") for i in range(4)]
    decided = decide_all(policy, four, NOW)
    assert all(d.state is SkillState.PROVISIONAL for d in decided)
    assert "Holm" in decided[0].reason


def test_a_promoted_skill_that_falls_below_its_pre_promotion_bound_is_rolled_back(
    tmp_path: Path,
) -> None:
    policy = SkillLifecyclePolicy()
    store = SkillStore(tmp_path)
    store.mint(_skill(body="First version.\n"))
    second = store.mint(_skill(body="Second version.\n", uses=20, successes=20))
    promoted = moved(second, policy.decide(second, NOW))
    assert promoted.state is SkillState.PROMOTED and promoted.promoted_low is not None
    store.put(promoted)
    assert store.get("use-pluralize") == promoted  # the bound survives the SKILL.md round trip
    fell = replace(promoted, uses=30, successes=21)  # 1/10 since promotion
    decision = policy.decide(fell, NOW)
    assert decision.rollback and "pre-promotion bound" in decision.reason
    before, after = store.rollback("use-pluralize")
    assert (before.version, after.version) == (2, 1)
    assert "First version." in after.body
    assert "chimera-state: retired" in (tmp_path / "use-pluralize" / "v2.md").read_text()
    third = store.mint(_skill(body="Third version.\n"))
    assert third.version == 3  # the retired v2 is never overwritten


def test_rollback_without_an_earlier_version_demotes(tmp_path: Path) -> None:
    store = SkillStore(tmp_path)
    store.mint(_skill())
    _, after = store.rollback("use-pluralize")
    assert after.state is SkillState.DEMOTED and not retrievable(after)
    with pytest.raises(UsageError, match="no skill named"):
        store.rollback("nope")
