"""The verdict of held-out requirements: a private record for the maintainer, a public line.

A :class:`HeldOutVerdict` holds which held-out requirement failed and its evidence
(:meth:`HeldOutVerdict.private`) — for the maintainer's run summary only — and a salted
SHA-256 digest of exactly that record (:attr:`HeldOutVerdict.digest`). What may be shown to
the agent, a pull request, a comment or a check run is :data:`PUBLIC_MESSAGE` and the digest
(:meth:`HeldOutVerdict.public`): nothing that names or describes a held-out check.

The salt is random per verdict and kept inside the private record: without it, a reader of
the public digest could confirm a guess ("is requirement X held out and failing?") by hashing
candidates; with the private record (or the artifact sealed to the maintainer's key) the
maintainer re-derives the digest and knows the record is the one the run saw.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from chimera.governance.redactor import cut_redacted

PUBLIC_MESSAGE = "a held-out check failed"
"""All that the agent, a pull request, a comment or a check run is ever told."""

HELD_OUTCOME = "held: a held-out check failed"
"""The outcome of a change whose visible requirements pass and held-out ones do not."""

EVIDENCE_CHARS = 2000
"""Characters of one held-out requirement's rendered evidence kept in the private record."""


@dataclass(frozen=True)
class HeldOutResult:
    """One held-out requirement's result (private).

    Attributes:
        id: the requirement id.
        status: ``passed``, ``failed`` or ``error`` after the change.
        evidence: the rendered message and evidence (file:line:col and snippet, or exit code
            and output tail), at most :data:`EVIDENCE_CHARS` characters.
        base: its status on the base tree, ``""`` when the base was not checked.
    """

    id: str
    status: str
    evidence: str = ""
    base: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "evidence": self.evidence, "base": self.base}


@dataclass(frozen=True)
class HeldOutVerdict:
    """Held-out requirements checked against one tree.

    Attributes:
        results: every applicable requirement's result, in spec order.
        skipped: held-out ids not applicable yet (a visible requirement they depend on is
            not passing), never evaluated.
        problem: why the held-out spec could not be evaluated at all (it then fails closed),
            ``""`` otherwise.
        salt: 32 hex digits, random per verdict (see the module docstring).
    """

    results: tuple[HeldOutResult, ...] = ()
    skipped: tuple[str, ...] = ()
    problem: str = ""
    salt: str = field(default_factory=lambda: secrets.token_hex(16))

    @property
    def passed(self) -> bool:
        """True when nothing failed and the spec could be evaluated (vacuously true when no
        held-out requirement applies)."""
        return not self.problem and all(r.passed for r in self.results)

    @property
    def failed(self) -> tuple[HeldOutResult, ...]:
        return tuple(r for r in self.results if not r.passed)

    def private(self) -> dict[str, Any]:
        """The maintainer's record: ids, statuses, evidence, the salt and the digest."""
        body = self._body()
        return {**body, "digest": _digest(body)}

    @property
    def digest(self) -> str:
        """``sha256:`` and 64 hex digits over the canonical JSON of the private record."""
        return _digest(self._body())

    def public(self) -> dict[str, Any]:
        """What may be published: ``{"verdict": "passed"|"failed", "message", "digest"}``."""
        return {
            "verdict": "passed" if self.passed else "failed",
            "message": "" if self.passed else PUBLIC_MESSAGE,
            "digest": self.digest,
        }

    def maintainer_lines(self, limit: int = 300) -> list[str]:
        """One line per failure (id, status, evidence cut to ``limit`` characters) for the
        maintainer's run summary; never for a prompt or a public surface."""
        lines = [f"held-out problem: {self.problem}"] if self.problem else []
        for r in self.failed:
            text = " ".join(r.evidence.split())
            text = text if len(text) <= limit else cut_redacted(text, limit - 1) + "…"
            base = f" (base: {r.base})" if r.base else ""
            lines.append(f"held-out {r.id}: {r.status}{base}: {text}")
        return lines

    def _body(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "problem": self.problem,
            "results": [r.to_json() for r in self.results],
            "skipped": list(self.skipped),
            "salt": self.salt,
        }


def _digest(body: dict[str, Any]) -> str:
    raw = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


def verify_digest(record: dict[str, Any]) -> bool:
    """Whether a private record (:meth:`HeldOutVerdict.private`) matches its own digest.

    Never raises: a record of the wrong shape is ``False``.
    """
    try:
        body = {k: record[k] for k in ("passed", "problem", "results", "skipped", "salt")}
        return bool(record["digest"] == _digest(body))
    except (KeyError, TypeError):
        return False
