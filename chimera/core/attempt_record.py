"""One attempt's record: verdict, cause, capped verifier output and diff, first failing step
(:mod:`chimera.core.attempts`, rules 1 and 3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from chimera.core.failure_signature import FailureSignature, Verdict, cap_text

DIFF_TRUNCATION_MARKER = "\n[... diff truncated: {dropped} more characters not shown ...]"


VERIFIER_OUTPUT_CHARS = 1500
"""Cap on the verifier output kept per record (characters)."""

GIST_CHARS = 400
"""Cap on :meth:`AttemptRecord.gist` (characters)."""

_HEADER = re.compile(r"^\[([^\]\s]+)\] (?:failed|error):")
_ERROR_LINE = re.compile(
    r"(?i)\b(error|exception|traceback|assert\w*|failed|failure|fatal|not found|no such|"
    r"undefined|cannot|refused|denied|timed? ?out|does not define|found:)\b|^E\s"
)


@dataclass(frozen=True)
class AttemptRecord:
    """What one attempt did and why it failed (or passed).

    Attributes:
        number: 1-based attempt number within the run.
        verdict: how it ended.
        signature: normalised failure signature (dedupe key).
        cause: one human line naming why it failed.
        verifier_output: the red requirements rendered with evidence, capped.
        diff: the real unified diff the attempt wrote, capped at ``record_diff_chars`` with a
            truncation marker (the full diff is at ``diff_path``).
        diff_chars: length of the full diff in characters.
        files_changed, added, removed: diff stats (files, added and removed lines).
        first_failing_step: the first tool step that failed (``"step 3: edit_file: ..."``).
        agent_outcome: the Agent's outcome (``finished``, ``step_limit``...).
        review: the manager review's reason, when it rejected the attempt.
        model: the model (ladder rung) that made the attempt.
        tokens: tokens spent by the attempt; cost_usd is ``None`` when unknown.
        diff_path: where the full diff was saved, relative to the run folder.
    """

    number: int
    verdict: Verdict
    signature: FailureSignature
    cause: str
    verifier_output: str = ""
    diff: str = ""
    diff_chars: int = 0
    files_changed: int = 0
    added: int = 0
    removed: int = 0
    first_failing_step: str | None = None
    agent_outcome: str = ""
    review: str | None = None
    model: str = ""
    tokens: int = 0
    cost_usd: float | None = None
    diff_path: str | None = None

    @classmethod
    def build(
        cls,
        *,
        number: int,
        verdict: Verdict,
        signature: FailureSignature,
        cause: str,
        verifier_output: str,
        diff: str,
        record_diff_chars: int = 2000,
        **rest: Any,
    ) -> AttemptRecord:
        """A record with its diff and verifier output capped (rule 4 of the note)."""
        return cls(
            number=number,
            verdict=verdict,
            signature=signature,
            cause=cause,
            verifier_output=cap_text(verifier_output, VERIFIER_OUTPUT_CHARS),
            diff=cap_text(diff, record_diff_chars, DIFF_TRUNCATION_MARKER),
            diff_chars=len(diff),
            **rest,
        )

    def gist(self, limit: int = GIST_CHARS) -> str:
        """Why it failed, in one bounded line: the failing requirement ids, the first error
        line of the verifier's evidence (else its first evidence line), and the first failing
        tool step; '' for a pass or a record with none of these. At most ``limit`` characters
        (the evidence line cut first).

        The verifier output is the rendering every kind gives a red requirement: a header line
        ``[id] failed: message`` and the evidence indented below it.
        """
        if self.verdict is Verdict.PASSED:
            return ""
        ids: list[str] = []
        evidence: list[str] = []
        for line in self.verifier_output.splitlines():
            header = _HEADER.match(line)
            if header:
                ids.append(header.group(1))
            elif line.strip() and line.startswith(" "):
                evidence.append(" ".join(line.split()))
        first = next(
            (e for e in evidence if _ERROR_LINE.search(e)), evidence[0] if evidence else ""
        )
        parts = []
        if ids:
            parts.append("failing: " + ", ".join(dict.fromkeys(ids)))
        step = " ".join((self.first_failing_step or "").split())
        tail = f"; first failing step: {step[:160]}" if step else ""
        if first:
            room = max(40, limit - len("; ".join(parts)) - len(tail) - len("; first error: "))
            parts.append("first error: " + cap_text(first, room, "..."))
        return cap_text("; ".join(parts) + tail if parts else tail.lstrip("; "), limit, "...")

    def diff_stats(self) -> str:
        return f"{self.files_changed} file(s), +{self.added} -{self.removed}"

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "verdict": self.verdict.value,
            "signature": self.signature.to_json(),
            "cause": self.cause,
            "verifier_output": self.verifier_output,
            "diff": self.diff,
            "diff_chars": self.diff_chars,
            "files_changed": self.files_changed,
            "added": self.added,
            "removed": self.removed,
            "first_failing_step": self.first_failing_step,
            "agent_outcome": self.agent_outcome,
            "review": self.review,
            "model": self.model,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "diff_path": self.diff_path,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AttemptRecord:
        fields = dict(data)
        fields["verdict"] = Verdict(fields["verdict"])
        fields["signature"] = FailureSignature.from_json(fields["signature"])
        return cls(**fields)
