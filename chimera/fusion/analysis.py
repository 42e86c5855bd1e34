"""The judge's structured analysis of a fusion panel's answers.

The judge does not pick a winner: it maps the answers (consensus, contradictions, partial
coverage, unique insights, blind spots) and the synthesizer writes the final answer from that
map. (OpenRouter Fusion: the gain comes from the synthesis step over an explicit comparison,
not from model diversity alone.) The schema is strict about the five sections — each must be
present, possibly empty, so a lazy ``{}`` is rejected and repaired — and lenient about spelling
(``"Partial coverage"``, ``"blind-spots"`` are accepted) and about extra keys.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chimera.protocols import Message


def _norm_keys(data: Any) -> Any:
    if isinstance(data, Mapping):
        return {
            str(k).strip().lower().replace(" ", "_").replace("-", "_"): v for k, v in data.items()
        }
    return data


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        return _norm_keys(data)


class Contradiction(_Lenient):
    """Members disagree on ``point``; ``positions`` maps member name → its claim."""

    point: str
    positions: dict[str, str]
    resolution: str = ""
    """The judge's reading of which position holds and why, or ``""`` when undecidable."""


class PartialCoverage(_Lenient):
    """``point`` is addressed by some members only."""

    point: str
    covered_by: list[str]
    missing_from: list[str] = Field(default_factory=list)


class UniqueInsight(_Lenient):
    """Something only ``member`` said, worth keeping if it holds."""

    member: str
    insight: str


class FusionAnalysis(_Lenient):
    """The judge's map of the panel's answers; all five sections are required."""

    consensus: list[str]
    contradictions: list[Contradiction]
    partial_coverage: list[PartialCoverage]
    unique_insights: list[UniqueInsight]
    blind_spots: list[str]

    def member_problems(self, members: Sequence[str]) -> list[str]:
        """Names this analysis attributes to members that were not on the panel."""
        known = set(members)
        problems: list[str] = []
        for i, c in enumerate(self.contradictions):
            problems += [
                f"contradictions.{i}.positions: unknown member {m!r}"
                for m in c.positions
                if m not in known
            ]
        for i, p in enumerate(self.partial_coverage):
            problems += [
                f"partial_coverage.{i}: unknown member {m!r}"
                for m in (*p.covered_by, *p.missing_from)
                if m not in known
            ]
        problems += [
            f"unique_insights.{i}.member: unknown member {u.member!r}"
            for i, u in enumerate(self.unique_insights)
            if u.member not in known
        ]
        if problems:
            problems.append(f"members are exactly: {', '.join(sorted(known))}")
        return problems

    def render(self) -> str:
        """The analysis as indented JSON, the form the synthesizer reads."""
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False)


SCHEMA_HINT = """{
  "consensus": ["claim every answer agrees on", ...],
  "contradictions": [{"point": "...", "positions": {"<member>": "its claim", ...},
                      "resolution": "which holds and why, or empty if undecidable"}],
  "partial_coverage": [{"point": "...", "covered_by": ["<member>"], "missing_from": ["<member>"]}],
  "unique_insights": [{"member": "<member>", "insight": "..."}],
  "blind_spots": ["what no answer addressed but the request needs"]
}"""

JUDGE_SYSTEM = (
    "You are the judge of a panel of models that answered the same request independently. "
    "Do not answer the request and do not pick a winner. Compare the answers and map them: "
    "consensus (claims all answers share), contradictions (where they disagree, with each "
    "member's position and, when you can tell, which holds), partial coverage (points only "
    "some answers address), unique insights (valuable points made by one member), and blind "
    "spots (what the request needs that no answer covers). Use the member names exactly as "
    "given. Reply with ONLY one JSON object of this shape:\n" + SCHEMA_HINT
)

SYNTHESIS_INSTRUCTIONS = (
    "Independent drafts of an answer to the conversation above were compared by a judge. "
    "Write the single final answer to the last request, grounded in the judge's analysis: "
    "keep the consensus, settle each contradiction (follow the resolution, or state the "
    "uncertainty), complete the partially covered points, keep unique insights that hold, and "
    "address the blind spots. Reply with the answer only; do not mention drafts, members, the "
    "judge or this process."
)


def render_transcript(messages: Sequence[Message]) -> str:
    """A plain-text rendering of a conversation for the judge (roles kept, tool noise short)."""
    parts: list[str] = []
    for msg in messages:
        role = str(msg.get("role", "user"))
        content = msg.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, default=str)
        parts.append(f"[{role}]\n{content}")
    return "\n\n".join(parts)


def judge_messages(messages: Sequence[Message], answers: Mapping[str, str]) -> list[Message]:
    """The judge's request: the original conversation and each member's answer, labelled."""
    blocks = "\n\n".join(
        f'<answer member="{name}">\n{text}\n</answer>' for name, text in answers.items()
    )
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {
            "role": "user",
            "content": (
                "<conversation>\n"
                + render_transcript(messages)
                + "\n</conversation>\n\n"
                + blocks
                + "\n\nMembers: "
                + ", ".join(answers)
            ),
        },
    ]


def synthesis_messages(
    messages: Sequence[Message], answers: Mapping[str, str], analysis: FusionAnalysis
) -> list[Message]:
    """The synthesizer's request: the original conversation, then drafts and the analysis."""
    drafts = "\n\n".join(
        f'<draft member="{name}">\n{text}\n</draft>' for name, text in answers.items()
    )
    return [
        *messages,
        {
            "role": "user",
            "content": (
                SYNTHESIS_INSTRUCTIONS
                + "\n\n<drafts>\n"
                + drafts
                + "\n</drafts>\n\n<analysis>\n"
                + analysis.render()
                + "\n</analysis>"
            ),
        },
    ]
