"""ACE's Reflector and Curator: from one attempt and its verdict to delta operations.

The **Generator** is the agent: it works with the playbook in its prompt (the bullets it was
shown are its "used" set). The **Reflector** (one model call, JSON validated) reads the
attempt, the Spec's verdict and the bullets shown, tags bullets ``helpful`` or ``harmful``,
and names new insights. The **Curator** turns that into :class:`~chimera.evolution.playbook.
Delta` operations — deterministic code, no model — so a curation can only add a bullet or
count one; it never rewrites an untouched bullet (ACE's guard against context collapse).

What is trusted: the verdict comes from the Spec, never from the Reflector; a tag naming a
bullet the attempt was not shown is dropped; a helpful tag on a failed attempt, or a harmful
tag on a passed one, is dropped too (the verdict decides the direction, the Reflector only
which bullets). Insights pass ``SkillValidator``'s text checks; insights from a tainted run are
returned as *proposals* only (the Action side), never applied here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chimera.errors import StructuredOutputError
from chimera.evolution.evidence import AttemptEvidence
from chimera.evolution.playbook import Bullet, Delta, Playbook
from chimera.governance.redactor import SecretRedactor, cut_redacted
from chimera.governance.validators import SkillValidator
from chimera.protocols import Message, Purpose, SupportsComplete

MAX_INSIGHTS = 3


class BulletTag(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    tag: Literal["helpful", "harmful", "neutral"]


class Insight(BaseModel):
    model_config = ConfigDict(extra="forbid")

    section: str = Field(min_length=1, max_length=40)
    text: str = Field(min_length=8, max_length=300)


class Reflection(BaseModel):
    """The Reflector's answer."""

    model_config = ConfigDict(extra="forbid")

    tags: list[BulletTag] = Field(default_factory=list, max_length=50)
    insights: list[Insight] = Field(default_factory=list, max_length=MAX_INSIGHTS)


SCHEMA_HINT = (
    '{"tags": [{"id": "str-00001", "tag": "helpful|harmful|neutral"}], '
    '"insights": [{"section": "Strategies|Pitfalls", "text": "one reusable lesson"}]}'
)

_SYSTEM = (
    "You are the Reflector. Given an attempt, the Spec's verdict and the playbook bullets the "
    "agent was shown, tag each shown bullet helpful, harmful or neutral for THIS attempt, and "
    f"name at most {MAX_INSIGHTS} new, general lessons (strategies or pitfalls, not facts about "
    "one file). Answer with ONLY one JSON object of this shape:\n" + SCHEMA_HINT
)


@dataclass(frozen=True)
class Reflected:
    """The Reflector's checked output: tags kept, insights kept, and what was dropped."""

    tags: tuple[BulletTag, ...]
    insights: tuple[Insight, ...]
    dropped: tuple[str, ...]


def reflect(
    backend: SupportsComplete,
    evidence: AttemptEvidence,
    shown: Sequence[Bullet],
    *,
    validator: SkillValidator | None = None,
    max_tokens: int | None = None,
    redactor: SecretRedactor | None = None,
) -> Reflected:
    """Ask the Reflector (purpose ``summarize``) about one attempt (``max_tokens``: the cap
    on each answer; ``None``: the backend's default). A dropped insight is quoted in
    ``dropped`` redacted with ``redactor`` (default: the process environment's) before it is
    cut, so a cut through a credential keeps no piece of it.

    Raises:
        ProviderError, BudgetExceeded: from the backend (an answer still invalid after the
            repair round is returned as no tags and no insights, with the reason in
            ``dropped``).
    """
    from chimera.fusion.structured import ask_structured
    from chimera.governance.sanitize import fence_untrusted, sanitize

    task = fence_untrusted(evidence.task, "task") if evidence.tainted else sanitize(evidence.task)
    user = json.dumps(
        {
            "verdict": evidence.verdict,
            "accepted_by_the_spec": evidence.accepted,
            "diff_excerpt": cut_redacted(evidence.diff, 3000, redactor=redactor),
            "bullets_shown": [{"id": b.id, "text": b.text} for b in shown],
        },
        indent=1,
    )
    messages: list[Message] = [
        {"role": "system", "content": _SYSTEM},
        # The attempt is data: its diff is the agent's, its bullets are model-written lessons.
        {
            "role": "user",
            "content": f"Task:\n{task}\n\nAttempt:\n{fence_untrusted(user, 'attempt record')}",
        },
    ]
    try:
        answer, _ = ask_structured(
            backend, messages, Reflection, schema_hint=SCHEMA_HINT, role="reflector",
            name="reflector", purpose=Purpose.SUMMARIZE, max_tokens=max_tokens,
        )  # fmt: skip
    except StructuredOutputError as exc:
        return Reflected((), (), (f"reflection unusable: {exc}",))
    ids = {b.id for b in shown}
    wrong = "helpful" if not evidence.accepted else "harmful"
    tags: list[BulletTag] = []
    dropped: list[str] = []
    for tag in answer.tags:
        if tag.id not in ids:
            dropped.append(f"tag on {tag.id}: the attempt was not shown that bullet")
        elif tag.tag == wrong:
            dropped.append(f"tag on {tag.id}: {tag.tag} contradicts the verdict")
        elif tag.tag != "neutral":
            tags.append(tag)
    checker = validator or SkillValidator()
    insights: list[Insight] = []
    for insight in answer.insights:
        problems = checker.validate("insight", insight.text).problems
        if problems:
            shown_text = cut_redacted(insight.text, 40, redactor=redactor)
            dropped.append(f"insight {shown_text!r}: {problems[0]}")
        else:
            insights.append(insight)
    return Reflected(tuple(tags), tuple(insights), tuple(dropped))


def curate(reflected: Reflected) -> list[Delta]:
    """The Curator: tags become counter deltas, insights become ``add`` deltas (an add whose
    text already exists counts that bullet helpful instead: :meth:`Playbook.apply`)."""
    deltas: list[Delta] = []
    for t in reflected.tags:
        if t.tag == "helpful":
            deltas.append(Delta(op="helpful", bullet_id=t.id))
        elif t.tag == "harmful":
            deltas.append(Delta(op="harmful", bullet_id=t.id))
    deltas += [Delta(op="add", section=i.section.strip(), text=i.text) for i in reflected.insights]
    return deltas


def shown_bullets(book: Playbook, rendered: str) -> list[Bullet]:
    """The bullets of ``book`` that appear in ``rendered`` (what the Generator was shown)."""
    return [b for _, b in book.bullets() if f"[{b.id}]" in rendered]


__all__ = ["Reflected", "Reflection", "curate", "reflect", "shown_bullets"]
