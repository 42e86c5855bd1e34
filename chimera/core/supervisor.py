"""Manager review: a separate generate-vs-verify call that can send an attempt back.

The worker that wrote a change is a poor judge of it; a second call with a reviewer's brief
and only the evidence (task, targets, the real diff, the worker's own summary) catches what
checks cannot see — a change that games the Spec (writing the searched-for string into a
comment), hard-coded results, edits outside the task. The reviewer can only *send back*: it
never accepts a change on its own, because acceptance belongs to check_drift. (Generate-vs-
verify splits as in Magentic-One's orchestrator and the "LLM-as-judge" literature.)

The verdict is parsed robustly: ``APPROVE`` / ``REJECT: reason`` on a line of its own, a JSON
object ``{"verdict": ..., "reason": ...}``, Markdown emphasis, or prose; a negated approval
("I cannot approve") is a rejection; an unparseable answer is *no review* (``parsed=False``,
``approved=False``): it neither approves nor sends back, the checks alone decide, and the
agent audits and shows it as such — a garbled or manipulated reviewer cannot wave an attempt
through as "approved".
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from chimera.protocols import Message, Purpose, SupportsComplete, Usage

REVIEW_SYSTEM = (
    "You are the manager reviewing a worker's change before it is verified. You see the "
    "task, the requirements that must pass, the real diff the worker wrote and its summary. "
    "Send the change back if it games the checks instead of doing the task (for example "
    "writing the searched-for text into a comment, hard-coding expected output, weakening or "
    "editing the Spec or tests), if it changes unrelated files, or if it is clearly "
    "incomplete. Otherwise approve; executable checks run after you.\n"
    "Answer with one line first: `APPROVE` or `REJECT: <the reason, one sentence>`."
)


@dataclass(frozen=True, slots=True)
class ReviewVerdict:
    """The manager's decision.

    Attributes:
        approved: False sends the attempt back.
        reason: the stated reason (empty for a bare approval).
        parsed: False when the answer matched no known form: no review took place (then
            ``approved`` is False, and the attempt is not sent back either).
        raw: the reviewer's full text.
        usage: tokens and cost of the call.
        model: the model that reviewed.
    """

    approved: bool
    reason: str
    parsed: bool
    raw: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""


_WORD_RE = re.compile(r"\b(APPROVED?|REJECT(?:ED)?|LGTM|SEND\s+BACK)\b", re.IGNORECASE)
_NEGATION_RE = re.compile(
    r"\b(?:not|n't|cannot|can't|won't|do\s+not|don't|never|unable\s+to)\s+(?:be\s+)?"
    r"(?:approved?|lgtm)\b",
    re.IGNORECASE,
)
_LEAD_RE = re.compile(r"^[\s>*_`#\-]*(?:verdict|decision)?\s*[:=\-]?\s*[*_`]*", re.IGNORECASE)


def parse_review(text: str) -> tuple[bool, str, bool]:
    """``(approved, reason, parsed)`` from a reviewer's answer (see module docstring)."""
    stripped = text.strip()
    obj = _json_object(stripped)
    if obj is not None:
        verdict = str(obj.get("verdict", obj.get("decision", ""))).strip().lower()
        reason = str(obj.get("reason", obj.get("reasons", "")) or "").strip()
        if verdict.startswith(("approve", "accept", "lgtm")):
            return True, reason, True
        if verdict.startswith(("reject", "send back", "deny")):
            return False, reason or "rejected without a reason", True
    # A line that starts with the verdict word wins over words found in prose.
    for line in stripped.splitlines():
        lead = _LEAD_RE.sub("", line, count=1)
        m = _WORD_RE.match(lead)
        if m:
            word = m.group(1).upper()
            rest = lead[m.end() :].strip(" *_`:.-—")
            if word.startswith("REJECT") or word.startswith("SEND"):
                return False, rest or _after(stripped, line) or "rejected without a reason", True
            if not _NEGATION_RE.search(line):
                return True, rest or _after(stripped, line), True
    if _NEGATION_RE.search(stripped):
        return False, _first_sentence(stripped), True
    words = [w.group(1).upper() for w in _WORD_RE.finditer(stripped)]
    if words:
        first = words[0]
        if first.startswith("REJECT") or first.startswith("SEND"):
            return False, _first_sentence(stripped), True
        return True, "", True
    return False, "", False


def _json_object(text: str) -> dict[str, object] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _after(text: str, line: str) -> str:
    rest = text.split(line, 1)[-1].strip()
    return _first_sentence(rest) if rest else ""


def _first_sentence(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    m = re.search(r"(.+?[.!?])(\s|$)", flat)
    out = m.group(1) if m else flat
    from chimera.governance.redactor import cut_redacted

    return cut_redacted(out, limit)  # a reviewer's words, redacted before the cut


class ManagerReview:
    """Asks a backend (``Purpose.REVIEW``) whether an attempt should be sent back.

    Args:
        max_diff_chars: the diff shown to the reviewer is capped at this many characters.
        max_tokens: completion cap for the review call.
    """

    def __init__(self, *, max_diff_chars: int = 12000, max_tokens: int = 512) -> None:
        self.max_diff_chars = max_diff_chars
        self.max_tokens = max_tokens

    def messages(
        self, *, task: str, targets: Sequence[str], diff: str, summary: str, plan: str
    ) -> list[Message]:
        shown = (
            diff
            if len(diff) <= self.max_diff_chars
            else (
                diff[: self.max_diff_chars]
                + f"\n[... diff truncated: {len(diff) - self.max_diff_chars:,} more characters ...]"
            )
        )
        user = (
            f"## Task\n{task}\n\n## Requirements that must pass\n"
            + ("\n".join(f"- {t}" for t in targets) or "- (none)")
            + f"\n\n## Plan the worker followed\n{plan or '(none)'}"
            + f"\n\n## Worker's summary\n{summary or '(none)'}"
            + f"\n\n## The real diff (taken from the workspace)\n```diff\n{shown}\n```"
        )
        return [{"role": "system", "content": REVIEW_SYSTEM}, {"role": "user", "content": user}]

    def review(
        self,
        backend: SupportsComplete,
        *,
        task: str,
        targets: Sequence[str],
        diff: str,
        summary: str,
        plan: str = "",
    ) -> ReviewVerdict:
        """One review call. Raises what the backend raises (BudgetExceeded, ProviderError)."""
        msgs = self.messages(task=task, targets=targets, diff=diff, summary=summary, plan=plan)
        completion = backend.complete(msgs, purpose=Purpose.REVIEW, max_tokens=self.max_tokens)
        approved, reason, parsed = parse_review(completion.text)
        return ReviewVerdict(
            approved, reason, parsed, completion.text, completion.usage, completion.model
        )


__all__ = ["REVIEW_SYSTEM", "ManagerReview", "ReviewVerdict", "parse_review"]
