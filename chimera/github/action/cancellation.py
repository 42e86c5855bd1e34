"""Cancelling an issue's work when a person takes the trigger away: the label removed, or its
Chimera PR closed unmerged. Shared by the drain job (which sees those events) and the decide
job (a label removal reaches decide's workflow too).

The issue's queued place and a paused draft PR are cancelled, its runs in flight are cancelled
through the Actions API and each one's outcome comment says who cancelled (a token without
``actions: write`` leaves that to publish's re-check), and the issue says so once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from chimera.errors import GitHubPermissionDenied
from chimera.github.action.context import make_queue, post_outcome
from chimera.github.conversation.documents import outcome_comment
from chimera.github.gate.permissions import chimera_pull
from chimera.github.queue.claims import claims_on, with_fields
from chimera.github.queue.queue import LABEL_PR_OPEN
from chimera.github.trust.summary import artifact_link, code

if TYPE_CHECKING:
    from chimera.github.action.context import ActionContext
    from chimera.github.client.client import GitHubClient
    from chimera.github.gate.decision import Decision
    from chimera.github.trust.settings import ActionSettings

__all__ = ["cancel"]

log = logging.getLogger(__name__)


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
