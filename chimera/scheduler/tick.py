"""The tick: a pure function over (declarations, state, now, events) → decisions.

It calls no model, runs no project code and reads no clock: what to run is decided here; the
GitHub adapter (``chimera/github/jobs/tick.py``) only files or updates issues and dispatches
workflows for the :class:`Run` decisions, after the plan's operations are committed to the
journal (claim first, act second: a tick that loses the journal race acts on nothing, so two
overlapping ticks never run a job twice; a crash between claim and act loses one run, it never
doubles one).

Per job, in this order:

* a declaration the tick has never seen starts its clock now (``baseline``): nothing from
  before it existed is "missed";
* time triggers list the fire times since the job's last accounted one; event triggers take
  the matching events whose key the job has not handled;
* nothing runs for a job that is disabled or waits for a person's approval, whose previous run
  is still in flight (within ``lease_minutes`` of its start, unless finished), or that has used
  its ``budget.runs_per_day`` in the last 24 hours — each such case is a :class:`Skip` with the
  reason, journaled, so the same fire times are not reconsidered;
* missed fire times (older than ``grace_minutes``): ``missed: once`` runs the job once for all
  of them; ``missed: skip`` drops them and runs only a fire time within the grace window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from chimera.errors import UsageError
from chimera.scheduler.clock import aware
from chimera.scheduler.model import Missed, ObservedEvent, Schedule, ScheduleLoad
from chimera.scheduler.state import (
    BaselineOp,
    FireOp,
    Op,
    ScheduleState,
    SkipOp,
    TickOp,
    fold,
)

__all__ = ["Run", "Skip", "TickPlan", "plan_tick"]


@dataclass(frozen=True)
class Run:
    """Start one run of ``job``: a ``task`` (a fix run of that text) or a built-in ``check``.

    Attributes:
        due: the fire time it answers (``None`` for an event).
        event: the event key it answers (``None`` for a fire time).
        folded: missed fire times this run stands for besides ``due`` (``missed: once``).
        usd: the run's dollar budget (``None``: the run's default).
    """

    job: str
    task: str | None
    check: str | None
    due: datetime | None = None
    event: str | None = None
    folded: int = 0
    usd: float | None = None


@dataclass(frozen=True)
class Skip:
    """``job`` does not run for ``count`` fire times up to ``due`` (or for ``event``)."""

    job: str
    reason: str
    due: datetime | None = None
    count: int = 0
    event: str | None = None


@dataclass(frozen=True)
class TickPlan:
    """What one tick decided, and the operations that record it (to journal before acting).

    Attributes:
        runs: the runs to start, in declaration order.
        skips: what was not run, with reasons.
        baselined: ids of jobs seen for the first time.
        ops: the journal operations (a ``tick`` first).
        state: ``state`` with ``ops`` applied.
    """

    now: datetime
    run_id: str
    runs: tuple[Run, ...] = ()
    skips: tuple[Skip, ...] = ()
    baselined: tuple[str, ...] = ()
    ops: tuple[Op, ...] = ()
    state: ScheduleState = field(default_factory=ScheduleState)


class _Planner:
    def __init__(self, state: ScheduleState, now: datetime, run_id: str) -> None:
        self.state = state
        self.now = now
        self.run_id = run_id
        self.runs: list[Run] = []
        self.skips: list[Skip] = []
        self.baselined: list[str] = []
        self.ops: list[Op] = []
        self.emit(TickOp(run=run_id, at=now))

    def emit(self, op: Op) -> None:
        self.ops.append(op)
        self.state = fold([op], self.state)

    def skip(self, s: Schedule, reason: str, due: list[datetime], event: str | None) -> None:
        last = due[-1] if due else None
        self.skips.append(Skip(s.id, reason, last, len(due), event))
        self.emit(
            SkipOp(
                run=self.run_id,
                at=self.now,
                job=s.id,
                due=last,
                count=len(due),
                event=event,
                reason=reason,
            )
        )

    def refusal(self, s: Schedule) -> str | None:
        """Why ``s`` may not start a run now, or ``None``."""
        if not s.fields.enabled:
            return "disabled"
        if not s.active:
            return "proposed by the agent; waits for a person's approval"
        job = self.state.job(s.id)
        if job.busy(self.now, timedelta(minutes=s.fields.lease_minutes)):
            assert job.in_flight is not None
            return f"the previous run (tick {job.in_flight[0]}) is still in flight"
        limit = s.fields.budget.runs_per_day
        if job.runs_in_day(self.now) >= limit:
            return f"budget: {limit} run(s) in the last 24 hours already"
        return None

    def run(self, s: Schedule, due: datetime | None, event: str | None, folded: int) -> None:
        f = s.fields
        self.runs.append(Run(s.id, f.task, f.check, due, event, folded, f.budget.usd_per_run))
        self.emit(FireOp(run=self.run_id, at=self.now, job=s.id, due=due, event=event))

    def timed(self, s: Schedule) -> None:
        since = self.state.job(s.id).since
        if since is None:
            self.baselined.append(s.id)
            self.emit(BaselineOp(run=self.run_id, at=self.now, job=s.id))
            return
        due = s.trigger.fires_between(since, self.now)
        if not due:
            return
        refusal = self.refusal(s)
        if refusal is not None:
            self.skip(s, refusal, due, None)
            return
        grace = timedelta(minutes=s.fields.grace_minutes)
        on_time = [t for t in due if self.now - t <= grace]
        if s.fields.missed is Missed.ONCE:
            self.run(s, due[-1], None, len(due) - 1)
        elif on_time:
            if len(due) > 1:
                self.skip(s, "missed (missed: skip)", due[:-1], None)
            self.run(s, on_time[-1], None, 0)
        else:
            self.skip(
                s, f"missed by more than {s.fields.grace_minutes} min (missed: skip)", due, None
            )

    def evented(self, s: Schedule, events: Sequence[ObservedEvent]) -> None:
        for event in events:
            if not s.trigger.matches(event) or event.key in self.state.job(s.id).seen_events:
                continue
            refusal = self.refusal(s)
            if refusal is not None:
                self.skip(s, refusal, [], event.key)
            else:
                self.run(s, None, event.key, 0)


def plan_tick(
    schedules: ScheduleLoad | Sequence[Schedule],
    state: ScheduleState,
    now: datetime,
    *,
    run_id: str,
    events: Sequence[ObservedEvent] = (),
) -> TickPlan:
    """Decide what this tick runs.

    Args:
        schedules: the declarations (a load with problems is refused: a broken file fails
            before anything runs).
        state: the replayed journal.
        now: the tick's time (aware).
        run_id: names this tick in the journal (the workflow run id on GitHub).
        events: what happened since the last tick (any order; taken oldest first).

    Raises:
        UsageError: ``schedules`` has problems, ``now`` is naive, or ``now`` is before the
            last tick (a clock going backwards would re-run fire times).
    """
    if isinstance(schedules, ScheduleLoad):
        if not schedules.ok:
            raise UsageError(
                f"the schedules do not validate ({len(schedules.problems)} problem(s), first: "
                f"{schedules.problems[0]}); nothing runs"
            )
        schedules = schedules.schedules
    now = aware(now)
    if state.last_tick is not None and now < state.last_tick:
        raise UsageError(
            f"now ({now.isoformat()}) is before the last tick ({state.last_tick.isoformat()})"
        )
    planner = _Planner(state, now, run_id)
    ordered = sorted(events, key=lambda e: (e.at, e.key))
    for s in schedules:
        if s.trigger.cron_expression() is not None or s.trigger.next_after(now) is not None:
            planner.timed(s)
        else:
            planner.evented(s, ordered)
    return TickPlan(
        now=now,
        run_id=run_id,
        runs=tuple(planner.runs),
        skips=tuple(planner.skips),
        baselined=tuple(planner.baselined),
        ops=tuple(planner.ops),
        state=planner.state,
    )
