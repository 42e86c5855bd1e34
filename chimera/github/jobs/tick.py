"""The tick job (``chimera action --mode tick``): runs the scheduler on GitHub, calling no
model and running no project code.

It reads ``.chimera.d/schedules/`` from the checkout of the default branch (a broken file
fails here, before anything runs), replays the op journal branch (trusted commits only),
asks :func:`chimera.scheduler.tick.plan_tick` what is due, commits the plan's operations to
the journal — claim first; a lost race re-reads and re-plans — and only then acts on each
:class:`~chimera.scheduler.tick.Run`: it opens or updates the job's one issue (marked, labelled
``chimera:schedule``) and, for a ``task``, dispatches the fix workflow for that issue. The
built-in ``check: spec-green`` reads the default branch's latest Spec check run and files the
red summary on the job's issue; it never runs ``command`` requirements itself.

Token: ``contents: write`` (the journal branch), ``issues: write``, ``actions: write``,
``checks: read``; no LLM key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from chimera.errors import JournalConflict, UsageError
from chimera.github.jobs.context import ActionContext, JobResult
from chimera.scheduler.events import from_payload, spec_red
from chimera.scheduler.loader import load_schedules
from chimera.scheduler.tick import Run, TickPlan, plan_tick

if TYPE_CHECKING:
    from chimera.github.client import IssueInfo
    from chimera.github.settings import ActionSettings
    from chimera.scheduler.clock import Clock
    from chimera.scheduler.journal import GitJournal, TrustPolicy

__all__ = ["LABEL", "TickGitHub", "TickResult", "tick_job"]

LABEL = "chimera:schedule"


class TickGitHub(Protocol):
    """What the tick needs from GitHub. :class:`~chimera.github.client.GitHubClient` has the
    first three; ``create_issue`` and ``latest_check_run`` are still to be added to it."""

    def issues_with_label(self, label: str) -> list[IssueInfo]: ...

    def comment(self, number: int, body: str, *, marker: str | None = None) -> int: ...

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> None: ...

    def create_issue(self, title: str, body: str, labels: Sequence[str]) -> int: ...

    def latest_check_run(self, ref: str, name: str) -> tuple[str, str | None, str] | None:
        """``(head sha, conclusion, output summary)`` of the newest check run ``name`` on
        ``ref`` (conclusion ``None`` while it runs), or ``None``."""
        ...


@dataclass(frozen=True)
class TickResult:
    """The plan the tick committed, the journal commit, and what it did on GitHub."""

    plan: TickPlan
    journal_head: str
    acted: tuple[str, ...] = ()

    def to_job(self) -> JobResult:
        runs = ",".join(r.job for r in self.plan.runs)
        return JobResult(
            outputs={"status": "ticked", "ran": runs},
            record={
                "status": "ticked",
                "journal": self.journal_head,
                "ran": [r.job for r in self.plan.runs],
                "skipped": [[s.job, s.reason, s.count] for s in self.plan.skips],
                "acted": list(self.acted),
            },
        )


def tick_job(
    ctx: ActionContext,
    settings: ActionSettings,
    root: Path,
    *,
    github: TickGitHub,
    journal: GitJournal,
    trust: TrustPolicy,
    clock: Clock,
    run_id: str,
    spec_check: str = "spec",
    attempts: int = 3,
) -> TickResult:
    """One tick (see the module docstring).

    Raises:
        UsageError: the schedules do not validate (nothing runs).
        JournalConflict: other ticks kept winning the journal race ``attempts`` times.
        JournalError: git failed. GitHubError: the API failed after retries.
    """
    load = load_schedules(root)
    if not load.ok:
        raise UsageError(f"the schedules do not validate, nothing runs: {load.problems[0]}")
    now = clock.now()
    events = from_payload(ctx.event_name, ctx.payload, now)
    red_summary = ""
    if any(s.fields.check == "spec-green" for s in load.schedules):
        seen = github.latest_check_run(ctx.default_branch, spec_check)
        if seen is not None:
            events += spec_red(seen[0], seen[1], now)
            red_summary = seen[2] if events and events[-1].kind == "spec-red-on-main" else ""
    for attempt in range(1, attempts + 1):
        tip = journal.fetch()
        replay = journal.replay(trust, tip=tip)
        plan = plan_tick(load, replay.state, now, run_id=run_id, events=events)
        try:
            head = journal.append(run_id, plan.ops, parent=tip)
            break
        except JournalConflict:
            if attempt == attempts:
                raise
    acted = tuple(_act(ctx, settings, github, run, red_summary, run_id) for run in plan.runs)
    return TickResult(plan, head, tuple(a for a in acted if a))


def _issue_for(github: TickGitHub, job: str, title: str) -> int:
    marker = f"<!-- chimera:schedule {job} -->"
    for issue in github.issues_with_label(LABEL):
        if issue.state == "open" and marker in issue.body:
            return issue.number
    body = f"Chimera's schedule `{job}` reports here.\n\n{marker}"
    return github.create_issue(title, body, [LABEL])


def _act(
    ctx: ActionContext,
    settings: ActionSettings,
    github: TickGitHub,
    run: Run,
    red_summary: str,
    run_id: str,
) -> str:
    when = run.due.isoformat() if run.due else run.event or "now"
    if run.check == "spec-green":
        if not red_summary:
            return ""  # green (or no check run yet): nothing to file
        number = _issue_for(github, run.job, "The Spec is red on the default branch")
        body = f"Spec red on `{ctx.default_branch}` ({when}):\n\n{red_summary[:6000]}"
        github.comment(number, body, marker=f"<!-- chimera:tick {run_id} {run.job} -->")
        return f"{run.job}: reported on #{number}"
    number = _issue_for(github, run.job, f"Scheduled: {run.job}")
    body = f"Scheduled run of `{run.job}` ({when}):\n\n{run.task or ''}"
    github.comment(number, body, marker=f"<!-- chimera:tick {run_id} {run.job} -->")
    labeller = settings.identities[0] if settings.identities else ""
    inputs = {"issue-number": str(number), "labeller": labeller}
    github.dispatch_workflow(settings.fix_workflow, ctx.dispatch_ref or ctx.default_branch, inputs)
    return f"{run.job}: dispatched {settings.fix_workflow} for #{number}"
