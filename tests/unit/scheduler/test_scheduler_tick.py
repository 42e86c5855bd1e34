"""The tick as a pure function of (declarations, state, now, events), driven by an injected
clock across DST changes, missed ticks, overlaps and budgets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from chimera.errors import UsageError
from chimera.scheduler.clock import FixedClock
from chimera.scheduler.loader import load_schedules
from chimera.scheduler.model import ObservedEvent, Schedule, ScheduleLoad
from chimera.scheduler.state import FinishOp, ScheduleState, dump_ops, fold, parse_ops
from chimera.scheduler.tick import TickPlan, plan_tick


def declare(tmp_path: Path, body: str) -> ScheduleLoad:
    folder = tmp_path / ".chimera.d" / "schedules"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "jobs.yaml").write_text("schedules:\n" + body)
    load = load_schedules(tmp_path)
    assert load.ok, [str(p) for p in load.problems]
    return load


class Ticker:
    """Ticks like the workflow would: each plan's operations go through JSONL and back."""

    def __init__(self, schedules: ScheduleLoad, clock: FixedClock) -> None:
        self.schedules = schedules
        self.clock = clock
        self.state = ScheduleState()
        self.n = 0

    def tick(self, events: tuple[ObservedEvent, ...] = ()) -> TickPlan:
        self.n += 1
        plan = plan_tick(
            self.schedules, self.state, self.clock.now(), run_id=f"r{self.n}", events=events
        )
        ops, problems = parse_ops(dump_ops(plan.ops), "journal")
        assert problems == []
        self.state = fold(ops, self.state)
        assert self.state == plan.state
        return plan


WARSAW_0230 = """\
  - id: nightly
    cron: {expr: "30 2 * * *", timezone: Europe/Warsaw}
    task: Refresh the dependency report.
    missed: skip
"""


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def test_a_new_job_starts_its_clock_and_then_fires_on_time(tmp_path: Path) -> None:
    clock = FixedClock(utc(2025, 3, 1, 0, 0))
    ticker = Ticker(declare(tmp_path, WARSAW_0230), clock)
    first = ticker.tick()
    assert first.baselined == ("nightly",) and first.runs == ()
    clock.set(utc(2025, 3, 1, 1, 35))  # 02:35 in Warsaw (CET, +01:00)
    plan = ticker.tick()
    assert [(r.job, r.due) for r in plan.runs] == [("nightly", utc(2025, 3, 1, 1, 30))]
    assert plan.runs[0].task == "Refresh the dependency report."
    assert ticker.tick().runs == ()  # the same fire time never runs twice


def test_spring_forward_runs_the_skipped_time_once(tmp_path: Path) -> None:
    # 2025-03-30: Warsaw jumps from 02:00 to 03:00; 02:30 does not exist that night.
    clock = FixedClock(utc(2025, 3, 29, 12, 0))
    ticker = Ticker(declare(tmp_path, WARSAW_0230), clock)
    ticker.tick()
    fires = []
    for _ in range(64):  # every 15 minutes for 16 hours
        clock.advance(timedelta(minutes=15))
        fires += [r.due for r in ticker.tick().runs]
    # Debian cron's rule (cronsim): the skipped 02:30 runs at 03:00 CEST = 01:00 UTC, once.
    assert fires == [utc(2025, 3, 30, 1, 0)]


def test_fall_back_runs_the_repeated_time_once(tmp_path: Path) -> None:
    # 2025-10-26: Warsaw's 02:00-03:00 happens twice (CEST, then CET).
    clock = FixedClock(utc(2025, 10, 25, 12, 0))
    ticker = Ticker(declare(tmp_path, WARSAW_0230), clock)
    ticker.tick()
    fires = []
    for _ in range(96):  # every 10 minutes for 16 hours, through both passes of 02:30
        clock.advance(timedelta(minutes=10))
        fires += [r.due for r in ticker.tick().runs]
    assert fires == [utc(2025, 10, 26, 0, 30)]


HOURLY = """\
  - id: hourly
    cron: {{expr: "0 * * * *", timezone: UTC}}
    task: Look at the queue.
    missed: {missed}
    grace_minutes: 30
    lease_minutes: 5
    budget: {{runs_per_day: 24}}
"""


@pytest.mark.parametrize(("missed", "runs", "skipped"), [("once", 1, 0), ("skip", 0, 5)])
def test_missed_ticks_catch_up_once_or_skip(
    tmp_path: Path, missed: str, runs: int, skipped: int
) -> None:
    clock = FixedClock(utc(2025, 1, 1, 0, 10))
    ticker = Ticker(declare(tmp_path, HOURLY.format(missed=missed)), clock)
    ticker.tick()
    clock.set(utc(2025, 1, 1, 5, 45))  # the runner was down: 01:00 .. 05:00 all missed
    plan = ticker.tick()
    assert len(plan.runs) == runs
    if runs:
        assert plan.runs[0].due == utc(2025, 1, 1, 5, 0) and plan.runs[0].folded == 4
    assert sum(s.count for s in plan.skips) == skipped
    clock.set(utc(2025, 1, 1, 6, 5))
    assert [r.due for r in ticker.tick().runs] == [utc(2025, 1, 1, 6, 0)]


def test_skip_still_runs_the_fire_time_within_grace(tmp_path: Path) -> None:
    clock = FixedClock(utc(2025, 1, 1, 0, 10))
    ticker = Ticker(declare(tmp_path, HOURLY.format(missed="skip")), clock)
    ticker.tick()
    clock.set(utc(2025, 1, 1, 3, 20))  # 01:00 and 02:00 missed, 03:00 within 30 min
    plan = ticker.tick()
    assert [r.due for r in plan.runs] == [utc(2025, 1, 1, 3, 0)]
    assert [(s.count, s.due) for s in plan.skips] == [(2, utc(2025, 1, 1, 2, 0))]


OVERLAP = """\
  - id: slow
    cron: {expr: "0 * * * *", timezone: UTC}
    task: A long job.
    lease_minutes: 150
    budget: {runs_per_day: 24}
"""


def test_a_run_in_flight_blocks_the_next_until_it_finishes_or_its_lease_ends(
    tmp_path: Path,
) -> None:
    clock = FixedClock(utc(2025, 1, 1, 0, 30))
    ticker = Ticker(declare(tmp_path, OVERLAP), clock)
    ticker.tick()
    clock.set(utc(2025, 1, 1, 1, 1))
    assert len(ticker.tick().runs) == 1  # r2 starts a run
    clock.set(utc(2025, 1, 1, 2, 1))
    plan = ticker.tick()
    assert plan.runs == () and "still in flight" in plan.skips[0].reason
    ticker.state = fold([FinishOp(run="r2", at=clock.now(), job="slow")], ticker.state)
    clock.set(utc(2025, 1, 1, 3, 1))
    assert len(ticker.tick().runs) == 1  # finished: runs again
    clock.set(utc(2025, 1, 1, 6, 1))  # never finished, but 150 min passed: the lease ended
    assert len(ticker.tick().runs) == 1


def test_the_budget_caps_runs_per_rolling_day(tmp_path: Path) -> None:
    body = OVERLAP.replace("runs_per_day: 24", "runs_per_day: 2").replace("150", "1")
    clock = FixedClock(utc(2025, 1, 1, 0, 30))
    ticker = Ticker(declare(tmp_path, body), clock)
    ticker.tick()
    ran = []
    for _ in range(30):
        clock.advance(timedelta(hours=1))
        ran += [r.due for r in ticker.tick().runs]
    # Runs start at the ticks (01:30, 02:30); at most two in any 24 hours, so the next ones
    # wait until those starts have left the rolling window, a day later.
    assert ran == [
        utc(2025, 1, 1, 1, 0),
        utc(2025, 1, 1, 2, 0),
        utc(2025, 1, 2, 1, 0),
        utc(2025, 1, 2, 2, 0),
    ]
    assert ticker.state.job("slow").since == utc(2025, 1, 2, 6, 0)  # skipped hours accounted


EVENTS = """\
  - id: triage
    event: {kind: issue-labelled, label: triage}
    task: Triage the issue.
    lease_minutes: 1
    budget: {runs_per_day: 2}
  - id: proposal
    event: {kind: pull-request-merged}
    task: Tidy the changelog.
    created_by: agent
    enabled: false
"""


def ev(kind: str, key: str, at: datetime, **detail: str) -> ObservedEvent:
    return ObservedEvent(kind, key, at, tuple(detail.items()))


def test_event_sops_run_once_per_event_and_agent_jobs_wait(tmp_path: Path) -> None:
    clock = FixedClock(utc(2025, 1, 1, 9, 0))
    ticker = Ticker(declare(tmp_path, EVENTS), clock)
    labelled = ev("issue-labelled", "issue:7:triage", clock.now(), label="triage")
    other = ev("issue-labelled", "issue:8:bug", clock.now(), label="bug")
    merged = ev("pull-request-merged", "pr:3", clock.now(), branch="main")
    plan = ticker.tick((labelled, other, merged))
    assert [(r.job, r.event) for r in plan.runs] == [("triage", "issue:7:triage")]
    assert [(s.job, s.reason) for s in plan.skips] == [
        ("proposal", "disabled"),
    ]
    clock.advance(timedelta(minutes=5))
    assert ticker.tick((labelled,)).runs == ()  # the same event never starts a job twice
    both = [ev("issue-labelled", f"issue:{n}:triage", clock.now(), label="triage") for n in (9, 10)]
    plan = ticker.tick(tuple(both))
    assert [r.event for r in plan.runs] == ["issue:10:triage"]  # events in (time, key) order
    assert [s.reason for s in plan.skips] == ["the previous run (tick r3) is still in flight"]
    clock.advance(timedelta(minutes=5))  # the 1-minute lease is over; the budget is not
    plan = ticker.tick((ev("issue-labelled", "issue:11:triage", clock.now(), label="triage"),))
    assert plan.runs == () and plan.skips[0].reason.startswith("budget: 2 run(s)")


def test_a_broken_declaration_fails_before_anything_runs(tmp_path: Path) -> None:
    folder = tmp_path / ".chimera.d" / "schedules"
    folder.mkdir(parents=True)
    (folder / "ok.yaml").write_text(
        "schedules:\n  - id: fine\n    cron: {expr: '0 6 * * *', timezone: UTC}\n    task: x\n"
    )
    (folder / "broken.yaml").write_text("schedules:\n  - id: broken\n    cron: [\n")
    load = load_schedules(tmp_path)
    assert not load.ok
    with pytest.raises(UsageError, match=r"broken\.yaml:\d+:\d+: .*nothing runs"):
        plan_tick(load, ScheduleState(), utc(2025, 1, 1), run_id="r1")


def test_time_never_goes_backwards(tmp_path: Path) -> None:
    load = declare(tmp_path, WARSAW_0230)
    plan = plan_tick(load, ScheduleState(), utc(2025, 1, 2), run_id="r1")
    with pytest.raises(UsageError, match="before the last tick"):
        plan_tick(load, plan.state, utc(2025, 1, 1), run_id="r2")
    with pytest.raises(UsageError, match="no timezone"):
        plan_tick(load, plan.state, datetime(2025, 1, 3), run_id="r3")


def test_disabled_schedules_are_listed_as_schedules(tmp_path: Path) -> None:
    load = declare(tmp_path, EVENTS)
    assert [s.id for s in load.schedules] == ["triage", "proposal"]
    assert isinstance(load.schedules[0], Schedule)
    assert [s.active for s in load.schedules] == [True, False]
