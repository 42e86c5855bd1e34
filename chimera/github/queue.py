"""ChangeQueue: the tempo of Chimera's changes, with its state kept on GitHub.

(DESIGN.md step 5.) FIFO; at most ``max_open`` open Chimera PRs plus running issues, and at
most ``max_per_hour`` PRs opened (plus runs started) per hour; one PR per issue, idempotent —
a re-run updates branch ``chimera/issue-<n>`` and its PR instead of opening another. Because
runs happen on different runners, the state lives on GitHub, not in a process:

* labels on the issue: ``chimera:queued``, ``chimera:running``, ``chimera:pr-open``,
  ``chimera:failed``, ``chimera:awaiting-approval``;
* a ``chimera:queued`` marker comment (the original labeller and the time it was queued,
  which orders the FIFO), and the ``chimera:pr`` marker in PR bodies.

An issue that cannot run now is labelled ``chimera:queued`` with a comment and started by the
next :meth:`ChangeQueue.drain` that finds a free slot (it dispatches the fix workflow with the
issue number and the original labeller). The Actions ``concurrency`` group is only a lock —
it drops pending runs — so nothing here depends on it for order.

Admission is optimistic and then verified: a run claims a slot by labelling
``chimera:running``, re-reads the running set, and backs off to the queue when more runs hold
slots than allowed (ties broken by issue number), so two simultaneous admissions cannot both
keep a single slot.

Merging: Chimera never merges. With auto-merge on, a low-risk PR gets GitHub's auto-merge,
or is enqueued (GraphQL ``enqueuePullRequest``) where the base branch requires a merge queue;
never for ``risk:high`` or ``spec-change`` PRs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from chimera.github.carriers import queued_marker
from chimera.github.client import GitHubClient, IssueInfo, PullInfo
from chimera.github.starter import holds_slot
from chimera.github.summary import code, render_marker

__all__ = [
    "ALL_STATE_LABELS",
    "LABEL_AWAITING",
    "LABEL_FAILED",
    "LABEL_PR_OPEN",
    "LABEL_QUEUED",
    "LABEL_RISK_HIGH",
    "LABEL_RUNNING",
    "LABEL_SPEC_CHANGE",
    "Admission",
    "ChangeQueue",
    "QueueEntry",
    "QueueLimits",
    "Slots",
]

LABEL_QUEUED = "chimera:queued"
LABEL_RUNNING = "chimera:running"
LABEL_PR_OPEN = "chimera:pr-open"
LABEL_FAILED = "chimera:failed"
LABEL_AWAITING = "chimera:awaiting-approval"
LABEL_RISK_HIGH = "risk:high"
LABEL_SPEC_CHANGE = "spec-change"
ALL_STATE_LABELS = (LABEL_QUEUED, LABEL_RUNNING, LABEL_PR_OPEN, LABEL_FAILED, LABEL_AWAITING)

LABEL_DEFINITIONS = (
    ("chimera", "5319e7", "Chimera: turn this issue into a spec-gated pull request"),
    (LABEL_QUEUED, "c5def5", "Chimera: waiting for a free slot in the ChangeQueue"),
    (LABEL_RUNNING, "fbca04", "Chimera: a run is in progress"),
    (LABEL_PR_OPEN, "0e8a16", "Chimera: a pull request is open"),
    (LABEL_FAILED, "b60205", "Chimera: the last run did not produce a pull request"),
    (LABEL_AWAITING, "d93f0b", "Chimera: a risky change awaits a person's approval"),
    (LABEL_RISK_HIGH, "b60205", "A high-risk change: a person must approve the head commit"),
    (LABEL_SPEC_CHANGE, "1d76db", "The change adds requirements to the Spec"),
)


@dataclass(frozen=True)
class QueueLimits:
    """``max_open``: open Chimera PRs + running issues; ``max_per_hour``: PRs opened plus runs
    started in the last hour."""

    max_open: int = 3
    max_per_hour: int = 6


@dataclass(frozen=True)
class Slots:
    open_prs: int
    running: int
    last_hour: int
    limits: QueueLimits

    @property
    def free(self) -> bool:
        return (
            self.open_prs + self.running < self.limits.max_open
            and self.last_hour < self.limits.max_per_hour
        )

    def describe(self) -> str:
        return (
            f"{self.open_prs} open Chimera PR(s) + {self.running} running of "
            f"{self.limits.max_open} allowed; {self.last_hour} started in the last hour of "
            f"{self.limits.max_per_hour}"
        )


@dataclass(frozen=True)
class QueueEntry:
    issue: int
    labeller: str
    queued_at: str


@dataclass(frozen=True)
class Admission:
    admitted: bool
    reason: str
    position: int = 0


class ChangeQueue:
    """The queue over one repository (see the module docstring).

    Args:
        client: the repository's client (a token that may write issues and PRs).
        identities: Chimera's own logins: only their comments and PRs count as queue state.
        branch_prefix: Chimera's branches are ``<prefix><issue>``.
        limits: the queue limits.
        now: the clock (tests).
    """

    def __init__(
        self,
        client: GitHubClient,
        *,
        identities: tuple[str, ...],
        branch_prefix: str = "chimera/issue-",
        limits: QueueLimits | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.client = client
        self.identities = identities
        self.branch_prefix = branch_prefix
        self.limits = limits or QueueLimits()
        self.now = now

    # -- state -----------------------------------------------------------------------------

    def branch(self, issue: int) -> str:
        return f"{self.branch_prefix}{issue}"

    def open_pulls(self) -> list[PullInfo]:
        """Open PRs from Chimera's branches (Chimera PRs)."""
        return [
            p for p in self.client.pulls(state="open") if p.head_ref.startswith(self.branch_prefix)
        ]

    def running(self) -> list[IssueInfo]:
        """Issues holding a running slot: labelled ``chimera:running`` by Chimera itself (a
        person with triage rights can add the label too; theirs holds none)."""
        labelled = self.client.issues_with_label(LABEL_RUNNING)
        return [
            i for i in labelled if holds_slot(self.client, i.number, LABEL_RUNNING, self.identities)
        ]

    def slots(self, *, exclude_issue: int | None = None) -> Slots:
        pulls = self.open_pulls()
        running = [i for i in self.running() if i.number != exclude_issue]
        # An issue whose PR is open and which runs again (a re-run) holds one slot, not two.
        pr_issues = {p.head_ref[len(self.branch_prefix) :] for p in pulls}
        running_only = [i for i in running if str(i.number) not in pr_issues]
        since = self.now() - timedelta(hours=1)
        last_hour = self.client.pulls_created_since(since, self.branch_prefix) + len(running_only)
        return Slots(
            open_prs=len([p for p in pulls if p.head_ref != self.branch(exclude_issue or -1)]),
            running=len(running_only),
            last_hour=last_hour,
            limits=self.limits,
        )

    def _queue_marker(self, issue: int) -> QueueEntry | None:
        entry: QueueEntry | None = None
        for _cid, author, body in self.client.comments(issue):
            if author not in self.identities:
                continue
            marker = queued_marker(body, issue)  # parsed once, each field's grammar
            if marker is not None:
                entry = QueueEntry(issue, marker.labeller, marker.at)
        return entry

    def queued(self) -> list[QueueEntry]:
        """Queued issues, FIFO (oldest queue marker first; issue number breaks ties): those
        labelled ``chimera:queued`` by Chimera itself. A person with triage rights can add the
        label too; theirs queues nothing (else the drain would claim a slot and dispatch a run
        that nobody with write access asked for)."""
        entries: list[QueueEntry] = []
        for issue in self.client.issues_with_label(LABEL_QUEUED):
            if not holds_slot(self.client, issue.number, LABEL_QUEUED, self.identities):
                continue
            entry = self._queue_marker(issue.number)
            entries.append(entry or QueueEntry(issue.number, "", issue.created_at))
        return sorted(entries, key=lambda e: (e.queued_at, e.issue))

    # -- transitions -----------------------------------------------------------------------

    def enqueue(self, issue: int, labeller: str, why: str, *, schedule: str = "") -> Admission:
        """Label ``chimera:queued`` and say so once (idempotent while it stays queued);
        ``schedule`` names the schedule that filed the issue (a scheduled run: no person's
        label counts, and there is no trigger label to remove)."""
        existing = self._queue_marker(issue)
        labels = self.client.issue(issue).labels
        if LABEL_QUEUED not in labels or existing is None:
            at = self.now().isoformat(timespec="microseconds")
            marker = render_marker("queued", {"issue": issue, "labeller": labeller, "at": at})
            self.client.add_labels(issue, LABEL_QUEUED)
            self.client.remove_label(issue, LABEL_RUNNING)
            if schedule:
                who = (
                    f"it was filed by schedule {code(schedule, 100)}. Comment `@chimera stop` "
                    "or close the issue to cancel"
                )
            else:
                who = (
                    f"the permission of {code(labeller, 60)}, who added the label, is what "
                    "counts. Remove the label to cancel"
                )
            self.client.comment(
                issue,
                f"**Chimera: Queued.**\n\n{why}. This issue keeps its place in the ChangeQueue "
                f"(first in, first out) and starts when a slot frees up; {who}.\n\n{marker}",
                marker=marker,
            )
        order = [e.issue for e in self.queued()]
        position = order.index(issue) + 1 if issue in order else len(order)
        return Admission(False, f"queued at position {position}: {why}", position)

    def admit(
        self, issue: int, labeller: str, *, claimed: bool = False, schedule: str = ""
    ) -> Admission:
        """Start ``issue`` now if a slot is free and no older issue waits; else queue it.

        ``claimed``: a queue dispatch, whose slot :meth:`drain` already took. ``schedule``:
        the schedule that filed the issue (see :meth:`enqueue`).
        """
        if claimed and LABEL_RUNNING in self.client.issue(issue).labels:
            return Admission(True, "started by the ChangeQueue (slot already claimed)")
        waiting = [e for e in self.queued() if e.issue != issue]
        if waiting:
            return self.enqueue(
                issue,
                labeller,
                f"{len(waiting)} older issue(s) wait in the ChangeQueue",
                schedule=schedule,
            )
        slots = self.slots(exclude_issue=issue)
        if not slots.free:
            return self.enqueue(
                issue, labeller, f"no free slot ({slots.describe()})", schedule=schedule
            )
        self.client.add_labels(issue, LABEL_RUNNING)
        self.client.remove_label(issue, LABEL_QUEUED)
        self.client.remove_label(issue, LABEL_FAILED)
        # Verify the claim: simultaneous admissions must not both keep one slot.
        running = sorted(i.number for i in self.running())
        pulls = {p.head_ref for p in self.open_pulls()}
        others_open = len([b for b in pulls if b != self.branch(issue)])
        allowed = max(0, self.limits.max_open - others_open)
        holders = [n for n in running if self.branch(n) not in pulls or n == issue]
        if issue in holders and holders.index(issue) >= allowed:
            self.client.remove_label(issue, LABEL_RUNNING)
            return self.enqueue(
                issue, labeller, "another run took the last free slot", schedule=schedule
            )
        return Admission(True, f"slot free ({slots.describe()})")

    def release(self, issue: int) -> None:
        """The run for ``issue`` is over: it no longer holds a running slot."""
        self.client.remove_label(issue, LABEL_RUNNING)

    def drain(self, dispatch: Callable[[QueueEntry], None]) -> list[int]:
        """Start queued issues while slots are free, oldest first; returns those started.

        Each start labels ``chimera:running`` (taking the slot) before ``dispatch`` sends the
        workflow dispatch, so a second drain running meanwhile sees the slot taken.
        """
        started: list[int] = []
        for entry in self.queued():
            issue = self.client.issue(entry.issue)
            if issue.state != "open":
                self.client.remove_label(entry.issue, LABEL_QUEUED)
                continue
            if not self.slots().free:
                break
            self.client.add_labels(entry.issue, LABEL_RUNNING)
            self.client.remove_label(entry.issue, LABEL_QUEUED)
            try:
                dispatch(entry)
            except Exception:
                # Not started: give the place back rather than lose the issue.
                self.client.add_labels(entry.issue, LABEL_QUEUED)
                self.client.remove_label(entry.issue, LABEL_RUNNING)
                raise
            started.append(entry.issue)
        return started

    def cancel(self, issue: int) -> list[str]:
        """Cancel queued or paused work for ``issue``; returns what was cancelled."""
        labels = self.client.issue(issue).labels
        done: list[str] = []
        if LABEL_QUEUED in labels:
            self.client.remove_label(issue, LABEL_QUEUED)
            done.append("its place in the queue")
        if LABEL_AWAITING in labels:
            self.client.remove_label(issue, LABEL_AWAITING)
            done.append("the paused run awaiting approval")
        return done

    # -- pull requests ---------------------------------------------------------------------

    def open_or_update(
        self, issue: int, *, title: str, body: str, base: str, draft: bool
    ) -> tuple[PullInfo, bool]:
        """The one PR for ``issue``: updated when it exists, else opened. ``(pull, created)``."""
        branch = self.branch(issue)
        existing = self.client.pulls_from(branch)
        if existing:
            pull = self.client.update_pull(existing[0].number, title=title, body=body)
            return pull, False
        return self.client.create_pull(title=title, body=body, head=branch, base=base, draft=draft)

    def request_merge(self, pull: PullInfo, *, enabled: bool, labels: tuple[str, ...]) -> str:
        """Hand a low-risk PR to GitHub's auto-merge or merge queue; returns what happened.

        Never for ``risk:high`` or ``spec-change`` PRs or drafts; Chimera never merges itself.
        """
        if not enabled:
            return "auto-merge is off"
        blocked = [label for label in (LABEL_RISK_HIGH, LABEL_SPEC_CHANGE) if label in labels]
        if blocked:
            return f"not requested: the PR is labelled {', '.join(blocked)}"
        if pull.draft:
            return "not requested: the PR is a draft"
        if self.client.requires_merge_queue(pull.base_ref):
            self.client.enqueue(pull)
            return f"added to the merge queue of {pull.base_ref}"
        self.client.enable_auto_merge(pull)
        return "GitHub auto-merge enabled (branch protection decides when)"
