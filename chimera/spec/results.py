"""What ``check_drift`` reports: one :class:`RequirementResult` per requirement."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from chimera.spec.model import Evidence, Requirement, Status

JSON_SCHEMA_VERSION = 1
"""Version of the ``chimera check --json`` document; bumped on incompatible changes."""

DEFAULT_EVIDENCE_LIMIT = 20
"""Evidence items a JSON result lists by default (the first ones, in the kind's order); the
rest is counted in ``evidence_omitted``, so the document stays bounded however many matches
an ``absent`` pattern has."""


@dataclass(frozen=True)
class RequirementResult:
    """The outcome of one requirement.

    Attributes:
        requirement: the requirement checked.
        status: ``passed``, ``failed`` or ``error``.
        message: one line (a failing dependency is mentioned here).
        evidence: locations / command output backing the verdict.
        duration_s: seconds spent evaluating it (shared work is charged to the first user).
        evidence_omitted: evidence items after ``evidence`` that were counted, not kept
            (:attr:`chimera.spec.model.CheckOutcome.omitted`).
    """

    requirement: Requirement
    status: Status
    message: str
    evidence: tuple[Evidence, ...] = ()
    duration_s: float = 0.0
    evidence_omitted: int = 0

    @property
    def id(self) -> str:
        return self.requirement.id

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    def render(self, *, max_evidence: int = 5) -> str:
        """Message and evidence as the requirement's kind renders a failure."""
        from chimera.spec.model import CheckOutcome

        outcome = CheckOutcome(self.status, self.message, self.evidence, self.evidence_omitted)
        return self.requirement.check.render_failure(outcome, max_evidence=max_evidence)

    def to_json(self, *, max_evidence: int | None = DEFAULT_EVIDENCE_LIMIT) -> dict[str, Any]:
        """The result as JSON: the first ``max_evidence`` evidence items (``None``: all);
        when some were left out, ``evidence_omitted`` counts them."""
        shown = self.evidence if max_evidence is None else self.evidence[:max_evidence]
        out: dict[str, Any] = {
            "id": self.id,
            "status": self.status.value,
            "message": self.message,
            "evidence": [e.to_json() for e in shown],
        }
        omitted = len(self.evidence) - len(shown) + self.evidence_omitted
        if omitted:
            out["evidence_omitted"] = omitted
        out["duration_s"] = round(self.duration_s, 6)
        return out


@dataclass(frozen=True)
class DriftReport:
    """Every requirement's result, in spec order."""

    results: tuple[RequirementResult, ...]

    def __iter__(self) -> Iterator[RequirementResult]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def ok(self) -> bool:
        """True when every requirement passed."""
        return all(r.passed for r in self.results)

    def by_id(self) -> dict[str, RequirementResult]:
        return {r.id: r for r in self.results}

    @property
    def red(self) -> tuple[RequirementResult, ...]:
        return tuple(r for r in self.results if not r.passed)

    @property
    def green_ids(self) -> frozenset[str]:
        return frozenset(r.id for r in self.results if r.passed)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for r in self.results:
            out[r.status.value] += 1
        return out

    def to_json(self, *, max_evidence: int | None = DEFAULT_EVIDENCE_LIMIT) -> dict[str, Any]:
        """The ``chimera check --json`` document (``docs/reference/check-output.md``); each
        result lists at most ``max_evidence`` evidence items (``None``: all)."""
        return {
            "version": JSON_SCHEMA_VERSION,
            "ok": self.ok,
            "counts": self.counts(),
            "results": [r.to_json(max_evidence=max_evidence) for r in self.results],
        }
