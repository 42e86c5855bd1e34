"""Learning in the Action: the agent job only *proposes*; the publish side decides what to keep.

Every Action run starts from an issue's text, so everything it learns is tainted. The agent
job (no write token) may write a :class:`LearningProposal` — skills and playbook bullets,
provisional and untrusted — into its artifact; it never stores them. The publish side (the
App identity, which writes the memory branch store) reads the artifact as *data* and applies
:func:`publish_acceptance`, a pure function, using only what it re-derived itself: the run's
verdict and diff size (from its own verification), and the current store. Validation
re-runs happen later, in ``chimera evolve`` (dispatched through the normal decide → agent →
verify → publish flow with a budget); a person promotes with ``chimera skills promote``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chimera.evolution.propose import validate_skill
from chimera.evolution.skills import LearnedSkill, SkillState
from chimera.governance.redactor import cut_redacted
from chimera.governance.validators import SkillValidator


class ProposedBullet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    section: str = Field(min_length=1, max_length=40)
    text: str = Field(min_length=8, max_length=300)


class LearningProposal(BaseModel):
    """What an agent job may hand the publish side (JSON in its artifact).

    ``skills`` are ``SKILL.md`` texts; ``bullets`` are new playbook bullets (counter changes
    are never accepted from the Action: they would let an issue vote its own bullets up).
    """

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    run_id: str = Field(min_length=1)
    skills: list[str] = Field(default_factory=list, max_length=5)
    bullets: list[ProposedBullet] = Field(default_factory=list, max_length=10)


def action_proposal(
    run_id: str, skills: Sequence[LearnedSkill], bullets: Sequence[tuple[str, str]]
) -> LearningProposal:
    """The agent job's proposal: every skill forced provisional and untrusted."""
    marked = [
        replace(s, state=SkillState.PROVISIONAL, trusted=False, sources=(run_id,), uses=0,
                successes=0).to_markdown()
        for s in skills
    ]  # fmt: skip
    items = [ProposedBullet(section=sec, text=text) for sec, text in bullets]
    return LearningProposal(run_id=run_id, skills=marked, bullets=items)


@dataclass(frozen=True)
class Acceptance:
    """What the publish side stores (skills provisional and tainted; bullets as ``add``s),
    and one line per refused item."""

    skills: tuple[LearnedSkill, ...]
    bullets: tuple[tuple[str, str], ...]
    refused: tuple[str, ...]


def publish_acceptance(
    artifact: Mapping[str, Any],
    *,
    verdict: str,
    files_changed: int,
    existing: Mapping[str, LearnedSkill],
    validator: SkillValidator | None = None,
) -> Acceptance:
    """Decide what of an agent job's ``artifact`` the publish side keeps.

    Args:
        artifact: the proposal as parsed JSON (untrusted).
        verdict, files_changed: the run's verdict and diff size as the publish side
            re-derived them (never the artifact's claim).
        existing: the store's current skills by name.

    Returns:
        :class:`Acceptance`. Nothing is kept unless the re-derived verdict is ``passed`` with
        a non-empty diff (the diff-gate); a skill is kept only provisional and tainted, only
        if it passes the AgentSkills format and ``SkillValidator``, and never over a promoted
        skill (a tainted run cannot replace what a person promoted).
    """
    checker = validator or SkillValidator()
    try:
        proposal = LearningProposal.model_validate(artifact)
    except ValidationError as exc:
        return Acceptance((), (), (f"not a learning proposal: {exc.errors()[0]['msg']}",))
    if verdict != "passed" or files_changed <= 0:
        why = "a hollow success" if verdict == "passed" else f"verdict {verdict}"
        return Acceptance((), (), (f"run {proposal.run_id}: {why}; nothing learned from it",))
    from chimera.errors import ConfigError

    kept: list[LearnedSkill] = []
    refused: list[str] = []
    for number, text in enumerate(proposal.skills, 1):
        try:
            skill = LearnedSkill.from_markdown(text, source=f"skill {number}")
        except ConfigError as exc:
            refused.append(str(exc))
            continue
        # Every claim about the skill's history is the artifact's word: reset it.
        skill = replace(
            skill, state=SkillState.PROVISIONAL, trusted=False, sources=(proposal.run_id,),
            uses=0, successes=0, version=1, last_used="",
        )  # fmt: skip
        problems = validate_skill(skill, checker)
        current = existing.get(skill.name)
        if problems:
            refused.append(f"skill {skill.name}: {problems[0]}")
        elif current is not None and current.state is SkillState.PROMOTED:
            refused.append(
                f"skill {skill.name}: promoted by a person; a tainted run cannot replace it"
            )
        else:
            kept.append(skill)
    bullets: list[tuple[str, str]] = []
    for item in proposal.bullets:
        problems = checker.validate("bullet", item.text).problems
        if problems:
            # Redacted before the cut: a cut through a token keeps a piece no redactor finds.
            refused.append(f"bullet {cut_redacted(item.text, 40)!r}: {problems[0]}")
        else:
            bullets.append((item.section, " ".join(item.text.split())))
    return Acceptance(tuple(kept), tuple(bullets), tuple(refused))
