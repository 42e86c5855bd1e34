"""The designer: a budgeted, audited agent that proposes candidate profiles for a task family.

It is a :class:`~chimera.crews.agent.RoleAgent` (the same Agent loop as every run) on a
backend the caller budgets, reading a workspace that holds the project and the **visible**
requirements only, with the read-only part of its own allowlist. Its prompt holds each task's
words and visible requirement ids — never a held-out requirement. Its answer is data: each
```` ```yaml ```` block is one candidate, validated like a profile file
(:func:`~chimera.meta.loader.check_profile_text`, ``file:line:col`` relative to the answer);
an invalid or surplus candidate is reported, never run. Every model call and tool call is an
audit event (``crew.call`` / ``crew.tool`` with crew ``meta``), and the answer's digest is
``meta.design``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from chimera.crews.agent import RoleAgent, RoleOutput
from chimera.crews.model import Role
from chimera.errors import SpecProblem
from chimera.meta.family import TaskFamily
from chimera.meta.loader import check_profile_text
from chimera.meta.profile import AGENT_TOOLS, READ_ONLY_TOOLS, Profile
from chimera.protocols import AuditSink, Purpose, SupportsComplete, ToolCaller

__all__ = ["Design", "design_prompt", "parse_candidates", "run_designer"]

_BLOCK = re.compile(r"^```ya?ml[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)

FORMAT = """\
A profile is YAML, one per ```yaml block:

profile: NAME                 # a letter, then letters, digits, '_' or '-'
description: one line
instructions: |               # appended to the agent's system prompt
  ...
tools: [read_file, ...]       # an allowlist from: {tools}
model: MODEL                  # or rung: N (the run's ladder), or neither
budget: {{tokens: N}}           # and/or usd: X
skills: []                    # skill names from the project's skill store
solver: {{max_attempts: 2, max_steps: 12}}
"""


@dataclass
class Design:
    """What the designer proposed.

    Attributes:
        candidates: valid profiles, in answer order (at most ``max_candidates``).
        rejected: ``(label, problems)`` for each invalid or surplus block.
        output: the designer's answer and spend.
        digest: SHA-256 of the answer text.
    """

    candidates: list[Profile] = field(default_factory=list)
    rejected: list[tuple[str, list[str]]] = field(default_factory=list)
    output: RoleOutput | None = None
    digest: str = ""


def design_prompt(family: TaskFamily) -> str:
    """The designer's task: the family's tasks (words and visible requirement ids only), its
    allowlist and the profile format. Held-out requirements are never read here."""
    lines = [
        f"Design up to {family.designer.max_candidates} agent profile(s) for the task family "
        f"'{family.family}'. Each profile is run on every task below; the Spec decides.",
        "",
        "## Tasks",
    ]
    for task in family.tasks:
        lines.append(f"- {task.id}: {task.task}")
        lines.append(f"  must pass: {', '.join(task.visible_ids)}")
    lines += [
        "",
        "The project and the visible Spec (specs/) are in your workspace; read them.",
        f"Candidates may use only these tools: {', '.join(family.designer.tools)}.",
        "",
        FORMAT.format(tools=", ".join(AGENT_TOOLS)),
    ]
    return "\n".join(lines)


def parse_candidates(answer: str, *, max_candidates: int) -> Design:
    """Each ```` ```yaml ```` block of ``answer`` validated as a profile (see the module
    docstring). Duplicate names and blocks past ``max_candidates`` are rejected."""
    design = Design()
    seen: set[str] = set()
    for n, match in enumerate(_BLOCK.finditer(answer), start=1):
        label = f"designer answer, block {n}"
        offset = answer.count("\n", 0, match.start(1))
        checked = check_profile_text(match.group(1), label, line_offset=offset)
        if checked.profile is None:
            design.rejected.append((label, [_shown(p) for p in checked.problems]))
        elif checked.profile.name in seen:
            design.rejected.append((label, [f"duplicate profile '{checked.profile.name}'"]))
        elif len(design.candidates) >= max_candidates:
            design.rejected.append(
                (label, [f"past the family's max_candidates ({max_candidates})"])
            )
        else:
            seen.add(checked.profile.name)
            design.candidates.append(checked.profile)
    return design


def _shown(problem: SpecProblem) -> str:
    return f"{problem.line}:{problem.col}: {problem.message}" if problem.line else problem.message


def run_designer(
    family: TaskFamily,
    backend: SupportsComplete,
    *,
    tools: ToolCaller | None,
    audit: AuditSink,
) -> Design:
    """Run the designer once on ``backend`` (already budgeted) with ``tools`` (the designer
    workspace's governed tools; the role sees only the read-only ones of its allowlist).
    Budget refusals and provider errors end the run with that outcome; never raises for
    them (an empty design says why)."""
    role = Role(
        name="designer",
        goal="Propose agent profiles likely to solve every task of the family in general.",
        instructions=(
            "Study the project and the visible requirements. A profile that passes the "
            "visible checks by special-casing them is worthless: it is also judged on "
            "checks you cannot see."
        ),
        tools=[t for t in family.designer.tools if t in READ_ONLY_TOOLS],
        max_steps=family.designer.max_steps,
    )
    agent = RoleAgent(role, backend, tools, crew="meta", audit=audit, purpose=Purpose.PLAN)
    output = agent.run(design_prompt(family))
    design = parse_candidates(output.text, max_candidates=family.designer.max_candidates)
    design.output = output
    design.digest = hashlib.sha256(output.text.encode("utf-8")).hexdigest()
    fields: dict[str, Any] = {
        "family": family.family,
        "outcome": output.outcome,
        "answer_sha256": design.digest,
        "candidates": [p.name for p in design.candidates],
        "rejected": [label for label, _ in design.rejected],
        "tokens": output.usage.total_tokens,
    }
    audit.append("meta.design", **fields)
    return design
