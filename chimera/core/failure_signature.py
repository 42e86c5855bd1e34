"""How an attempt ended (:class:`Verdict`) and what names its failure: the normalised,
digested evidence of a :class:`FailureSignature` that deduplicates records
(:mod:`chimera.core.attempts`, rule 4).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from chimera.spec.results import RequirementResult

TEXT_TRUNCATION_MARKER = "\n[... truncated: {dropped} more characters ...]"


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
    """``text`` cut to ``limit`` characters plus a marker saying how much was dropped; a text
    that is cut passes the governance SecretRedactor first (a cut through a credential would
    keep a piece of it that no later redaction recognises)."""
    if limit < 0 or len(text) <= limit:
        return text
    from chimera.governance.redactor import SecretRedactor

    text, _ = SecretRedactor.from_environment().redact(text)
    if len(text) <= limit:
        return text
    return text[:limit] + marker.format(dropped=f"{len(text) - limit:,}")


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
