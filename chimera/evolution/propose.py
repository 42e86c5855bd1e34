"""Proposing a skill: one model call answering JSON, validated twice before anything runs.

The proposer sees what an accepted attempt did (the task, the requirements it made green, the
diff) and names the reusable *strategy* as a prompt template: a name, a description, when to
use it, and a Markdown body. Its answer is data: it is parsed against :class:`SkillProposal`
(pydantic, one repair round through :func:`chimera.fusion.structured.ask_structured`), then
checked by :class:`~chimera.governance.validators.SkillValidator` (control tokens, override
phrases, embedded commands the TrustKernel would stop, placeholder injection) and by the
AgentSkills format (:meth:`LearnedSkill.problems`). A proposal failing either is rejected
with every reason; nothing repairs it silently.

Text from a tainted run (an issue's words) reaches the proposer fenced as data, and the skill
it yields is marked untrusted (never promoted automatically).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel, ConfigDict, Field

from chimera.errors import StructuredOutputError
from chimera.evolution.evidence import AttemptEvidence
from chimera.evolution.skills import MAX_DESCRIPTION, LearnedSkill
from chimera.governance.redactor import cut_redacted
from chimera.governance.validators import SkillValidator
from chimera.protocols import Message, Purpose, SupportsComplete

DIFF_CHARS = 6000
"""The longest diff excerpt a proposal prompt carries (characters)."""


class SkillProposal(BaseModel):
    """The proposer's answer (every field required; unknown keys rejected)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=MAX_DESCRIPTION)
    when_to_use: str = Field(default="", max_length=300)
    body: str = Field(min_length=1, max_length=8000)


SCHEMA_HINT = (
    '{"name": "lowercase-hyphenated-name", "description": "what it does and when to use it", '
    '"when_to_use": "one trigger line", "body": "Markdown guidance: the strategy, not code"}'
)

_SYSTEM = (
    "You turn one verified change into a reusable skill: a short prompt template that would "
    "help an agent do similar tasks. Name the strategy and the rule it followed, not the "
    "specific file. Never include shell commands, secrets, or instructions about rules, "
    "tests or safety. Answer with ONLY one JSON object of this shape:\n" + SCHEMA_HINT
)


@dataclass(frozen=True, slots=True)
class Proposed:
    """A proposal's result: the skill when valid, else every problem (one sentence each)."""

    skill: LearnedSkill | None
    problems: tuple[str, ...]
    tokens: int


def proposal_messages(evidence: AttemptEvidence) -> list[Message]:
    """The proposer's prompt for ``evidence``: when the run was tainted, the task, the
    requirement ids and the diff are each fenced as data (the agent that wrote the diff read
    untrusted text; the ids may come from an issue's acceptance block)."""
    from chimera.governance.sanitize import fence_untrusted, one_line, sanitize

    diff = cut_redacted(evidence.diff, DIFF_CHARS)  # redacted before the cut
    if len(evidence.diff) > DIFF_CHARS:
        diff += f"\n[... {len(evidence.diff) - DIFF_CHARS} more characters]"
    targets = ", ".join(evidence.targets) or "-"
    if evidence.tainted:
        user = (
            f"Task:\n{fence_untrusted(evidence.task, 'task (untrusted)')}\n\n"
            "Requirements it made green:\n"
            f"{fence_untrusted(targets, 'requirement ids (untrusted)')}\n\n"
            f"The accepted diff:\n{fence_untrusted(diff, 'diff (untrusted)')}"
        )
    else:
        user = (
            f"Task:\n{sanitize(evidence.task)}\n\nRequirements it made green: "
            f"{one_line(targets)}\n\nThe accepted diff:\n```diff\n{diff}\n```"
        )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def validate_skill(skill: LearnedSkill, validator: SkillValidator) -> tuple[str, ...]:
    """Every reason ``skill`` may not be kept: the AgentSkills format, then SkillValidator."""
    found = [*skill.problems()]
    found += validator.validate(skill.name, skill.body, skill.description).problems
    if skill.when_to_use:
        found += validator.validate(skill.name, skill.when_to_use).problems
    return tuple(dict.fromkeys(found))


def propose_skill(
    backend: SupportsComplete,
    evidence: AttemptEvidence,
    *,
    validator: SkillValidator | None = None,
    created: str = "",
    max_tokens: int | None = None,
) -> Proposed:
    """Ask ``backend`` (purpose ``summarize``) for a skill distilled from ``evidence``.

    The evidence must already have passed the diff-gate (the caller's job). ``created`` is
    the mint time (ISO-8601; the skill's default when empty); ``max_tokens`` caps each
    answer (``None``: the backend's default).

    Returns:
        :class:`Proposed`: a provisional skill (trusted only when the run was) or problems.

    Raises:
        ProviderError, BudgetExceeded: from the backend, unchanged.
    """
    from chimera.fusion.structured import ask_structured

    try:
        answer, calls = ask_structured(
            backend,
            proposal_messages(evidence),
            SkillProposal,
            schema_hint=SCHEMA_HINT,
            role="skill-proposer",
            name="proposer",
            purpose=Purpose.SUMMARIZE,
            max_tokens=max_tokens,
        )
    except StructuredOutputError as exc:
        spent = sum(getattr(getattr(c, "usage", None), "total_tokens", 0) for c in exc.calls)
        return Proposed(None, (f"the proposal is not valid JSON of the skill shape: {exc}",), spent)
    tokens = sum(c.usage.total_tokens for c in calls)
    skill = LearnedSkill(
        name=answer.name.strip(),
        description=" ".join(answer.description.split()),
        body=answer.body.strip() + "\n",
        when_to_use=" ".join(answer.when_to_use.split()),
        trusted=not evidence.tainted,
        sources=(evidence.run_id,),
    )
    if created:
        skill = replace(skill, created=created)
    problems = validate_skill(skill, validator or SkillValidator())
    return Proposed(None if problems else skill, problems, tokens)
