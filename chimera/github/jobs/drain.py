"""The drain job: cancellations, and starting the next queued issues.

A Chimera PR closed unmerged, or the trigger label removed by a person, cancels the issue's
queued or paused work and its runs in flight (said once on the issue). Slot claims held by
runs that finished or vanished without an outcome are released (:mod:`chimera.github.heal`).
Then the ChangeQueue starts queued issues while slots are free, oldest first: each start is a
claim (:mod:`chimera.github.claims`) and a dispatch of the fix workflow with the original
labeller and the claim's token, which only the dispatched run may take over. Two drains at
once (a workflow without the ``chimera-queue`` group) start each issue once.
Token: ``issues: write`` and ``actions: write``; no LLM key.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.errors import GitHubPermissionDenied
from chimera.github.claims import DISPATCH_PREFIX, claims_on, with_fields
from chimera.github.documents import outcome_comment
from chimera.github.events import Act, Decision, decide
from chimera.github.heal import Healed, heal
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
    """Cancel the issue's in-flight workflow runs (its live slot claims) through the Actions
    API and make each one's outcome comment say who cancelled; ``False`` when none is in
    flight. The cancel is asynchronous: publish re-checks the label and the issue just before
    pushing, and a dispatch not started yet finds its claim resolved and starts nothing."""
    assert decision.issue is not None
    done = False
    for claim in claims_on(client, decision.issue, settings.identities):
        if not claim.live:
            continue
        run = claim.run
        if run.isdigit():
            state = client.workflow_run(int(run))
            if state is not None and state[0] != "completed":
                try:
                    client.cancel_workflow_run(int(run))
                except GitHubPermissionDenied:
                    # A token without actions: write (decide's): publish's re-check still
                    # stops the run.
                    log.warning(
                        "cannot cancel workflow run %s: the token lacks actions: write", run
                    )
            what = f"workflow run {run} was cancelled and publishes nothing"
        else:
            what = "the queued run it dispatched starts nothing"
        body = outcome_comment(
            "cancelled",
            issue=decision.issue,
            key=claim.key,
            detail=f"{actor} removed the label; {what}. Add the label again to start over.",
            run_link=artifact_link(ctx.server_url, ctx.repository, run) if run else None,
        )
        client.edit_comment(decision.issue, claim.comment_id, with_fields(body, claim=claim.token))
        done = True
    if done:
        make_queue(client, settings).release(decision.issue)
    return done


def _say_healed(ctx: ActionContext, client: GitHubClient, healed: Healed) -> None:
    """Edit the dead run's claim comment to its outcome (a lost dispatch says nothing: the
    issue is back in the queue, and this drain restarts it)."""
    if healed.run is None or healed.claim is None:
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
    client.edit_comment(
        healed.issue, healed.claim.comment_id, with_fields(body, claim=healed.claim.token)
    )


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
    heal(client, settings.identities, say=lambda healed: _say_healed(ctx, client, healed))

    def post(issue: int, token: str) -> int:
        # The claim names the dispatch until its run adopts it (chimera.github.claims); a
        # dispatch that never starts is given its place back by a later drain (heal).
        at = queue.now().isoformat(timespec="seconds")
        body = outcome_comment(
            "running",
            issue=issue,
            key=outcome_key(f"{DISPATCH_PREFIX}{token}", issue),
            detail=(
                "Starting from the ChangeQueue: the fix workflow was dispatched for this issue; "
                "its run takes this comment over and makes it the run's outcome.\n\n"
                "- `@chimera stop` cancels it; `@chimera status` says where it stands."
            ),
        )
        body = with_fields(body, claim=token, dispatched=at)
        return client.comment(issue, body, marker=body[body.rindex("<!-- chimera:") :])

    def dispatch(entry: QueueEntry, token: str) -> None:
        inputs = {"issue-number": str(entry.issue), "labeller": entry.labeller, "claim": token}
        client.dispatch_workflow(settings.fix_workflow, ref, inputs)

    return DrainResult(decision, started=tuple(queue.drain(dispatch, post=post)))
