"""The drain job: cancellations, and starting the next queued issues.

A Chimera PR closed unmerged, or the trigger label removed by a person, cancels the issue's
queued or paused work (said once on the issue). Slots held by runs that finished or vanished
without releasing them are freed (:mod:`chimera.github.heal`). Then the ChangeQueue starts
queued issues while slots are free, oldest first, by dispatching the fix workflow with the
original labeller.
Token: ``issues: write`` and ``actions: write``; no LLM key.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.errors import GitHubPermissionDenied
from chimera.github.documents import outcome_comment
from chimera.github.events import Act, Decision, decide
from chimera.github.heal import Healed, heal, mark_dispatched, running_record
from chimera.github.jobs.context import ActionContext, JobResult, make_queue, post_outcome
from chimera.github.outcome import outcome_key
from chimera.github.permissions import chimera_pull
from chimera.github.queue import LABEL_PR_OPEN, QueueEntry
from chimera.github.summary import artifact_link, code

if TYPE_CHECKING:
    from chimera.github.client import GitHubClient
    from chimera.github.settings import ActionSettings

__all__ = ["DrainResult", "cancel", "drain_job"]

log = logging.getLogger(__name__)

_CANCEL_EVENTS = ("issues", "pull_request", "pull_request_target")


@dataclass(frozen=True)
class DrainResult:
    """What drain did: the issues it started (dispatched), in order."""

    decision: Decision
    started: tuple[int, ...] = ()
    status: str = "drained"

    def to_job(self) -> JobResult:
        started = ",".join(map(str, self.started))
        return JobResult(
            outputs={"status": self.status, "started": started},
            record=self.decision.to_json() | {"started": list(self.started)},
        )


def cancel(
    ctx: ActionContext, decision: Decision, client: GitHubClient, settings: ActionSettings
) -> None:
    """Cancel the queued or paused work of ``decision.issue`` and say so on the issue (once;
    a plain label removal with nothing to cancel posts nothing).

    Raises:
        GitHubError: the API failed after retries.
    """
    if decision.issue is None:
        return
    queue = make_queue(client, settings)
    done = queue.cancel(decision.issue)
    pull, marker = chimera_pull(client, settings, decision.issue)
    if pull is not None and marker is not None and marker.awaiting and decision.event == "issues":
        client.update_pull(pull.number, state="closed")
        done.append(f"its paused draft PR #{pull.number} (closed)")
    actor = code(decision.actor or "?", 60)
    if decision.event == "issues" and _cancel_in_flight(ctx, client, settings, decision, actor):
        return
    if decision.event in ("pull_request", "pull_request_target"):
        queue.release(decision.issue)
        client.remove_label(decision.issue, LABEL_PR_OPEN)
        text = (
            f"PR #{decision.pull} was closed without merging by {actor}"
            + (f"; cancelled: {', '.join(done)}" if done else "")
            + ". Add the label again to start over."
        )
    elif done:
        text = (
            f"{actor} removed the label; cancelled: {', '.join(done)}. "
            "Add the label again to start over."
        )
    else:
        return  # nothing was queued or paused: no comment needed for a plain label removal
    post_outcome(ctx, client, decision.issue, "cancelled", text, authors=settings.identities)


def _cancel_in_flight(
    ctx: ActionContext,
    client: GitHubClient,
    settings: ActionSettings,
    decision: Decision,
    actor: str,
) -> bool:
    """Cancel the issue's in-flight workflow run through the Actions API and make its one
    outcome comment say who cancelled; ``False`` when no run of it is in flight. The cancel
    is asynchronous: publish re-checks the label and the issue just before pushing."""
    assert decision.issue is not None
    running, _dispatched = running_record(client, decision.issue, settings.identities)
    if running is None or not running[1].isdigit():
        return False
    state = client.workflow_run(int(running[1]))
    if state is None or state[0] == "completed":
        return False
    try:
        client.cancel_workflow_run(int(running[1]))
    except GitHubPermissionDenied:
        # A token without actions: write (decide's): publish's re-check still stops the run.
        log.warning("cannot cancel workflow run %s: the token lacks actions: write", running[1])
        return False
    body = outcome_comment(
        "cancelled",
        issue=decision.issue,
        key=outcome_key(running[1], decision.issue),
        detail=(
            f"{actor} removed the label; workflow run {running[1]} was cancelled and publishes "
            "nothing. Add the label again to start over."
        ),
        run_link=artifact_link(ctx.server_url, ctx.repository, running[1]),
    )
    client.edit_comment(decision.issue, running[0], body)
    make_queue(client, settings).release(decision.issue)
    return True


def _say_healed(
    ctx: ActionContext, client: GitHubClient, settings: ActionSettings, healed: Healed
) -> None:
    """Edit the dead run's ``running`` comment to its outcome (a lost dispatch says nothing:
    the issue is back in the queue, and this drain restarts it)."""
    if healed.run is None or healed.comment_id is None:
        return
    link = artifact_link(ctx.server_url, ctx.repository, healed.run)
    detail = (
        f"Workflow run {healed.run} ended ({healed.why}) without an outcome, so its slot in "
        "the ChangeQueue is released. Add the label again to retry."
    )
    body = outcome_comment(
        "crashed",
        issue=healed.issue,
        key=outcome_key(healed.run, healed.issue),
        detail=detail,
        run_link=link,
    )
    client.edit_comment(healed.issue, healed.comment_id, body)


def drain_job(ctx: ActionContext, settings: ActionSettings) -> DrainResult:
    """Run the drain job for the event in ``ctx``.

    Raises:
        UsageError: no repository or no token.
        GitHubError: the API failed after retries.
    """
    decision = decide(ctx.event_name, ctx.payload, settings)
    client = ctx.connect()
    if decision.action is Act.CANCEL:
        cancel(ctx, decision, client, settings)
    if decision.action is Act.IGNORE and decision.event not in _CANCEL_EVENTS:
        return DrainResult(decision, status="ignored")
    queue = make_queue(client, settings)
    ref = ctx.dispatch_ref or ctx.default_branch
    for healed in heal(client, settings.identities):
        _say_healed(ctx, client, settings, healed)

    def dispatch(entry: QueueEntry) -> None:
        # The slot names no run until the dispatched run's decide posts; a dispatch that
        # never starts is given its place back by a later drain (chimera.github.heal).
        mark_dispatched(client, entry.issue, settings.identities)
        inputs = {"issue-number": str(entry.issue), "labeller": entry.labeller}
        client.dispatch_workflow(settings.fix_workflow, ref, inputs)

    return DrainResult(decision, started=tuple(queue.drain(dispatch)))
