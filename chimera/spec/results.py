"""What ``check_drift`` reports: one :class:`RequirementResult` per requirement."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from chimera.spec.model import Evidence, Requirement, Status

JSON_SCHEMA_VERSION = 1
"""Version of the ``chimera check --json`` document; bumped on incompatible changes."""


@dataclass(frozen=True)
class RequirementResult:
    """The outcome of one requirement.

    Attributes:
        requirement: the requirement checked.
        status: ``passed``, ``failed`` or ``error``.
        message: one line (a failing dependency is mentioned here).
        evidence: locations / command output backing the verdict.
        duration_s: seconds spent evaluating it (shared work is charged to the first user).
    """

    requirement: Requirement
    status: Status
    message: str
    evidence: tuple[Evidence, ...] = ()
    duration_s: float = 0.0

    @property
    def id(self) -> str:
        return self.requirement.id

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    def render(self, *, max_evidence: int = 5) -> str:
        """Message and evidence as the requirement's kind renders a failure."""
        from chimera.spec.model import CheckOutcome

        outcome = CheckOutcome(self.status, self.message, self.evidence)
        return self.requirement.check.render_failure(outcome, max_evidence=max_evidence)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status.value,
            "message": self.message,
            "evidence": [e.to_json() for e in self.evidence],
            "duration_s": round(self.duration_s, 6),
        }


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

    def with_status(self, status: Status) -> tuple[RequirementResult, ...]:
        return tuple(r for r in self.results if r.status is status)

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

    def to_json(self) -> dict[str, Any]:
        """The ``chimera check --json`` document (see README, "JSON output")."""
        return {
            "version": JSON_SCHEMA_VERSION,
            "ok": self.ok,
            "counts": self.counts(),
            "results": [r.to_json() for r in self.results],
        }
