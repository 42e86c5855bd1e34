"""The goal of a project run (DESIGN.md, "Flow of one autonomous change", step 2).

* A **task run** (an issue) must make its *acceptance requirements* pass without turning any
  requirement that passed on the base red; requirements already red on the base and not part
  of the task are reported, not required.
* A **repair run** (no task) must make the whole Spec pass.

Acceptance requirements come from a fenced block whose info string is ``chimera`` in the task
text, or are written by the agent as its first card. Each must be red on the base (otherwise
it tests nothing); one that is ``error`` on the base for any reason but a missing target (a
bad pattern, a timeout, an unparsable existing file) is rejected as broken.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from chimera.spec.model import Requirement, Status
from chimera.spec.results import DriftReport, RequirementResult

_BLOCK = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[ \t]*chimera[ \t]*\r?\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)

# Reasons an `error` on the base means "the target does not exist yet" rather than "broken".
_MISSING_TARGET_HINTS = (
    "no such file",
    "does not exist",
    "not found",
    "missing",
    "selects zero files",
    "selected zero files",
    "no files",
    "cannot be resolved",
)


def extract_spec_blocks(text: str) -> list[str]:
    """The bodies of every fenced block whose info string is ``chimera``, in order."""
    return [m.group("body") for m in _BLOCK.finditer(text)]


def base_error_is_missing_target(result: RequirementResult) -> bool:
    """True when a base ``error`` only says the target does not exist yet."""
    text = (result.message + " " + " ".join(e.note for e in result.evidence)).lower()
    return any(hint in text for hint in _MISSING_TARGET_HINTS)


def vet_acceptance(ids: Iterable[str], base: DriftReport) -> tuple[list[str], dict[str, str]]:
    """Split acceptance ids into (accepted, rejected-with-reason) against the base report."""
    results = base.by_id()
    accepted: list[str] = []
    rejected: dict[str, str] = {}
    for rid in ids:
        res = results.get(rid)
        if res is None:
            rejected[rid] = "was not evaluated on the base"
        elif res.status is Status.PASSED:
            rejected[rid] = "already passes on the base, so it tests nothing"
        elif res.status is Status.ERROR and not base_error_is_missing_target(res):
            rejected[rid] = f"broken on the base: {res.message}"
        else:
            accepted.append(rid)
    return accepted, rejected


@dataclass(frozen=True)
class Goal:
    """What "done" means for a run.

    Attributes:
        mode: ``task`` or ``repair``.
        goal_ids: requirements that must pass at the end.
        protected: requirements green on the base that must stay green.
        unrelated_red: red on the base, not part of the goal (reported only).
    """

    mode: str
    goal_ids: tuple[str, ...]
    protected: frozenset[str] = field(default_factory=frozenset)
    unrelated_red: tuple[str, ...] = ()

    @classmethod
    def repair(cls, base: DriftReport) -> Goal:
        return cls(
            mode="repair",
            goal_ids=tuple(r.id for r in base.results),
            protected=base.green_ids,
        )

    @classmethod
    def task(cls, acceptance: Iterable[str], base: DriftReport) -> Goal:
        wanted = tuple(acceptance)
        unrelated = tuple(r.id for r in base.red if r.id not in set(wanted))
        return cls(mode="task", goal_ids=wanted, protected=base.green_ids, unrelated_red=unrelated)

    def unmet(self, report: DriftReport) -> list[str]:
        """Goal ids still red, then protected ids that turned red (regressions)."""
        results = report.by_id()
        red = [i for i in self.goal_ids if i in results and not results[i].passed]
        red += [
            i
            for i in sorted(self.protected)
            if i not in self.goal_ids and i in results and not results[i].passed
        ]
        return red

    def satisfied(self, report: DriftReport) -> bool:
        return not self.unmet(report)

    def regressions(self, report: DriftReport) -> list[str]:
        results = report.by_id()
        return [i for i in sorted(self.protected) if i in results and not results[i].passed]


def requirement_fingerprints(reqs: Iterable[Requirement]) -> Mapping[str, str]:
    """id → a canonical rendering of the requirement, to detect edits of existing ones."""
    out: dict[str, str] = {}
    for r in reqs:
        out[r.id] = repr(
            (
                r.title,
                r.risk.value,
                tuple(r.depends_on),
                tuple(r.owner),
                r.check.kind_name,
                r.check.model_dump_json(),
            )
        )
    return out


def spec_tampering(before: Iterable[Requirement], after: Iterable[Requirement]) -> list[str]:
    """Problems when ``after`` deletes or changes any requirement of ``before``.

    Adding requirements is allowed (they land in ``specs/`` and are labelled ``spec-change``).
    """
    old = requirement_fingerprints(before)
    new = requirement_fingerprints(after)
    problems = [f"requirement {rid!r} was deleted" for rid in old if rid not in new]
    problems += [
        f"requirement {rid!r} was changed"
        for rid, fp in old.items()
        if rid in new and new[rid] != fp
    ]
    return problems
