"""The drain job: cancellations, and starting the next queued issues.

A Chimera PR closed unmerged, or the trigger label removed by a person, cancels the issue's
queued or paused work and its runs in flight (said once on the issue). Slot claims held by
runs that finished or vanished without an outcome are released (:mod:`chimera.github.queue.heal`).
Then the ChangeQueue starts queued issues while slots are free, oldest first: each start is a
claim (:mod:`chimera.github.queue.claims`) and a dispatch of the fix workflow with the original
labeller and the claim's token, which only the dispatched run may take over. Two drains at
once (a workflow without the ``chimera-queue`` group) start each issue once.
Token: ``issues: write`` and ``actions: write``; no LLM key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.github.action.cancellation import cancel
from chimera.github.action.context import ActionContext, JobResult, make_queue
from chimera.github.conversation.documents import outcome_comment
from chimera.github.conversation.outcome import outcome_key
from chimera.github.gate.events import Act, Decision, decide
from chimera.github.queue.claims import DISPATCH_PREFIX, with_fields
from chimera.github.queue.heal import Healed, heal
from chimera.github.queue.queue import QueueEntry
from chimera.github.trust.summary import artifact_link

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.trust.settings import ActionSettings

__all__ = ["DrainResult", "drain_job"]

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
        # The claim names the dispatch until its run adopts it (chimera.github.queue.claims); a
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
