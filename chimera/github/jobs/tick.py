"""The tick job (``chimera action --mode tick``): runs the scheduler on GitHub, calling no
model and running no project code.

It reads ``.chimera.d/schedules/`` from the checkout of the default branch (a broken file
fails here, before anything runs), replays the op journal branch (trusted commits only),
asks :func:`chimera.scheduler.tick.plan_tick` what is due, commits the plan's operations to
the journal — claim first; a lost race re-reads and re-plans — and only then acts on each
:class:`~chimera.scheduler.tick.Run`: it opens or updates the job's one issue (marked, labelled
``chimera:schedule``) and, for a ``task``, starts the fix workflow for that issue — through the
new issue's own label event (decide runs a ``chimera:schedule`` label Chimera added to an issue
with the task marker), or, for an issue still open from an earlier fire, a dispatch. The
built-in ``check: spec-green`` reads the default branch's latest Spec check run and files the
red summary on the job's issue; it never runs ``command`` requirements itself.

Token: a GitHub App installation token with ``contents: write`` (the journal branch),
``issues: write`` (the job's issue, its label and comments), ``actions: write`` (the fix
workflow's dispatch) and ``checks: read`` (the Spec check run); no LLM key and no other
secret. An App token, not the workflow's ``GITHUB_TOKEN``: the dispatch and the
``chimera:schedule`` label must come from Chimera's App identity, which decide checks. With
it, journal commits go through GitHub's ``createCommitOnBranch``, which signs them for the App
(as memory's); an SSH signing key (``journal-signing-key``) is the way for a job without an
App token, whose commits git pushes and signs.

A tick run is named ``<GITHUB_RUN_ID>.<GITHUB_RUN_ATTEMPT>`` in the journal, so "Re-run
jobs" is a new tick (it re-plans from the journal and finds the job already claimed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from chimera.errors import JournalConflict, UsageError
from chimera.github.action.context import ActionContext, JobResult
from chimera.github.gate.decision import task_marker
from chimera.github.trust.schedule_journal import journal_trust, signed_journal, tick_marker
from chimera.github.trust.settings import SCHEDULE_LABEL
from chimera.scheduler.events import from_payload, spec_red
from chimera.scheduler.loader import load_schedules
from chimera.scheduler.model import ScheduleLoad
from chimera.scheduler.tick import Run, TickPlan, plan_tick

if TYPE_CHECKING:
    from chimera.github.client.client import IssueInfo
    from chimera.github.client.tickapi import CheckRunSeen
    from chimera.github.trust.settings import ActionSettings
    from chimera.scheduler.clock import Clock
    from chimera.scheduler.journal import GitJournal, TrustPolicy

__all__ = ["LABEL", "SPEC_CHECK", "TickGitHub", "TickResult", "run_tick", "tick_job"]

LABEL = SCHEDULE_LABEL
SPEC_CHECK = "spec"
"""The check run the built-in ``spec-green`` reads: the job id of ``chimera-check.yml``."""


class TickGitHub(Protocol):
    """What the tick needs from GitHub (:class:`~chimera.github.client.tickapi.TickClient`)."""

    def issues_with_label(self, label: str) -> list[IssueInfo]: ...

    def comment(self, number: int, body: str, *, marker: str | None = None) -> int: ...

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> None: ...

    def create_issue(self, title: str, body: str, labels: Sequence[str], *, marker: str) -> int:
        """The open issue labelled ``labels[0]`` whose body holds ``marker``, else a new one."""
        ...

    def latest_check_run(self, ref: str, name: str) -> CheckRunSeen | None: ...


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
    spec_check: str = SPEC_CHECK,
    attempts: int = 3,
) -> TickResult:
    """One tick (see the module docstring).

    Raises:
        UsageError: the schedules do not validate (nothing runs).
        JournalConflict: other ticks kept winning the journal race ``attempts`` times.
        JournalError: git failed. GitHubError: the API failed after retries.
    """
    load = _load(root)
    now = clock.now()
    events = from_payload(ctx.event_name, ctx.payload, now)
    red_summary = ""
    if any(s.fields.check == "spec-green" for s in load.schedules):
        seen = github.latest_check_run(ctx.default_branch, spec_check)
        if seen is not None:
            events += spec_red(seen.head_sha, seen.conclusion, now)
            red = events and events[-1].kind == "spec-red-on-main"
            red_summary = (seen.summary or f"the `{spec_check}` check failed") if red else ""
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


def _load(root: Path) -> ScheduleLoad:
    """The declarations, or a one-line ``file:line:col: message`` error (the first problem)."""
    load = load_schedules(root)
    if not load.ok:
        more = f" (and {len(load.problems) - 1} more)" if len(load.problems) > 1 else ""
        raise UsageError(f"{load.problems[0]}{more}; the schedules do not validate, nothing ran")
    return load


def _issue_for(github: TickGitHub, job: str, title: str, task: str | None) -> tuple[int, bool]:
    """The job's one open issue (found by its marker), filed when there is none; and whether
    it was filed now. A task's text is the issue's body: the run works from the issue, as for
    a person's, and its task marker makes the filing's label event the run's start."""
    marker = f"<!-- chimera:schedule {job} -->"
    about = f"Chimera's schedule `{job}` files this issue"
    if task:
        body = f"{task}\n\n---\n{about}.\n{marker}\n{task_marker(job)}"
    else:
        body = f"{about}.\n\n{marker}"
    existing = any(marker in i.body for i in github.issues_with_label(LABEL))
    return github.create_issue(title, body, [LABEL], marker=marker), not existing


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
        number, _ = _issue_for(github, run.job, "The Spec is red on the default branch", None)
        marker = tick_marker(run_id, run.job)
        body = f"Spec red on `{ctx.default_branch}` ({when}):\n\n{red_summary[:6000]}\n\n{marker}"
        github.comment(number, body, marker=marker)
        return f"{run.job}: reported on #{number}"
    number, filed = _issue_for(github, run.job, f"Scheduled: {run.job}", run.task)
    # The marker makes the comment idempotent and tells publish which tick started the run.
    marker = tick_marker(run_id, run.job)
    github.comment(number, f"Scheduled run of `{run.job}` ({when}).\n\n{marker}", marker=marker)
    if filed:
        # Filing labelled it chimera:schedule as the App: that label event starts the run
        # (decide), so a dispatch now would start a second run for the same fire.
        return f"{run.job}: filed #{number} (its label event starts the run)"
    labeller = settings.identities[0] if settings.identities else ""
    inputs = {"issue-number": str(number), "labeller": labeller}
    github.dispatch_workflow(settings.fix_workflow, ctx.dispatch_ref or ctx.default_branch, inputs)
    return f"{run.job}: dispatched {settings.fix_workflow} for #{number}"


def run_tick(
    ctx: ActionContext,
    settings: ActionSettings,
    root: Path,
    *,
    clock: Clock,
    signing_key: Path | None,
) -> TickResult:
    """``chimera action --mode tick``: connect, build the journal and its trust, tick.

    The journal's commits are SSH-signed with ``signing_key`` when given, else GitHub-signed
    through the API (the App's, with its token); with neither they would count for nothing,
    so the tick refuses (no token at all: ``ctx.connect`` refuses first).

    Raises:
        UsageError: no bot login, no workflow run id, broken schedules, or neither a token
            nor a signing key.
        JournalConflict / JournalError / GitHubError: as :func:`tick_job`.
    """
    from chimera.github.client.tickapi import TickClient
    from chimera.github.trust.settings import GITHUB_ACTIONS_BOT

    if settings.identities[0] == GITHUB_ACTIONS_BOT:
        raise UsageError(
            "tick: set bot-login to the App's login; the tick acts as Chimera's App, whose "
            "label and dispatch decide trusts"
        )
    if not ctx.workflow_run:
        raise UsageError("tick: GITHUB_RUN_ID is not set; the journal names each tick by it")
    run_id = f"{ctx.workflow_run}.{ctx.run_attempt or 1}"
    _load(root)  # before connecting: a broken file makes no API call at all
    client = ctx.connect()
    journal = signed_journal(root, settings, client, signing_key)
    if journal is None:
        raise UsageError(
            "tick: no token and journal-signing-key is empty; unsigned journal commits "
            "would count for nothing (use Chimera's App token, or set the key)"
        )
    return tick_job(
        ctx,
        settings,
        root,
        github=TickClient(client),
        journal=journal,
        trust=journal_trust(client, settings, journal),
        clock=clock,
        run_id=run_id,
    )
