"""The HierarchicalOrchestrator's records: the decomposition, findings and the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chimera.economics.envelope import (
    ENVELOPE_HINT,
    Citation,
    Envelope,
    EnvelopeVerdict,
)
from chimera.fusion.accounting import (
    CallRecord,
    sum_records,
)
from chimera.protocols import Usage


class SubtaskSpec(BaseModel):
    """One subproblem of the plan: a question over a few files."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    files: list[str] = Field(min_length=1)


class Decomposition(BaseModel):
    """The top model's plan."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    subtasks: list[SubtaskSpec]


DECOMPOSE_HINT = """{"subtasks": [{"id": "s1", "question": "what to find in these files",
                "files": ["path/one.py", "path/two.md"]}]}"""


@dataclass(frozen=True, slots=True)
class Finding:
    """The outcome of one subproblem.

    ``mode`` is ``delegated`` or ``inline``; ``verdict`` the last verification (``None`` when
    the worker produced nothing, e.g. its budget refused the call); ``calls`` the worker's (or
    the top model's, inline) calls, re-asks included; ``verify_calls`` the spot-check judge's
    calls (orchestrator overhead, receipted separately).
    """

    subtask: SubtaskSpec
    mode: str
    model: str
    verdict: EnvelopeVerdict | None
    calls: tuple[CallRecord, ...]
    error: str = ""
    verify_calls: tuple[CallRecord, ...] = ()

    @property
    def verified(self) -> bool:
        return self.verdict is not None and self.verdict.ok

    @property
    def envelope(self) -> Envelope | None:
        return self.verdict.envelope if self.verdict is not None else None


@dataclass
class HierarchyResult:
    """What a run of the orchestrator produced.

    ``answer`` is the top model's synthesis; ``evidence`` the verified citations it rests on;
    ``usage`` the sum over every call (decompose, workers, re-asks, judges, synthesis).
    """

    answer: str
    findings: list[Finding]
    evidence: list[Citation]
    usage: Usage
    overhead: list[CallRecord] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "evidence": [c.model_dump(mode="json") for c in self.evidence],
            "findings": [
                {
                    "id": f.subtask.id,
                    "question": f.subtask.question,
                    "files": f.subtask.files,
                    "mode": f.mode,
                    "model": f.model,
                    "verified": f.verified,
                    "verdict": f.verdict.to_json() if f.verdict else None,
                    "error": f.error,
                    "cost_usd": sum_records(f.calls).cost_usd,
                }
                for f in self.findings
            ],
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "cost_usd": self.usage.cost_usd,
        }


WORKER_SYSTEM = (
    "You read source files and answer one question about them, with evidence. Use only the "
    "files given. For each claim cite the file and line numbers and copy a short quote "
    "exactly as it appears in the file (without the line-number prefix). If the files say "
    "nothing on the question, answer so with found=false and no evidence. Reply with ONLY one "
    "JSON object of this shape:\n" + ENVELOPE_HINT
)


def number_lines(text: str) -> str:
    """``text`` with a right-aligned 1-based line number and ``| `` before every line."""
    return "\n".join(f"{n:>5}| {line}" for n, line in enumerate(text.split("\n"), 1))
