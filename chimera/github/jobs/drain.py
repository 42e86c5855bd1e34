"""The drain job: cancellations, and starting the next queued issues.

A Chimera PR closed unmerged, or the trigger label removed by a person, cancels the issue's
queued or paused work (said once on the issue). Then the ChangeQueue starts queued issues while
slots are free, oldest first, by dispatching the fix workflow with the original labeller.
Token: ``issues: write`` and ``actions: write``; no LLM key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.github.events import Act, Decision, decide
from chimera.github.jobs.context import ActionContext, JobResult, make_queue, post_outcome
from chimera.github.permissions import chimera_pull
from chimera.github.queue import LABEL_PR_OPEN, QueueEntry
from chimera.github.summary import code

if TYPE_CHECKING:
    from chimera.github.client import GitHubClient
    from chimera.github.settings import ActionSettings

__all__ = ["DrainResult", "cancel", "drain_job"]

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
    if (
        pull is not None
        and marker is not None
        and marker.get("status") == "awaiting_approval"
        and decision.event == "issues"
    ):
        client.update_pull(pull.number, state="closed")
        done.append(f"its paused draft PR #{pull.number} (closed)")
    actor = code(decision.actor or "?", 60)
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

    def dispatch(entry: QueueEntry) -> None:
        inputs = {"issue-number": str(entry.issue), "labeller": entry.labeller}
        client.dispatch_workflow(settings.fix_workflow, ref, inputs)

    return DrainResult(decision, started=tuple(queue.drain(dispatch)))
