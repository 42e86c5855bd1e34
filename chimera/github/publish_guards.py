"""The guards the publish step re-checks just before pushing: the run was not cancelled while
in flight (issue closed, trigger label removed, ``@chimera stop``), and the branch did not move
under a person's push since decide. Either ends the step without pushing."""

from __future__ import annotations

from chimera.github.outcome import REPLACEABLE, find_outcome, outcome_key
from chimera.github.publish_base import PublisherBase, PublishResult
from chimera.github.queue import LABEL_RUNNING
from chimera.github.settings import SCHEDULE_LABEL

__all__ = ["PublishGuards"]


class PublishGuards(PublisherBase):
    """The cancellation and moved-branch guards of :class:`~chimera.github.publish.Publisher`."""

    def _stopped(self) -> str | None:
        """Why the run was cancelled while in flight, read just before pushing (cancelling a
        workflow run is asynchronous, so the run may get this far): ``None`` to go on.

        A run the label started (or its queue dispatch) stops when the label goes; a run that
        ``@chimera run`` started has no label to lose, and stops when ``@chimera stop`` gave
        its ChangeQueue slot back."""
        info = self.client.issue(self.decided.issue)
        run = self.decided.mode == "run"
        by_label = run and self.ctx.event_name != "issue_comment"
        # A scheduled run (the tick's dispatch) hangs on chimera:schedule instead.
        scheduled = self.settings.is_self(self.decided.started_by)
        trigger = SCHEDULE_LABEL if scheduled else self.settings.label
        unlabelled = by_label and trigger not in info.labels
        released = run and not by_label and LABEL_RUNNING not in info.labels
        if info.state == "open" and not unlabelled and not released:
            return None
        key = outcome_key(self.ctx.workflow_run, self.decided.issue)
        found = find_outcome(self.client, info.number, key, self.settings.identities)
        if found is not None and found[1] not in REPLACEABLE and found[1] != "cancelled":
            return None  # a re-run of a publish that finished: it removed the label itself
        if info.state != "open":
            return f"#{info.number} was closed"
        if unlabelled:
            return f"the {trigger!r} label was removed"
        return "`@chimera stop` stopped the run"

    def _cancelled(self, why: str) -> PublishResult:
        self.audit.record("decision", outcome="cancelled", detail=why)
        key = outcome_key(self.ctx.workflow_run, self.decided.issue)
        found = find_outcome(self.client, self.decided.issue, key, self.settings.identities)
        detail = f"Cancelled: {why} while the run was in flight; nothing was published."
        # drain's cancel may have said it already, naming who cancelled: that stays.
        cid = found[0] if found and found[1] == "cancelled" else self.comment("cancelled", detail)
        self.queue.release(self.decided.issue)
        return PublishResult(
            "cancelled",
            issue=self.decided.issue,
            comment_id=cid,
            detail=detail,
            audit_head=self.audit.head,
        )

    def _fail_moved(self, branch: str, current: str) -> PublishResult:
        return self._fail(
            "blocked",
            f"{branch} moved (now {current[:12] or 'deleted'}; the run started from "
            f"{(self.decided.head_sha or '')[:12]}): a person pushed meanwhile, and Chimera "
            "never overwrites that. Review the PR, then approve or request changes again.",
        )
