"""The command job: ``@chimera stop``, ``@chimera status`` and unknown verbs (token
``issues: write``, ``pull-requests: read``, ``actions: write``; no LLM key).

It runs in its own workflow, outside the per-issue concurrency lock the fix workflow holds
while a run is in progress — otherwise ``stop`` would wait for the run it must stop. The
commands that start jobs (``run``, ``retry``, ``approve``, ``fix``) are the decide job's; this
job ignores them silently, and the decide job ignores these, so every comment gets at most
one reply.

The one polite refusal of a command (after the permission check, so a person without write
access hears why, not a usage hint) is shared with decide:
:mod:`chimera.github.action.command_refusal`.
:func:`cancel_runs` cancels, through the Actions API, the workflow run that Chimera's
"working on it" comment names (:mod:`chimera.github.queue.progress`).
"""

from __future__ import annotations

import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.github.action.command_refusal import command_refusal, explain_command
from chimera.github.action.context import ActionContext, JobResult, make_queue, post_outcome
from chimera.github.conversation.costs import MAX_RUNS, cost_lines, run_cost, spending_runs
from chimera.github.conversation.documents import outcome_comment
from chimera.github.conversation.outcome import carry_claim
from chimera.github.gate.commands import COMMAND_VERBS
from chimera.github.gate.events import Act, Decision, decide
from chimera.github.gate.permissions import chimera_pull
from chimera.github.queue.progress import acknowledge, progress_runs
from chimera.github.queue.queue import LABEL_AWAITING, LABEL_QUEUED, LABEL_RUNNING
from chimera.github.trust.summary import artifact_link, code, parse_marker

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.trust.settings import ActionSettings

__all__ = [
    "CommandResult",
    "cancel_runs",
    "command_job",
]


@dataclass(frozen=True)
class CommandResult:
    """What the command job did: ``status`` is ``stopped``, ``reported``, ``refused``,
    ``explained`` or ``ignored``; ``cancelled`` the workflow runs it cancelled."""

    decision: Decision
    status: str
    issue: int | None = None
    cancelled: tuple[int, ...] = ()

    def to_job(self) -> JobResult:
        return JobResult(
            outputs={
                "status": self.status,
                "issue": str(self.issue or ""),
                "cancelled": ",".join(map(str, self.cancelled)),
            },
            record=self.decision.to_json() | {"status": self.status},
        )


def cancel_runs(client: GitHubClient, runs: list[int]) -> list[int]:
    """Cancel each workflow run through the Actions API
    (:meth:`GitHubClient.cancel_workflow_run`, the one cancel the drain uses too); returns
    those GitHub accepted (cancelling is asynchronous). A run that already finished (409) or
    is gone (404) is skipped.

    Raises:
        GitHubError: any other API failure.
    """
    return [run for run in runs if client.cancel_workflow_run(run)]


def _issue_of(
    client: GitHubClient, settings: ActionSettings, decision: Decision
) -> tuple[int | None, str]:
    if decision.issue is not None:
        return decision.issue, ""
    assert decision.pull is not None
    pull = client.pull(decision.pull)
    issue = settings.issue_of_branch(pull.head_ref)
    if issue is None:
        return None, f"PR #{pull.number} is not a Chimera PR, so there is nothing to act on"
    return issue, ""


def _stop(
    ctx: ActionContext, client: GitHubClient, settings: ActionSettings, issue: int, actor: str
) -> tuple[str, list[int]]:
    """Stop everything ``issue`` has in flight, however it started: cancel the workflow runs
    Chimera's "working on it" comments name, and make each of those comments (slot claims
    included) the run's one ``cancelled`` outcome, so a run whose cancel lands late finds it
    and publishes nothing; then the queued place, the slot and a paused draft."""
    labels = client.issue(issue).labels
    cancelled = cancel_runs(client, progress_runs(client, settings, issue)[:3])
    queue = make_queue(client, settings)
    done = [f"workflow run {artifact_link(ctx.server_url, ctx.repository, r)}" for r in cancelled]
    stopped = _resolve_running(ctx, client, settings, issue, actor)
    if stopped and not cancelled:
        done.append("the start in flight")
    done += queue.cancel(issue)
    if LABEL_RUNNING in labels or stopped:
        # The cancelled run's publish never runs (or refuses): its slot is given back here.
        queue.release(issue)
        if not cancelled and not stopped:
            done.append("the running slot")
    pull, marker = chimera_pull(client, settings, issue)
    if pull is not None and marker is not None and marker.awaiting:
        client.update_pull(pull.number, state="closed")
        done.append(f"its paused draft PR #{pull.number} (closed)")
    if not done:
        return f"{code(actor, 60)} asked to stop; nothing was running, queued or paused.", []
    return (
        f"Stopped by {code(actor, 60)}: {'; '.join(done)}. "
        "Say `@chimera run` on the issue to start over.",
        cancelled,
    )


def _resolve_running(
    ctx: ActionContext, client: GitHubClient, settings: ActionSettings, issue: int, actor: str
) -> int:
    """Edit every "working on it" comment of ``issue`` (Chimera's ``running`` outcomes) to
    ``cancelled``, keeping a claim's token; returns how many."""
    count = 0
    for comment in client.comment_records(issue):
        marker = parse_marker(comment.body, "outcome") if settings.is_self(comment.author) else None
        if marker is None or marker.get("issue") != issue or marker.get("kind") != "running":
            continue
        run = str(marker.get("key") or "").split(":", 1)[0]
        detail = (
            f"`@chimera stop` stopped the run (asked by {code(actor, 60)}): "
            + (f"workflow run {run} was cancelled and " if run.isdigit() else "it ")
            + "publishes nothing. Say `@chimera run` to start over."
        )
        body = outcome_comment(
            "cancelled",
            issue=issue,
            key=str(marker.get("key") or ""),
            detail=detail,
            run_link=artifact_link(ctx.server_url, ctx.repository, run) if run.isdigit() else None,
        )
        client.edit_comment(issue, comment.id, carry_claim(comment.body, body))
        count += 1
    return count


def _status(ctx: ActionContext, client: GitHubClient, settings: ActionSettings, issue: int) -> str:
    labels = client.issue(issue).labels
    lines = [f"Status of #{issue}:"]
    if LABEL_RUNNING in labels:
        lines.append("- running")
    if LABEL_QUEUED in labels:
        order = [e.issue for e in make_queue(client, settings).queued()]
        place = order.index(issue) + 1 if issue in order else "?"
        lines.append(f"- queued: place {place} of {len(order)}")
    if LABEL_AWAITING in labels:
        lines.append("- paused: a risky change awaits a person's approval of the PR's head")
    # Every run that reached its agent job, newest first (a finished run's comment is its
    # outcome now, no longer "running").
    runs = spending_runs(client, settings, issue)
    if runs:
        lines.append(f"- latest run: {artifact_link(ctx.server_url, ctx.repository, runs[0])}")
    pull, _marker = chimera_pull(client, settings, issue)
    if pull is not None:
        lines.append(f"- pull request: #{pull.number} at `{pull.head_sha[:12]}`")
    if len(lines) == 1:
        lines.append("- nothing is running, queued or open")
    tmp = ctx.runner_temp or Path(tempfile.gettempdir())
    costs = [
        run_cost(
            client, run, settings.artifact_name, tmp / f"chimera-cost-{run}-{uuid.uuid4().hex[:6]}"
        )
        for run in runs[:MAX_RUNS]
    ]
    lines += cost_lines(costs)
    return "\n".join(lines)


def command_job(ctx: ActionContext, settings: ActionSettings) -> CommandResult:
    """Answer ``stop``, ``status`` or an unknown verb in the comment of ``ctx``'s event;
    anything else is ignored silently (it is the decide job's).

    Raises:
        UsageError: no repository or no token.
        GitHubError: the API failed after retries.
    """
    decision = decide(ctx.event_name, ctx.payload, settings)
    if decision.event != "issue_comment" or decision.command not in COMMAND_VERBS:
        return CommandResult(decision, "ignored")
    if decision.action is Act.IGNORE:
        if not decision.explain:
            return CommandResult(decision, "ignored")
        posted = explain_command(ctx, ctx.connect(), settings, decision)
        return CommandResult(decision, "explained" if posted else "ignored")
    client = ctx.connect()
    assert decision.actor is not None
    refusal = command_refusal(client, settings, decision.actor)
    if refusal is not None:
        if refusal:
            target = int(decision.pull or decision.issue or 0)
            post_outcome(ctx, client, target, "refused", f"{refusal}.")
        return CommandResult(decision, "refused" if refusal else "ignored")
    acknowledge(client, dict(ctx.payload))
    issue, why = _issue_of(client, settings, decision)
    target = int(decision.pull or decision.issue or 0)
    if issue is None:
        post_outcome(ctx, client, target, "refused", f"{why}.")
        return CommandResult(decision, "refused")
    if decision.action is Act.CANCEL:
        text, cancelled = _stop(ctx, client, settings, issue, decision.actor)
        # The reply records the stop: a run whose claim is older than it never publishes.
        post_outcome(ctx, client, target, "cancelled", text, fields={"stop": True})
        return CommandResult(decision, "stopped", issue, tuple(cancelled))
    post_outcome(ctx, client, target, "status", _status(ctx, client, settings, issue))
    return CommandResult(decision, "reported", issue)
