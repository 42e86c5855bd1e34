"""Tick state: a journal of operations (one JSON object a line), folded into what each job
last did. Pure: no clock, no git, no I/O (the journal's storage is :mod:`.journal`).

Operations (``"v": 1``; times are ISO 8601 UTC)::

    {"v":1,"op":"tick","run":"R","at":T}                      a tick ran
    {"v":1,"op":"baseline","run":"R","at":T,"job":J}          J is new: its clock starts at T
    {"v":1,"op":"fire","run":"R","at":T,"job":J,"due":T|null,"event":KEY|null}
    {"v":1,"op":"skip","run":"R","at":T,"job":J,"due":T|null,"count":N,"event":KEY|null,
     "reason":TEXT}                                           N fire times up to T not run
    {"v":1,"op":"finish","run":"R","at":T,"job":J}            J's run (started by run R) ended

A line that is not one of these is a problem (reported with its place), never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

__all__ = [
    "BaselineOp",
    "FinishOp",
    "FireOp",
    "JobState",
    "Op",
    "ScheduleState",
    "SkipOp",
    "TickOp",
    "dump_ops",
    "fold",
    "parse_ops",
]


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    v: Literal[1] = 1
    run: Annotated[str, Field(min_length=1, max_length=200)]
    at: AwareDatetime


class TickOp(_Op):
    op: Literal["tick"] = "tick"


class BaselineOp(_Op):
    op: Literal["baseline"] = "baseline"
    job: str


class FireOp(_Op):
    op: Literal["fire"] = "fire"
    job: str
    due: AwareDatetime | None = None
    event: str | None = None


class SkipOp(_Op):
    op: Literal["skip"] = "skip"
    job: str
    due: AwareDatetime | None = None
    count: Annotated[int, Field(ge=0)] = 0
    event: str | None = None
    reason: str


class FinishOp(_Op):
    op: Literal["finish"] = "finish"
    job: str


Op = Annotated[TickOp | BaselineOp | FireOp | SkipOp | FinishOp, Field(discriminator="op")]
_OP: TypeAdapter[Op] = TypeAdapter(Op)


def dump_ops(ops: Iterable[Op]) -> str:
    """JSONL text of ``ops`` (one compact object a line, trailing newline)."""
    return "".join(op.model_dump_json(exclude_none=True) + "\n" for op in ops)


def parse_ops(text: str, where: str) -> tuple[list[Op], list[str]]:
    """The operations of JSONL ``text``, and one problem (``where:line: message``) per line
    that is not an operation; blank lines are skipped."""
    ops: list[Op] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            ops.append(_OP.validate_python(json.loads(line)))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            problems.append(f"{where}:{number}: not a journal operation: {first}")
    return ops, problems


@dataclass(frozen=True)
class JobState:
    """What one job last did.

    Attributes:
        since: fire times at or before this are accounted for (run, skipped or baselined).
        fired: when each run started (for the rolling-day budget), oldest first.
        in_flight: ``(run id, started at)`` of a run not yet finished, else ``None``.
        seen_events: event keys already handled (an event starts a job once).
    """

    since: datetime | None = None
    fired: tuple[datetime, ...] = ()
    in_flight: tuple[str, datetime] | None = None
    seen_events: frozenset[str] = frozenset()

    def runs_in_day(self, now: datetime) -> int:
        """Runs started in the 24 hours up to ``now``."""
        return sum(1 for t in self.fired if now - timedelta(days=1) < t <= now)

    def busy(self, now: datetime, lease: timedelta) -> bool:
        """A run is in flight and its lease (from its start) has not run out."""
        return self.in_flight is not None and now < self.in_flight[1] + lease


@dataclass(frozen=True)
class ScheduleState:
    """Every job's :class:`JobState`, and when the last tick ran."""

    last_tick: datetime | None = None
    jobs: Mapping[str, JobState] = field(default_factory=dict)

    def job(self, job_id: str) -> JobState:
        return self.jobs.get(job_id, JobState())


_KEEP_FIRED = timedelta(days=2)
"""How far back run starts are kept: the budget only looks back one day."""


def fold(ops: Iterable[Op], state: ScheduleState | None = None) -> ScheduleState:
    """Apply ``ops`` in order to ``state`` (default: empty). Order matters; duplicates are
    harmless (a fire for an already-seen event or due time changes nothing)."""
    last_tick = state.last_tick if state else None
    jobs: dict[str, JobState] = dict(state.jobs) if state else {}
    for op in ops:
        if isinstance(op, TickOp):
            last_tick = op.at if last_tick is None else max(last_tick, op.at)
            continue
        job = jobs.get(op.job, JobState())
        if isinstance(op, BaselineOp):
            job = replace(job, since=_later(job.since, op.at))
        elif isinstance(op, FireOp):
            seen = job.seen_events | ({op.event} if op.event else set())
            fired = tuple(t for t in job.fired if t > op.at - _KEEP_FIRED)
            if op.at not in fired:
                fired = (*fired, op.at)
            job = replace(
                job,
                since=_later(job.since, op.due),
                fired=fired,
                in_flight=(op.run, op.at),
                seen_events=frozenset(seen),
            )
        elif isinstance(op, SkipOp):
            seen = job.seen_events | ({op.event} if op.event else set())
            job = replace(job, since=_later(job.since, op.due), seen_events=frozenset(seen))
        elif job.in_flight is not None and job.in_flight[0] == op.run:  # a FinishOp
            job = replace(job, in_flight=None)
        jobs[op.job] = job
    return ScheduleState(last_tick=last_tick, jobs=jobs)


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)
