"""The history rendered into the retry prompt (deduplicated, under a token ceiling) and the
task ledger fed to the planner (:mod:`chimera.core.attempts`, rules 2-5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chimera.core.attempt_record import AttemptRecord
from chimera.core.failure_signature import FailureSignature, cap_text

HISTORY_HEADING = "Attempts already tried and REVERTED"


LEDGER_HEADING = "Why earlier attempts failed (do NOT repeat these):"


@dataclass(frozen=True)
class HistoryEntry:
    """One distinct failure: its first record and every attempt number that repeated it."""

    record: AttemptRecord
    numbers: tuple[int, ...]

    @property
    def repeats(self) -> int:
        return len(self.numbers)

    def label(self) -> str:
        also = ", ".join(str(n) for n in self.numbers[1:])
        seen = f"; same failure repeated {self.repeats}× (also attempt {also})" if also else ""
        return (
            f"Attempt {self.record.number} — verdict: {self.record.verdict.value} "
            f"(signature {self.record.signature.digest}{seen})"
        )

    def render_full(self, *, diff_feedback: bool) -> str:
        r = self.record
        lines = [f"### {self.label()}", f"Cause: {r.cause}"]
        if r.review:
            lines.append(f"Manager review: {r.review}")
        if r.first_failing_step:
            lines.append(f"First failing tool step: {r.first_failing_step}")
        if r.verifier_output:
            lines += ["Verifier output:", _indent(r.verifier_output)]
        lines.append(f"Change written, then reverted: {r.diff_stats()}")
        if diff_feedback and r.diff:
            lines += ["```diff", r.diff.rstrip("\n"), "```"]
        return "\n".join(lines)

    def render_line(self) -> str:
        also = f" ×{self.repeats}" if self.repeats > 1 else ""
        return (
            f"- Attempt {self.record.number}{also} — {self.record.verdict.value} — "
            f"signature {self.record.signature.summary()} (details collapsed)"
        )


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + ln for ln in text.splitlines())


@dataclass(frozen=True)
class RenderedHistory:
    """The history block of a retry prompt and how it was fitted under the ceiling."""

    text: str
    tokens: int
    records: int
    distinct: int
    collapsed: int
    over_ceiling: bool

    def audit_fields(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "distinct": self.distinct,
            "collapsed": self.collapsed,
            "tokens": self.tokens,
            "over_ceiling": self.over_ceiling,
        }


def approx_tokens(text: str) -> int:
    """A model-agnostic token estimate (≈ 4 characters per token, rounded up)."""
    return (len(text) + 3) // 4


@dataclass
class AttemptHistory:
    """Every attempt of a run, in order, deduplicated by signature when rendered."""

    records: list[AttemptRecord] = field(default_factory=list)

    def add(self, record: AttemptRecord) -> bool:
        """Append ``record``; returns True when its signature is new, False for a repeat."""
        seen = self.count(record.signature)
        self.records.append(record)
        return seen == 0

    def count(self, signature: FailureSignature) -> int:
        return sum(1 for r in self.records if r.signature == signature)

    def entries(self) -> list[HistoryEntry]:
        """Distinct failures, oldest first, each with the attempt numbers that hit it."""
        order: list[FailureSignature] = []
        by_sig: dict[FailureSignature, list[AttemptRecord]] = {}
        for r in self.records:
            if r.signature not in by_sig:
                order.append(r.signature)
                by_sig[r.signature] = []
            by_sig[r.signature].append(r)
        return [HistoryEntry(by_sig[s][0], tuple(r.number for r in by_sig[s])) for s in order]

    def render(
        self,
        *,
        diff_feedback: bool = False,
        token_ceiling: int = 6000,
        count_tokens: Callable[[str], int] = approx_tokens,
    ) -> RenderedHistory:
        """The retry-prompt block: heading, then each distinct failure oldest first.

        Past ``token_ceiling`` the oldest entries collapse to one line each (number, verdict,
        signature) until the block fits; no entry is ever dropped. ``over_ceiling`` is True
        only when even the fully collapsed block does not fit.
        """
        entries = self.entries()
        if not entries:
            return RenderedHistory("", 0, 0, 0, 0, False)
        heading = (
            f"## {HISTORY_HEADING}\n"
            "Each attempt below was made, verified, found wrong and reverted: the workspace "
            "was restored afterwards, so none of these changes exist on disk now. Do not "
            "repeat them; take a different approach."
        )
        full = [e.render_full(diff_feedback=diff_feedback) for e in entries]
        lines = [e.render_line() for e in entries]
        collapsed = 0

        def assemble(k: int) -> str:
            parts = [heading]
            if k:
                parts.append("Earlier attempts (collapsed to fit the context budget):")
                parts.append("\n".join(lines[:k]))
            parts.extend(full[k:])
            return "\n\n".join(parts)

        text = assemble(0)
        tokens = count_tokens(text)
        while tokens > token_ceiling and collapsed < len(entries):
            collapsed += 1
            text = assemble(collapsed)
            tokens = count_tokens(text)
        return RenderedHistory(
            text=text,
            tokens=tokens,
            records=len(self.records),
            distinct=len(entries),
            collapsed=collapsed,
            over_ceiling=tokens > token_ceiling,
        )

    def to_json(self) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.records]

    @classmethod
    def from_json(cls, data: Sequence[dict[str, Any]]) -> AttemptHistory:
        return cls([AttemptRecord.from_json(d) for d in data])


@dataclass
class TaskLedger:
    """The outer loop's memory for the planner: collected causes and plans already tried.

    ``context()`` is what a replan sees after a repeated failure signature.
    """

    task: str
    causes: dict[str, tuple[str, list[int], str]] = field(default_factory=dict)
    """signature digest -> (verdict, attempt numbers, cause)."""
    plans: list[str] = field(default_factory=list)

    def note_attempt(self, record: AttemptRecord) -> None:
        key = record.signature.digest
        if key in self.causes:
            self.causes[key][1].append(record.number)
        else:
            self.causes[key] = (record.verdict.value, [record.number], record.cause)

    def note_plan(self, plan: str) -> None:
        self.plans.append(plan)

    def context(self, *, plan_chars: int = 600) -> str:
        """Causes under ``"Why earlier attempts failed (do NOT repeat these):"``, then plans."""
        lines = [LEDGER_HEADING]
        if not self.causes:
            lines.append("- (no failed attempts yet)")
        for key, (verdict, numbers, cause) in self.causes.items():
            nums = ", ".join(str(n) for n in numbers)
            times = f", {len(numbers)}×" if len(numbers) > 1 else ""
            lines.append(f"- Attempt {nums} ({verdict}{times}, signature {key}): {cause}")
        if self.plans:
            lines.append("")
            lines.append("Plans already tried (they led to the failures above):")
            for i, plan in enumerate(self.plans, 1):
                lines.append(f"Plan {i}:")
                lines.append(_indent(cap_text(plan.strip(), plan_chars)))
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "causes": {k: [v, n, c] for k, (v, n, c) in self.causes.items()},
            "plans": list(self.plans),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskLedger:
        causes = {k: (v[0], list(v[1]), v[2]) for k, v in data.get("causes", {}).items()}
        return cls(task=data["task"], causes=causes, plans=list(data.get("plans", [])))
