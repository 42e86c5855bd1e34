"""The guards the publish step re-checks just before pushing: the run was not cancelled while
in flight (issue closed, trigger label removed, ``@chimera stop`` — for a run however
started, read from the stop's record on the issue), and the branch did not move under a
person's push since decide. Either ends the step without pushing."""

from __future__ import annotations

from chimera.github.client.shapes import CommentInfo
from chimera.github.conversation.outcome import REPLACEABLE, find_outcome, outcome_key
from chimera.github.publish.base import PublishResult, PublishStep
from chimera.github.queue.claims import stop_after
from chimera.github.trust.settings import SCHEDULE_LABEL
from chimera.github.trust.summary import parse_marker

__all__ = ["PublishGuards"]


class PublishGuards:
    """The cancellation and moved-branch guards of
    :class:`~chimera.github.publish.publish.Publisher`.

    Args:
        step: the publish step's inputs and failure path.
    """

    def __init__(self, step: PublishStep) -> None:
        self.step = step

    def stopped(self) -> str | None:
        """Why the run was cancelled while in flight, read just before pushing (cancelling a
        workflow run is asynchronous, so the run may get this far): ``None`` to go on.

        Any run stops when ``@chimera stop`` was said after it started: the stop resolved
        this run's "working on it" comment to ``cancelled``, or its reply (a ``stop`` marker)
        is newer than that comment. A run the label started (or its queue dispatch) also
        stops when the label goes; every run, when the issue is closed.

        Raises:
            GitHubError: the API failed after retries.
        """
        p = self.step
        info = p.client.issue(p.decided.issue)
        run = p.decided.mode == "run"
        by_label = run and p.ctx.event_name != "issue_comment"
        # A scheduled run (the tick's dispatch) hangs on chimera:schedule instead.
        scheduled = p.settings.is_self(p.decided.started_by)
        trigger = SCHEDULE_LABEL if scheduled else p.settings.label
        unlabelled = by_label and trigger not in info.labels
        key = outcome_key(p.ctx.workflow_run, p.decided.issue)
        comments = p.client.comment_records(info.number)
        own = self._own_outcome(comments, key)
        if own is not None and own[1] not in REPLACEABLE and own[1] != "cancelled":
            return None  # a re-run of a publish that finished: it removed the label itself
        stopped = own is not None and (
            own[1] == "cancelled"
            or stop_after(comments, info.number, own[0], p.settings.identities) is not None
        )
        if info.state != "open":
            return f"#{info.number} was closed"
        if unlabelled:
            return f"the {trigger!r} label was removed"
        if stopped:
            return "`@chimera stop` stopped the run"
        return None

    def _own_outcome(self, comments: list[CommentInfo], key: str) -> tuple[int, str] | None:
        """``(comment id, kind)`` of this run's outcome comment, by Chimera's identity."""
        for comment in comments:
            if comment.author not in self.step.settings.identities:
                continue
            marker = parse_marker(comment.body, "outcome")
            if marker is not None and marker.get("key") == key:
                return comment.id, str(marker.get("kind") or "")
        return None

    def cancelled(self, why: str) -> PublishResult:
        """End the step as ``cancelled`` (nothing published) for ``why``; the slot freed."""
        p = self.step
        p.audit.record("decision", outcome="cancelled", detail=why)
        key = outcome_key(p.ctx.workflow_run, p.decided.issue)
        found = find_outcome(p.client, p.decided.issue, key, p.settings.identities)
        detail = f"Cancelled: {why} while the run was in flight; nothing was published."
        # drain's cancel or the stop may have said it already, naming who cancelled: that
        # stays (one outcome for the run).
        cid = found[0] if found and found[1] == "cancelled" else p.comment("cancelled", detail)
        p.queue.release(p.decided.issue, key=key)
        return PublishResult(
            "cancelled",
            issue=p.decided.issue,
            comment_id=cid,
            detail=detail,
            audit_head=p.audit.head,
        )

    def fail_moved(self, branch: str, current: str) -> PublishResult:
        """End the step as ``blocked``: ``branch`` moved under a person's push since decide."""
        return self.step.fail(
            "blocked",
            f"{branch} moved (now {current[:12] or 'deleted'}; the run started from "
            f"{(self.step.decided.head_sha or '')[:12]}): a person pushed meanwhile, and Chimera "
            "never overwrites that. Review the PR, then approve or request changes again.",
        )
