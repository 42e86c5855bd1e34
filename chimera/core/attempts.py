"""Failure carry-forward: one record per attempt, rendered into the next attempt's prompt.

The rules (Chimera's "carry the failure forward" note, DESIGN.md step 4):

1. attempts live in a list, one :class:`AttemptRecord` each: the verifier's output, the real
   diff the attempt wrote (taken from the workspace snapshot *before* the revert, since after
   the revert nothing on disk remembers the bad path), and the first failing tool step;
2. the retry prompt renders every record oldest first, numbered, with its verdict, under a
   heading saying they were tried and reverted (:meth:`AttemptHistory.render`);
3. each record is capped (the diff at ``record_diff_chars``, 2,000 by default, with a
   truncation marker) and the whole history stays under a token ceiling: past it the oldest
   records collapse to one line each (number, verdict, signature), never silently dropped;
4. records are deduplicated by :class:`FailureSignature` with a repeat count — a repeat is a
   signal, not new information;
5. a repeated signature forces a structural change (replan with :meth:`TaskLedger.context`, or
   escalate; see :mod:`chimera.core.autonomous`);
6. diff feedback is opt-in: a shown bad patch can anchor the model (the registered
   counter-hypothesis), so by default records carry verdicts and causes but no diff.

The task ledger follows Magentic-One's outer-loop ledger (Fourney et al., 2024): facts and
failed plans are kept apart from the inner loop's transcript and fed to the planner.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from chimera.spec.results import RequirementResult

HISTORY_HEADING = "Attempts already tried and REVERTED"
LEDGER_HEADING = "Why earlier attempts failed (do NOT repeat these):"
DIFF_TRUNCATION_MARKER = "\n[... diff truncated: {dropped} more characters not shown ...]"
TEXT_TRUNCATION_MARKER = "\n[... truncated: {dropped} more characters ...]"
VERIFIER_OUTPUT_CHARS = 1500
"""Cap on the verifier output kept per record (characters)."""


class Verdict(StrEnum):
    """How an attempt ended."""

    PASSED = "passed"
    VERIFY_FAILED = "verify_failed"
    """Verification ran; a target requirement is still red."""
    REGRESSION = "regression"
    """A requirement that passed before the attempt is red after it."""
    REVIEW_REJECTED = "review_rejected"
    """The manager review sent the attempt back."""
    HOLLOW = "hollow"
    """Verification passed with an empty diff: nothing was actually changed."""
    AGENT_STOPPED = "agent_stopped"
    """The tool-calling loop hit its step or token limit, or failed."""
    SECRET_IN_CHANGE = "secret_in_change"
    """The change holds a secret value (a credential of the environment or of the workspace's
    dotenv files): never accepted, whatever the checks say."""
    HELD_OUT = "held_out"
    """The visible requirements pass and a held-out one does not; the record says only that
    (no id, no content, no evidence)."""
    CONFIG_CHANGED = "config_changed"
    """The change edits Chimera's own configuration (``[tool.chimera]`` / ``chimera.toml``:
    sandbox mode, environment allowlist, budgets): never accepted from an agent, since a later
    run would read it."""

    @property
    def failed(self) -> bool:
        return self is not Verdict.PASSED


def cap_text(text: str, limit: int, marker: str = TEXT_TRUNCATION_MARKER) -> str:
    """``text`` cut to ``limit`` characters plus a marker saying how much was dropped."""
    if limit < 0 or len(text) <= limit:
        return text
    return text[:limit] + marker.format(dropped=f"{len(text) - limit:,}")


# -- signatures --------------------------------------------------------------------------------

_HEX_RE = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-fA-F]{7,}\b")
_PATH_RE = re.compile(
    r"(?:[A-Za-z]:)?(?:[\w.~-]*[/\\])+[\w.-]*"  # anything with a separator
    r"|\b[\w-]+\.(?:py|pyi|txt|md|rst|ya?ml|json|toml|cfg|ini|js|ts|go|rs|c|h|cpp|java|sh)\b"
)
_NUM_RE = re.compile(r"\d+(?:\.\d+)?")
_WS_RE = re.compile(r"\s+")


def normalise(text: str, limit: int = 240) -> str:
    """Strip what varies between runs of the same failure: hex ids, paths, numbers, spacing.

    Order matters: hex first (it contains digits), then paths (they contain numbers).
    """
    out = _HEX_RE.sub("<hex>", text)
    out = _PATH_RE.sub("<path>", out)
    out = _NUM_RE.sub("<n>", out)
    out = _WS_RE.sub(" ", out).strip().lower()
    return out[:limit]


# What names a command's failure in its output: pytest's short summary (``FAILED id - ...``,
# ``ERROR id``), unittest's headers (``FAIL: test (module.Class.test)``), exception types.
_PYTEST_ID_RE = re.compile(r"^(?:FAILED|ERROR) +(\S+)", re.MULTILINE)
_UNITTEST_ID_RE = re.compile(r"^(?:FAIL|ERROR): +\w+ +\(([\w.]+)\)", re.MULTILINE)
_ERROR_TYPE_RE = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Exit|Interrupt))\b")
_RULE_RE = re.compile(r"[\W_]*")
DIGEST_TESTS = 8
DIGEST_ERRORS = 6


def evidence_digest(output: str, limit: int = 400) -> str:
    """The part of a command's output that names its failure, stable across runs.

    Failing test ids (pytest's short summary, unittest's ``FAIL:`` / ``ERROR:`` headers) and
    the exception types the output mentions, each sorted and deduplicated; when the output
    names neither, its last three non-rule lines. Everything is normalised as by
    :func:`normalise` except test ids, which are stable between runs and say what failed
    (only hex ids in them are masked).

    Returns:
        One line of at most ``limit`` characters, ``""`` for empty output.
    """
    tests = sorted(
        {_HEX_RE.sub("<hex>", t) for t in _PYTEST_ID_RE.findall(output)}
        | set(_UNITTEST_ID_RE.findall(output))
    )
    errors = sorted(set(_ERROR_TYPE_RE.findall(output)))
    parts: list[str] = []
    if tests:
        more = f" (+{len(tests) - DIGEST_TESTS} more)" if len(tests) > DIGEST_TESTS else ""
        parts.append("tests " + ", ".join(tests[:DIGEST_TESTS]) + more)
    if errors:
        parts.append("errors " + ", ".join(errors[:DIGEST_ERRORS]))
    if not parts:
        lines = [ln for ln in output.splitlines() if not _RULE_RE.fullmatch(ln.strip())]
        if lines:
            parts.append("output " + normalise(" / ".join(lines[-3:]), limit))
    return cap_text("; ".join(parts), limit, "…")


def _part(result: RequirementResult) -> str:
    part = f"{result.id}: {result.status.value}: {normalise(result.message)}"
    # A command's message says only "failed: exit N": two unrelated failures would share it,
    # and the second would be taken for a repeat (never shown, forcing a replan).
    if result.requirement.check.kind_name == "command":
        digest = evidence_digest("\n".join(e.snippet for e in result.evidence if e.snippet))
        if digest:
            part += f" [{digest}]"
    return part


@dataclass(frozen=True, slots=True)
class FailureSignature:
    """Which requirements failed and how, normalised so the same failure gives the same value.

    Attributes:
        verdict: the attempt's verdict (a review rejection differs from a failed check).
        parts: sorted ``"id: status: normalised message"`` strings, one per red requirement
            (a ``command`` requirement's part ends with its :func:`evidence_digest` in
            brackets), plus one ``"reason: ..."`` part when a reason is given.
    """

    verdict: Verdict
    parts: tuple[str, ...]

    @classmethod
    def from_results(
        cls, verdict: Verdict, red: Iterable[RequirementResult], *, reason: str = ""
    ) -> FailureSignature:
        parts = sorted({_part(r) for r in red})
        if reason:
            parts.append(f"reason: {normalise(reason, 120)}")
        return cls(verdict, tuple(parts))

    @property
    def digest(self) -> str:
        """A short stable id (10 hex digits of SHA-256 over verdict and parts)."""
        raw = "\n".join((self.verdict.value, *self.parts)).encode("utf-8")
        return hashlib.sha256(raw).hexdigest()[:10]

    def summary(self, limit: int = 160) -> str:
        """One line for collapsed records: the digest and the first part."""
        first = self.parts[0] if self.parts else "no requirement involved"
        more = f" (+{len(self.parts) - 1} more)" if len(self.parts) > 1 else ""
        return cap_text(f"{self.digest} [{first}{more}]", limit, "…")

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "parts": list(self.parts), "digest": self.digest}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FailureSignature:
        return cls(Verdict(data["verdict"]), tuple(data["parts"]))


# -- records -----------------------------------------------------------------------------------


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


__all__ = [
    "DIFF_TRUNCATION_MARKER",
    "HISTORY_HEADING",
    "LEDGER_HEADING",
    "AttemptHistory",
    "AttemptRecord",
    "FailureSignature",
    "HistoryEntry",
    "RenderedHistory",
    "TaskLedger",
    "Verdict",
    "approx_tokens",
    "cap_text",
    "evidence_digest",
    "normalise",
]
