"""EnvelopeVerifier: schema → acceptance criteria → a seeded spot check of faithfulness.

A worker's result comes back in an *envelope*: an answer plus the evidence it rests on (files,
lines, verbatim quotes). Before the orchestrator trusts a summary it verifies the envelope in
three stages, cheapest first, stopping at the first failure:

1. **schema** — the text holds JSON of the :class:`Envelope` shape;
2. **acceptance criteria** — enough citations, quotes present, cited files inside the worker's
   scope, answer patterns (:class:`AcceptanceCriteria`);
3. **spot check** — with probability ``rate`` (a seeded draw per envelope, so a run is
   reproducible), the summary's faithfulness to the raw artifact is checked: deterministic
   checks first (every cited file exists, cited lines exist, every quote occurs verbatim at the
   cited lines), then — only if a judge model is configured — a model judge reads the cited
   excerpts and the answer.

A re-ask triggered by a failed spot check is itself re-audited: verify it with ``reask=True``,
which forces the spot check whatever the draw. Every verdict is an ``envelope.verdict`` audit
event. (The layered "cheap deterministic checks before a model judge" follows the
generate-vs-verify split of the engine; the sampling follows statistical acceptance sampling.)

One module of about 430 lines on purpose: the three stages, cheapest first, and the verdict
they build are one verifier best read top to bottom.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chimera.errors import BudgetExceeded, ProviderError, StructuredOutputError
from chimera.fusion.accounting import CallRecord, SupportsAudit
from chimera.fusion.structured import ask_structured, parse_structured
from chimera.governance.redactor import cut_redacted as _cut
from chimera.protocols import Message, Purpose, SupportsComplete

LINE_TOLERANCE = 2
"""A quote may start this many lines before or after the cited line (models miscount)."""

Stage = Literal["schema", "criteria", "spot_check"]


class Citation(BaseModel):
    """One piece of evidence: a file, optional 1-based lines, and a verbatim quote."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    file: str = Field(min_length=1)
    line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    quote: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> Citation:
        if self.end_line is not None and self.line is not None and self.end_line < self.line:
            raise ValueError("end_line is before line")
        return self

    def where(self) -> str:
        if self.line is None:
            return self.file
        if self.end_line is not None and self.end_line != self.line:
            return f"{self.file}:{self.line}-{self.end_line}"
        return f"{self.file}:{self.line}"


class Envelope(BaseModel):
    """A worker's result: ``found`` is false when its files hold nothing on the question."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    answer: str = Field(min_length=1)
    found: bool = True
    evidence: list[Citation] = Field(default_factory=list)


ENVELOPE_HINT = """{
  "answer": "what the files say about the question, in your own words",
  "found": true,
  "evidence": [{"file": "path/as/given.py", "line": 12, "end_line": 14,
                "quote": "text copied exactly from those lines"}]
}"""


@dataclass(frozen=True, slots=True)
class AcceptanceCriteria:
    """Cheap, deterministic conditions on an envelope.

    Attributes:
        min_citations: citations required when ``found`` is true.
        require_quotes: every citation must carry a non-empty quote.
        scope: the files the worker was given; citations outside it fail (``None``: any).
        max_answer_chars: a bound on the answer's length (``None``: none).
    """

    min_citations: int = 1
    require_quotes: bool = True
    scope: frozenset[str] | None = None
    max_answer_chars: int | None = None

    def problems(self, env: Envelope) -> list[str]:
        out: list[str] = []
        if env.found and len(env.evidence) < self.min_citations:
            out.append(
                f"found=true needs at least {self.min_citations} citation(s), "
                f"got {len(env.evidence)}"
            )
        for i, c in enumerate(env.evidence):
            if self.require_quotes and not c.quote.strip():
                out.append(f"evidence.{i} ({c.where()}): the quote is empty")
            if self.scope is not None and c.file not in self.scope:
                out.append(f"evidence.{i}: {c.file!r} is not one of the files you were given")
        if self.max_answer_chars is not None and len(env.answer) > self.max_answer_chars:
            out.append(f"answer has {len(env.answer)} chars > {self.max_answer_chars}")
        return out


class RepoReader:
    """Reads text files under ``root`` for verification; never leaves the root.

    ``read(rel)`` returns the text, or ``None`` when the path escapes the root, touches
    ``.git/`` or ``.chimera/``, is not a regular file, or is not UTF-8 text.
    """

    def __init__(self, root: Path, *, max_bytes: int = 2_000_000) -> None:
        self.root = root.resolve()
        self.max_bytes = max_bytes
        self._cache: dict[str, str | None] = {}

    def read(self, rel: str) -> str | None:
        if rel in self._cache:
            return self._cache[rel]
        self._cache[rel] = text = self._read(rel)
        return text

    def _read(self, rel: str) -> str | None:
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts or {".git", ".chimera"} & set(parts):
            return None
        path = (self.root / rel).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            return None
        try:
            if path.stat().st_size > self.max_bytes:
                return None
            data = path.read_bytes()
        except OSError:
            return None
        if b"\0" in data[:8192]:
            return None
        try:
            return data.decode("utf-8-sig").replace("\r\n", "\n")
        except UnicodeDecodeError:
            return None


def deterministic_problems(env: Envelope, read: Callable[[str], str | None]) -> list[str]:
    """Faithfulness problems found without a model: files, lines and verbatim quotes."""
    out: list[str] = []
    for i, c in enumerate(env.evidence):
        text = read(c.file)
        if text is None:
            out.append(f"evidence.{i}: cited file {c.file!r} does not exist (or is not text)")
            continue
        lines = text.split("\n")
        n = len(lines) - 1 if text.endswith("\n") else len(lines)
        for label, ln in (("line", c.line), ("end_line", c.end_line)):
            if ln is not None and ln > n:
                out.append(f"evidence.{i}: {c.file} has {n} lines, cited {label} {ln}")
        quote = c.quote.strip()
        if not quote:
            continue
        offsets = _occurrences(text, quote)
        if not offsets:
            out.append(f"evidence.{i}: quote not found verbatim in {c.file}: {_cut(quote, 80)!r}")
            continue
        if c.line is not None:
            starts = [text.count("\n", 0, off) + 1 for off in offsets]
            last = c.end_line if c.end_line is not None else c.line
            if not any(c.line - LINE_TOLERANCE <= s <= last + LINE_TOLERANCE for s in starts):
                out.append(
                    f"evidence.{i}: quote occurs at line {starts[0]} of {c.file}, "
                    f"not at the cited {c.where()}"
                )
    return out


def _occurrences(text: str, needle: str, limit: int = 50) -> list[int]:
    found: list[int] = []
    start = text.find(needle)
    while start != -1 and len(found) < limit:
        found.append(start)
        start = text.find(needle, start + 1)
    return found


class _JudgeVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    faithful: bool
    problems: list[str] = Field(default_factory=list)


_JUDGE_HINT = '{"faithful": true, "problems": ["a claim the excerpts do not support", ...]}'


@dataclass(frozen=True, slots=True)
class SpotCheck:
    """The sampling and judging of stage 3.

    Attributes:
        rate: probability in [0, 1] that an envelope is spot-checked (re-asks always are).
        seed: the run's seed; the draw for an envelope depends only on it and the envelope's
            key, so a run replays the same sample.
        judge: a model judge run after the deterministic checks pass, or ``None`` (default).
        judge_model: the judge's model name, for records.
        excerpt_lines: lines of context around each citation shown to the judge.
    """

    rate: float = 1.0
    seed: int = 0
    judge: SupportsComplete | None = None
    judge_model: str = ""
    excerpt_lines: int = 3

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"spot check rate must be in [0, 1], got {self.rate}")

    def drawn(self, key: str) -> bool:
        """Whether the envelope identified by ``key`` is sampled (deterministic per seed)."""
        digest = hashlib.sha256(f"{self.seed}:{key}".encode()).digest()
        return random.Random(digest).random() < self.rate


@dataclass(frozen=True, slots=True)
class EnvelopeVerdict:
    """The outcome of verifying one envelope.

    ``failed_stage`` is ``None`` when ``ok``; ``calls`` are the judge's model calls (paid).
    """

    ok: bool
    failed_stage: Stage | None
    problems: tuple[str, ...]
    envelope: Envelope | None
    spot_checked: bool
    judged: bool = False
    reask: bool = False
    calls: tuple[CallRecord, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "failed_stage": self.failed_stage,
            "problems": list(self.problems),
            "spot_checked": self.spot_checked,
            "judged": self.judged,
            "reask": self.reask,
        }

    def feedback(self) -> str:
        """The problems, as a message asking the worker to fix them."""
        lines = "\n".join(f"- {p}" for p in self.problems)
        return (
            f"Your result failed verification at the {self.failed_stage} stage:\n{lines}\n"
            "Answer again from the files you were given. Quotes must be copied exactly from "
            "the cited lines (without the line-number prefix). Reply with ONLY one JSON "
            f"object of this shape:\n{ENVELOPE_HINT}"
        )


class EnvelopeVerifier:
    """Verifies envelopes: schema → criteria → spot check (see the module docstring).

    Args:
        read: returns a cited file's text, or ``None`` (use :class:`RepoReader`).
        criteria: the default acceptance criteria (``verify`` can override per envelope).
        spot_check: sampling and optional judge.
        audit: optional audit log (event ``envelope.verdict``).
    """

    def __init__(
        self,
        read: Callable[[str], str | None],
        *,
        criteria: AcceptanceCriteria | None = None,
        spot_check: SpotCheck | None = None,
        audit: SupportsAudit | None = None,
    ) -> None:
        self.read = read
        self.criteria = criteria or AcceptanceCriteria()
        self.spot_check = spot_check or SpotCheck()
        self.audit = audit

    def verify(
        self,
        text: str,
        *,
        key: str,
        criteria: AcceptanceCriteria | None = None,
        reask: bool = False,
        question: str = "",
    ) -> EnvelopeVerdict:
        """Verify a worker's raw output ``text``.

        Args:
            key: identifies the envelope for the seeded draw and the audit event (a worker
                or subtask id).
            criteria: overrides the verifier's default criteria (e.g. with the worker's scope).
            reask: the text answers a re-ask after a failed verification: the spot check is
                forced (the re-ask is re-audited).
            question: what the worker was asked (shown to the model judge).

        Raises:
            ProviderError, BudgetExceeded: the model judge's call failed.
        """
        verdict = self._verify(text, key, criteria or self.criteria, reask, question)
        if self.audit is not None:
            self.audit.append(
                "envelope.verdict",
                key=key,
                **verdict.to_json(),
                judge_calls=[c.to_json() for c in verdict.calls],
            )
        return verdict

    def _verify(
        self, text: str, key: str, criteria: AcceptanceCriteria, reask: bool, question: str
    ) -> EnvelopeVerdict:
        try:
            env = parse_structured(text, Envelope)
        except ValueError as exc:
            return EnvelopeVerdict(False, "schema", (str(exc),), None, False, reask=reask)
        problems = criteria.problems(env)
        if problems:
            return EnvelopeVerdict(False, "criteria", tuple(problems), env, False, reask=reask)
        if not (reask or self.spot_check.drawn(key)):
            return EnvelopeVerdict(True, None, (), env, False, reask=reask)
        problems = deterministic_problems(env, self.read)
        if problems:
            return EnvelopeVerdict(False, "spot_check", tuple(problems), env, True, reask=reask)
        if self.spot_check.judge is None:
            return EnvelopeVerdict(True, None, (), env, True, reask=reask)
        calls: list[CallRecord] = []
        try:
            judged, _ = ask_structured(
                self.spot_check.judge,
                self._judge_messages(env, question),
                _JudgeVerdict,
                schema_hint=_JUDGE_HINT,
                role="spot-judge",
                name=key,
                model_name=self.spot_check.judge_model,
                purpose=Purpose.REVIEW,
                ledger=calls,
            )
        except StructuredOutputError as exc:
            return EnvelopeVerdict(
                False,
                "spot_check",
                (f"the spot-check judge gave no usable verdict: {exc}",),
                env,
                True,
                judged=True,
                reask=reask,
                calls=tuple(calls),
            )
        except (ProviderError, BudgetExceeded):
            raise
        if not judged.faithful:
            problems = judged.problems or ["the judge found the summary unfaithful"]
            return EnvelopeVerdict(
                False,
                "spot_check",
                tuple(f"judge: {p}" for p in problems),
                env,
                True,
                judged=True,
                reask=reask,
                calls=tuple(calls),
            )
        return EnvelopeVerdict(
            True, None, (), env, True, judged=True, reask=reask, calls=tuple(calls)
        )

    def _judge_messages(self, env: Envelope, question: str) -> list[Message]:
        excerpts: list[str] = []
        for c in env.evidence:
            text = self.read(c.file) or ""
            lines = text.split("\n")
            first = max(1, (c.line or 1) - self.spot_check.excerpt_lines)
            last = min(len(lines), (c.end_line or c.line or 1) + self.spot_check.excerpt_lines)
            body = "\n".join(f"{n:>5}| {lines[n - 1]}" for n in range(first, last + 1))
            excerpts.append(f'<excerpt file="{c.file}" lines="{first}-{last}">\n{body}\n</excerpt>')
        return [
            {
                "role": "system",
                "content": (
                    "You check whether a summary is faithful to the raw source excerpts it "
                    "cites. A claim the excerpts do not support is a problem; style is not. "
                    f"Reply with ONLY one JSON object: {_JUDGE_HINT}"
                ),
            },
            {
                "role": "user",
                "content": (
                    f"<question>\n{question}\n</question>\n<summary>\n{env.answer}\n</summary>\n"
                    + "\n".join(excerpts)
                ),
            },
        ]


def scope_criteria(base: AcceptanceCriteria, files: Sequence[str]) -> AcceptanceCriteria:
    """``base`` with its scope set to ``files`` (a worker may cite only what it was given)."""
    return AcceptanceCriteria(
        min_citations=base.min_citations,
        require_quotes=base.require_quotes,
        scope=frozenset(files),
        max_answer_chars=base.max_answer_chars,
    )
