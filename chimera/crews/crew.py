"""The runtime crews: :class:`SequentialCrew`, :class:`ParallelCrew`, :class:`SupervisorCrew`.

What they share, and what CrewAI's users asked for in vain:

* Context is bounded: a role sees the earlier outputs **consolidated**
  (:func:`~chimera.crews.consolidate.consolidate`, under a token budget), never concatenated.
* A supervisor must delegate: the workers always take the task first (in parallel, each under
  its own budget); the supervisor has no tools and only synthesises their consolidated
  findings, or sends named workers back with ``DELEGATE <role>: <what>`` lines.
* Rounds are bounded, and a crew always ends with a stated status — ``completed``,
  ``partial`` (a role stopped early: budget, step limit, provider error), ``round_limit``
  (the supervisor still delegated when the rounds ran out) or ``failed`` (no role produced
  any text) — and the best answer it has (for ``failed``, a sentence saying why).
* Every model call is budgeted and audited (role, round, tokens, cost); no telemetry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from chimera.core.agent import UsageTotals
from chimera.crews.agent import RoleAgent, RoleOutput
from chimera.crews.consolidate import Consolidation, consolidate
from chimera.crews.memory import CrewMemory
from chimera.crews.model import CrewDefinition, Role
from chimera.governance.redactor import cut_redacted
from chimera.governance.sanitize import fence_untrusted
from chimera.protocols import AuditSink, EventSink, Purpose, SupportsComplete, ToolCaller

__all__ = [
    "Crew",
    "CrewResult",
    "CrewRuntime",
    "CrewStatus",
    "ParallelCrew",
    "SequentialCrew",
    "SupervisorCrew",
]

CrewStatus = Literal["completed", "partial", "round_limit", "failed"]

_DELEGATE = re.compile(r"^\s*[*_`]*DELEGATE\s+([A-Za-z][\w-]*)\s*[:\-]\s*(.+?)\s*$", re.I)
_MAX_PARALLEL = 8


@dataclass(frozen=True)
class CrewRuntime:
    """What a crew runs on.

    Attributes:
        backend_for: a role to its budgeted backend (:meth:`RoleBackends.for_role`).
        tools: the run's (governed) tools; each role sees its allowlist of them.
        audit: the run's audit log (``crew.*`` events).
        events: live progress.
        purpose: the purpose of the roles' calls (``review`` for a review crew).
        memory: the crew's shared memory (:class:`~chimera.crews.memory.CrewMemory`): each
            role recalls from it and writes ``REMEMBER:`` lines to it through the memory's
            gate; ``None``: no memory.
    """

    backend_for: Callable[[Role], SupportsComplete]
    tools: ToolCaller | None = None
    audit: AuditSink | None = None
    events: EventSink | None = None
    purpose: Purpose = Purpose.ACT
    memory: CrewMemory | None = None


@dataclass
class CrewResult:
    """How a crew run ended.

    Attributes:
        crew, kind: the crew's name and kind.
        status: see the module docstring; ``reason`` says why in one line.
        answer: the best answer the crew has (never empty).
        outputs: every role's output, in the order they finished (rounds in order).
        rounds: rounds run (1 for sequential and parallel crews).
        consolidation: the last consolidation made (``None`` when none was needed).
        usage: tokens and cost of every call.
    """

    crew: str
    kind: str
    status: CrewStatus
    reason: str
    answer: str
    outputs: list[RoleOutput] = field(default_factory=list)
    rounds: int = 1
    consolidation: Consolidation | None = None
    usage: UsageTotals = field(default_factory=UsageTotals)

    def to_json(self) -> dict[str, Any]:
        return {
            "crew": self.crew,
            "kind": self.kind,
            "status": self.status,
            "reason": self.reason,
            "answer": self.answer,
            "rounds": self.rounds,
            "outputs": [o.to_json() for o in self.outputs],
            "consolidation": self.consolidation.to_json() if self.consolidation else None,
            "usage": self.usage.to_json(),
        }


class Crew:
    """Base of the runtime crews: :meth:`run` audits the start and the end around
    :meth:`_run`, which subclasses implement."""

    kind: ClassVar[str] = ""

    def __init__(self, definition: CrewDefinition) -> None:
        self.definition = definition

    def run(self, task: str, runtime: CrewRuntime) -> CrewResult:
        """Run the crew on ``task``. Budget refusals and provider errors stop the role they
        hit (its output says so); the crew goes on and states its status."""
        d = self.definition
        self._emit(runtime, "crew.started", kind=self.kind, roles=[r.name for r in d.roles])
        result = self._run(task, runtime)
        for o in result.outputs:
            result.usage.add(o.usage)
        self._emit(
            runtime,
            "crew.finished",
            kind=self.kind,
            status=result.status,
            reason=result.reason,
            rounds=result.rounds,
            **result.usage.to_json(),
        )
        return result

    def _run(self, task: str, runtime: CrewRuntime) -> CrewResult:
        raise NotImplementedError

    # -- shared steps ---------------------------------------------------------------------

    def _emit(self, runtime: CrewRuntime, event: str, **fields: Any) -> None:
        fields = {"crew": self.definition.name, **fields}
        if runtime.audit is not None:
            runtime.audit.append(event, **fields)
        if runtime.events is not None:
            runtime.events(event, fields)

    def _role(
        self,
        runtime: CrewRuntime,
        role: Role,
        task: str,
        *,
        context: str = "",
        round: int = 1,
        system_extra: str = "",
    ) -> RoleOutput:
        self._emit(runtime, "crew.role_started", role=role.name, round=round)
        agent = RoleAgent(
            role,
            runtime.backend_for(role),
            runtime.tools,
            crew=self.definition.name,
            audit=runtime.audit,
            events=runtime.events,
            purpose=runtime.purpose,
        )
        if runtime.memory is None:
            out = agent.run(task, context=context, round=round, system_extra=system_extra)
        else:
            out, written = runtime.memory.run_role(
                agent, task, context=context, round=round, system_extra=system_extra
            )
            if written:
                self._emit(runtime, "crew.memory", role=role.name, round=round, ops=written)
        self._emit(
            runtime,
            "crew.role",
            role=role.name,
            round=round,
            outcome=out.outcome,
            steps=out.steps,
            model=out.model,
            error=cut_redacted(out.error, 300),  # redacted before the cut
            **out.usage.to_json(),
        )
        return out

    def _parallel(
        self, runtime: CrewRuntime, jobs: Sequence[tuple[Role, str]], round: int, context: str
    ) -> list[RoleOutput]:
        """Run ``(role, task)`` jobs at once; outputs in job order (deterministic)."""
        if len(jobs) == 1:
            role, task = jobs[0]
            return [self._role(runtime, role, task, context=context, round=round)]
        with ThreadPoolExecutor(max_workers=min(len(jobs), _MAX_PARALLEL)) as pool:
            futures = [
                pool.submit(self._role, runtime, role, task, context=context, round=round)
                for role, task in jobs
            ]
            return [f.result() for f in futures]

    def _consolidate(self, runtime: CrewRuntime, outputs: Sequence[RoleOutput]) -> Consolidation:
        s = self.definition.consolidate
        c = consolidate(
            [(o.role, o.text) for o in outputs if o.text],
            max_tokens=s.tokens,
            similarity=s.similarity,
        )
        self._emit(
            runtime,
            "crew.consolidated",
            roles=[o.role for o in outputs if o.text],
            agreed=len(c.agreed),
            conflicts=len(c.conflicts),
            unique=len(c.unique),
            repeats=c.repeats,
            omitted=c.omitted,
            tokens=c.tokens,
        )
        return c


def _stopped(outputs: Sequence[RoleOutput]) -> list[RoleOutput]:
    return [o for o in outputs if not o.finished]


def _stop_note(outputs: Sequence[RoleOutput]) -> str:
    return "; ".join(f"{o.role} stopped ({o.outcome}: {o.error or 'no detail'})" for o in outputs)


def _nothing(outputs: Sequence[RoleOutput]) -> str:
    return "No role produced an answer: " + _stop_note(outputs) + "."


class SequentialCrew(Crew):
    """Roles in order; each sees the task and the earlier outputs consolidated. The answer is
    the last role's (else the latest any role gave, with status ``partial``)."""

    kind = "sequential"

    def __init__(self, definition: CrewDefinition, order: Sequence[str] = ()) -> None:
        super().__init__(definition)
        self.order = [definition.role(n) for n in order] if order else list(definition.roles)

    def _run(self, task: str, runtime: CrewRuntime) -> CrewResult:
        outputs: list[RoleOutput] = []
        consolidation: Consolidation | None = None
        for role in self.order:
            earlier = [o for o in outputs if o.text]
            context = ""
            if earlier:
                consolidation = self._consolidate(runtime, earlier)
                context = consolidation.text
            outputs.append(self._role(runtime, role, task, context=context))
        name, kind = self.definition.name, self.kind
        stopped = _stopped(outputs)
        with_text = [o for o in outputs if o.text]
        if not with_text:
            return CrewResult(name, kind, "failed", _stop_note(stopped), _nothing(outputs), outputs)
        last = outputs[-1]
        if not stopped:
            return CrewResult(
                name, kind, "completed", "every role finished", last.text, outputs, 1, consolidation
            )
        best = last if last.text else with_text[-1]
        return CrewResult(
            name, kind, "partial", _stop_note(stopped), best.text, outputs, 1, consolidation
        )


class ParallelCrew(Crew):
    """Every role takes the task at once (each under its own budget); the answer is their
    outputs consolidated (agreements, disagreements with sources, unique findings)."""

    kind = "parallel"

    def _run(self, task: str, runtime: CrewRuntime) -> CrewResult:
        name, kind = self.definition.name, self.kind
        outputs = self._parallel(runtime, [(r, task) for r in self.definition.roles], 1, "")
        stopped = _stopped(outputs)
        if not any(o.text for o in outputs):
            return CrewResult(name, kind, "failed", _stop_note(stopped), _nothing(outputs), outputs)
        c = self._consolidate(runtime, outputs)
        if stopped:
            return CrewResult(name, kind, "partial", _stop_note(stopped), c.text, outputs, 1, c)
        return CrewResult(name, kind, "completed", "every role finished", c.text, outputs, 1, c)


def parse_delegations(text: str) -> tuple[list[tuple[str, str]], str]:
    """``([(role, instruction), ...], the text without those lines)`` of a supervisor's answer."""
    asks: list[tuple[str, str]] = []
    kept: list[str] = []
    for line in text.splitlines():
        m = _DELEGATE.match(line)
        if m:
            asks.append((m.group(1), m.group(2).strip("*_` ")))
        else:
            kept.append(line)
    return asks, "\n".join(kept).strip()


class SupervisorCrew(Crew):
    """Workers take the task in parallel; their outputs are consolidated; the supervisor
    synthesises, or sends named workers back for another round (at most ``rounds``)."""

    kind = "supervisor"

    def __init__(
        self, definition: CrewDefinition, supervisor: str, workers: Sequence[str], rounds: int
    ) -> None:
        super().__init__(definition)
        self.supervisor = definition.role(supervisor)
        self.workers = [definition.role(w) for w in workers]
        self.rounds = rounds

    def _brief(self, left: int) -> str:
        names = ", ".join(w.name for w in self.workers)
        more = (
            f"If a worker must look again, write one line `DELEGATE <worker>: <what to do>` per "
            f"worker ({left} more round(s) allowed); otherwise write the final answer."
            if left
            else "No more rounds are allowed: write the final answer now."
        )
        return (
            f"You supervise the workers {names}. They did the work; you have no tools and do "
            f"not redo it: synthesise their consolidated findings into one answer, keeping "
            f"disagreements visible. {more}"
        )

    def _run(self, task: str, runtime: CrewRuntime) -> CrewResult:
        name, kind = self.definition.name, self.kind
        outputs: list[RoleOutput] = []
        latest: dict[str, RoleOutput] = {}
        jobs = [(w, task) for w in self.workers]
        consolidation: Consolidation | None = None
        synthesis = ""
        pending: list[str] = []
        notes: list[str] = []
        for round_no in range(1, self.rounds + 1):
            context = consolidation.text if consolidation is not None else ""
            done = self._parallel(runtime, jobs, round_no, context)
            outputs.extend(done)
            latest.update({o.role: o for o in done if o.text or o.role not in latest})
            ordered = [latest[w.name] for w in self.workers if w.name in latest]
            if not any(o.text for o in ordered):
                stopped = _stopped(outputs)
                return CrewResult(
                    name, kind, "failed", _stop_note(stopped), _nothing(outputs), outputs, round_no
                )
            consolidation = self._consolidate(runtime, ordered)
            self._emit(runtime, "crew.round", round=round_no, workers=[j[0].name for j in jobs])
            sup = self._role(
                runtime,
                self.supervisor,
                task,
                context=consolidation.text,
                round=round_no,
                system_extra=self._brief(self.rounds - round_no),
            )
            outputs.append(sup)
            asks, text = parse_delegations(sup.text)
            known = {w.name: w for w in self.workers}
            unknown = [r for r, _ in asks if r not in known]
            if unknown:
                notes.append(f"the supervisor named unknown worker(s): {', '.join(unknown)}")
            asks = [(r, what) for r, what in asks if r in known]
            synthesis = text or synthesis
            if not sup.finished and not sup.text:
                stopped = _stopped(outputs)
                return CrewResult(
                    name,
                    kind,
                    "partial",
                    _stop_note(stopped) + "; the answer is the workers' consolidation",
                    consolidation.text,
                    outputs,
                    round_no,
                    consolidation,
                )
            if not asks:
                pending = []
                break
            pending = [r for r, _ in asks]
            # The supervisor's words are model output over the workers' findings: data.
            jobs = [
                (
                    known[r],
                    f"{task}\n\n## Follow-up from the supervisor\n"
                    + fence_untrusted(what, "supervisor follow-up"),
                )
                for r, what in asks
            ]
        answer = synthesis or (consolidation.text if consolidation else "")
        stopped = _stopped(outputs)
        if pending:
            reason = (
                f"{self.rounds} round(s) used and the supervisor still asked for: "
                f"{', '.join(pending)}"
            )
            return CrewResult(
                name, kind, "round_limit", reason, answer, outputs, self.rounds, consolidation
            )
        rounds = max(o.round for o in outputs)
        status: CrewStatus = "partial" if stopped else "completed"
        reason = _stop_note(stopped) if stopped else "the supervisor gave the final answer"
        if notes:
            reason += "; " + "; ".join(notes)
        return CrewResult(name, kind, status, reason, answer, outputs, rounds, consolidation)
