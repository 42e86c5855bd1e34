"""ChangeQueue: the tempo of Chimera's changes, with its state kept on GitHub.

(DESIGN.md step 5.) FIFO; at most ``max_open`` open Chimera PRs plus running issues, and at
most ``max_per_hour`` runs started in any hour (a start is a slot claim that was kept; the
PRs those runs open are not counted again); one PR per issue, idempotent — a re-run updates
branch ``chimera/issue-<n>`` and its PR instead of opening another. Because runs happen on
different runners, the state lives on GitHub, not in a process:

* slot claims: each start's one outcome comment, posted as ``running`` before the run counts
  as started and ordered by comment id (:mod:`chimera.github.queue.claims`, which says why that is
  safe under any interleaving of decides, drains and commands);
* labels on the issue: ``chimera:queued``, ``chimera:running`` (a mirror of a kept claim),
  ``chimera:pr-open``, ``chimera:failed``, ``chimera:awaiting-approval``;
* a ``chimera:queued`` marker comment (the original labeller and the time it was queued,
  which orders the FIFO), and the ``chimera:pr`` marker in PR bodies.

An issue that cannot run now is labelled ``chimera:queued`` with a comment and started by the
next :meth:`ChangeQueue.drain` that finds a free slot: the drain claims the slot for the run
and dispatches the fix workflow with the issue, the original labeller and the claim's token;
only the run holding that token is admitted (:meth:`ChangeQueue.adopt`). Every contender for
a slot claims it the same way, so nothing here depends on the workflows' ``concurrency``
groups (they stay: a lock per issue, and one drain at a time); a contender that loses withdraws
only its own claim.

Merging: Chimera never merges. With auto-merge on, a low-risk PR gets GitHub's auto-merge,
or is enqueued (GraphQL ``enqueuePullRequest``) where the base branch requires a merge queue;
never for ``risk:high`` or ``spec-change`` PRs.

Past 400 lines because every transition of one issue's queue state (enqueue, admit, adopt,
drain, withdraw, release, cancel) is here together with the PR it ends in: read apart, the
order of their writes — which is what keeps them safe against each other — is lost. The claim
order itself, its rendering and its proof live in :mod:`chimera.github.queue.claims`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from chimera.github.client.client import GitHubClient, PullInfo
from chimera.github.gate.starter import holds_slot
from chimera.github.queue.claims import (
    BUSY,
    HOUR,
    HOUR_SPAN,
    Claim,
    bare_claim,
    claim_of,
    claims_on,
    live_claims,
    new_token,
    released,
    stop_after,
    verdict,
)
from chimera.github.trust.carriers import queued_marker
from chimera.github.trust.summary import code, render_marker

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
    "PostClaim",
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

# Posts a claim on an issue: (issue, token) -> the claim comment's id.
PostClaim = Callable[[int, str], int]


@dataclass(frozen=True)
class QueueLimits:
    """``max_open``: open Chimera PRs + running issues; ``max_per_hour``: runs started (slot
    claims kept) in any hour."""

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
    """``busy``: another start of the same issue holds it (nothing was queued);
    ``claim``: the token of the kept claim; ``refused``: no slot, and the queue may not keep
    the issue for a later job (the GITHUB_TOKEN-only tier): nothing was queued."""

    admitted: bool
    reason: str
    position: int = 0
    busy: bool = False
    claim: str = ""
    refused: bool = False


class ChangeQueue:
    """The queue over one repository (see the module docstring).

    Args:
        client: the repository's client (a token that may write issues and PRs).
        identities: Chimera's own logins: only their comments and PRs count as queue state.
        branch_prefix: Chimera's branches are ``<prefix><issue>``.
        limits: the queue limits.
        now: the clock (tests); the per-hour window is on GitHub's clock (comment times).
        across_jobs: an issue without a free slot waits for a later job (the drain) to start
            it; ``False`` (the GITHUB_TOKEN-only tier, :mod:`chimera.github.trust.tier`): it is
            refused instead, and nothing is written.
    """

    def __init__(
        self,
        client: GitHubClient,
        *,
        identities: tuple[str, ...],
        branch_prefix: str = "chimera/issue-",
        limits: QueueLimits | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        across_jobs: bool = True,
    ) -> None:
        self.client = client
        self.across_jobs = across_jobs
        self.identities = identities
        self.branch_prefix = branch_prefix
        self.limits = limits or QueueLimits()
        self.now = now

    # -- state -----------------------------------------------------------------------------

    def branch(self, issue: int) -> str:
        return f"{self.branch_prefix}{issue}"

    def open_pulls(self) -> list[PullInfo]:
        """Open PRs from Chimera's branches opened by Chimera's identities (Chimera PRs). A
        branch name proves nothing: anyone can open a PR from a fork's ``chimera/issue-1``,
        and three of those would otherwise fill every slot."""
        return [
            p
            for p in self.client.pulls(state="open")
            if p.head_ref.startswith(self.branch_prefix) and p.author in self.identities
        ]

    def _pr_issues(self) -> set[int]:
        found = set()
        for pull in self.open_pulls():
            tail = pull.head_ref[len(self.branch_prefix) :]
            if tail.isdigit():
                found.add(int(tail))
        return found

    def claims(self) -> list[Claim]:
        """Every recent claim and every live one (:func:`~chimera.github.queue.claims.live_claims`).

        Raises:
            GitHubError: the API failed after retries.
        """
        running = [i.number for i in self.client.issues_with_label(LABEL_RUNNING)]
        return live_claims(self.client, self.identities, running=running, now=self.now())

    def running(self) -> list[int]:
        """Issues holding a running slot: those with a live claim, oldest claim first."""
        held: dict[int, int] = {}
        for claim in self.claims():
            if claim.live:
                held.setdefault(claim.issue, claim.comment_id)
        return sorted(held, key=held.__getitem__)

    def slots(
        self, *, exclude_issue: int | None = None, claims: list[Claim] | None = None
    ) -> Slots:
        """The slots as they stand (``claims``: already read). The per-hour count is of the
        claims made in the hour before the newest one GitHub holds (its clock, not ours)."""
        claims = self.claims() if claims is None else claims
        live = {c.issue for c in claims if c.live and c.issue != exclude_issue}
        prs = self._pr_issues() - {exclude_issue}
        started = [c for c in claims if c.started]
        last = max((c.created() for c in claims), default=None)
        recent = [c for c in started if last is not None and c.created() >= last - HOUR_SPAN]
        return Slots(
            open_prs=len(prs),
            running=len(live - prs),
            last_hour=len(recent),
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

    # -- claims ----------------------------------------------------------------------------

    def post_bare_claim(self, issue: int, token: str) -> int:
        """A claim with no run to name (a local run, or a test): a bare ``running`` comment."""
        body = bare_claim(issue, token)
        return self.client.comment(issue, body, marker=body[body.rindex("<!-- chimera:") :])

    def _claim(self, issue: int, post: PostClaim | None) -> tuple[Claim, str | None]:
        """Post a claim for ``issue`` and judge it: ``(claim, None)`` when it keeps the slot
        (``chimera:running`` is added then), else ``(claim, why)`` after withdrawing it."""
        token = new_token()
        cid = (post or self.post_bare_claim)(issue, token)
        claims = self.claims()
        mine = next((c for c in claims if c.comment_id == cid), None)
        if mine is None:  # the listing lags: read the issue itself
            mine = next((c for c in claims_on(self.client, issue, self.identities)
                         if c.comment_id == cid), None)  # fmt: skip
            if mine is None:
                raise AssertionError(f"claim comment {cid} on #{issue} is not readable")
            claims.append(mine)
        why = verdict(
            claims,
            mine,
            max_open=self.limits.max_open,
            max_per_hour=self.limits.max_per_hour,
            open_pr_issues=self._pr_issues(),
        )
        if why is None:
            self.client.add_labels(issue, LABEL_RUNNING)
        else:
            self.client.delete_comment(issue, cid)
        return mine, why

    def _busy(self, issue: int, claims: list[Claim]) -> Claim | None:
        return next((c for c in claims if c.live and c.issue == issue), None)

    @staticmethod
    def _holder(claim: Claim) -> str:
        return f"workflow run {claim.run}" if claim.run else "a ChangeQueue dispatch"

    # -- transitions -----------------------------------------------------------------------

    def enqueue(self, issue: int, labeller: str, why: str, *, schedule: str = "") -> Admission:
        """Label ``chimera:queued`` and say so once (idempotent while it stays queued);
        ``schedule`` names the schedule that filed the issue (a scheduled run: no person's
        label counts, and there is no trigger label to remove). Nothing else is touched: a
        running slot belongs to the claim that holds it."""
        if not self.across_jobs:
            from chimera.github.trust.tier import NO_APP_QUEUE

            return Admission(False, f"{why}; {NO_APP_QUEUE}", refused=True)
        existing = self._queue_marker(issue)
        labels = self.client.issue(issue).labels
        if LABEL_QUEUED not in labels or existing is None:
            at = self.now().isoformat(timespec="microseconds")
            marker = render_marker("queued", {"issue": issue, "labeller": labeller, "at": at})
            self.client.add_labels(issue, LABEL_QUEUED)
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
        self,
        issue: int,
        labeller: str,
        *,
        post: PostClaim | None = None,
        schedule: str = "",
    ) -> Admission:
        """Start ``issue`` now if a slot is free and no older issue waits; else queue it.

        ``post`` posts the run's claim (its ``running`` outcome comment; default: a bare
        one). A live start of the same issue (a drain starting it, another command) is left
        alone: ``busy``, nothing queued or removed. ``schedule``: the schedule that filed the
        issue (see :meth:`enqueue`).

        Raises:
            GitHubError: the API failed after retries (a claim posted by then stays live until
                its run's outcome or the drain's heal resolves it).
        """
        claims = self.claims()
        holder = self._busy(issue, claims)
        if holder is not None:
            return Admission(False, f"#{issue} is already started ({self._holder(holder)})",
                             busy=True)  # fmt: skip
        waiting = [e for e in self.queued() if e.issue != issue]
        if waiting:
            return self.enqueue(
                issue,
                labeller,
                f"{len(waiting)} older issue(s) wait in the ChangeQueue",
                schedule=schedule,
            )
        slots = self.slots(exclude_issue=issue, claims=claims)
        if not slots.free:
            return self.enqueue(
                issue, labeller, f"no free slot ({slots.describe()})", schedule=schedule
            )
        mine, why = self._claim(issue, post)
        if why == BUSY:
            return Admission(False, f"#{issue} is already started by another run", busy=True)
        if why is not None:
            what = "the hour's last start" if why == HOUR else "the last free slot"
            return self.enqueue(issue, labeller, f"another run took {what}", schedule=schedule)
        self.client.remove_label(issue, LABEL_QUEUED)
        self.client.remove_label(issue, LABEL_FAILED)
        return Admission(True, f"slot free ({slots.describe()})", claim=mine.token)

    def adopt(self, issue: int, token: str, run: str, edit: Callable[[Claim], None]) -> Admission:
        """Admit the dispatched run ``run`` that holds claim ``token`` of ``issue``: only while
        that claim is live, the oldest of its issue, and not adopted by another run. ``edit``
        turns the claim's comment into this run's running comment (same comment, same token).
        A refusal changes nothing: the claim is the drain's, not this run's.

        Raises:
            GitHubError: the API failed after retries.
        """
        comments = self.client.comment_records(issue)
        claims = [c for c in (claim_of(r, self.identities) for r in comments) if c is not None]
        mine = next((c for c in claims if c.token == token), None)
        if mine is None or not mine.live:
            state = "no longer live (stopped, finished or given back)" if mine else "not found"
            return Admission(False, f"the ChangeQueue's claim for #{issue} is {state}")
        older = [c for c in claims if c.live and c.comment_id < mine.comment_id]
        if older:
            return Admission(False, f"#{issue} is already started ({self._holder(older[0])})")
        if stop_after(comments, issue, mine.comment_id, self.identities) is not None:
            # A stop that came after the drain's claim but did not see it (it read the claims
            # first): the claim is resolved here, so its slot is not held until a heal.
            self.release(issue, key=mine.key)
            return Admission(False, f"`@chimera stop` on #{issue} came after the queue's claim")
        if mine.run and mine.run != run:
            return Admission(False, f"the claim was taken by workflow run {mine.run}")
        edit(mine)
        again = next((c for c in claims_on(self.client, issue, self.identities)
                      if c.token == token), None)  # fmt: skip
        if again is None or again.run != run or not again.live:
            return Admission(False, f"the ChangeQueue's claim for #{issue} changed meanwhile")
        self.client.add_labels(issue, LABEL_RUNNING)
        return Admission(True, "started by the ChangeQueue (its claim names this run)",
                         claim=token)  # fmt: skip

    def release(self, issue: int, *, key: str | None = None) -> None:
        """A run for ``issue`` is over: it no longer holds a running slot. Its claim is
        resolved by its outcome comment (the caller writes it first); the label goes only
        when no other live claim holds the issue. ``key``: the run's outcome key, whose claim
        is resolved here if its outcome was not written (without ``key``: every live claim of
        the issue, as a stop does)."""
        for claim in claims_on(self.client, issue, self.identities):
            if claim.live and (key is None or claim.key == key):
                self._resolve(claim)
        if not any(c.live for c in claims_on(self.client, issue, self.identities)):
            self.client.remove_label(issue, LABEL_RUNNING)

    def withdraw(self, issue: int, token: str) -> None:
        """Give back the claim ``token`` of ``issue`` (a dispatched run that cannot start):
        deleted while no run adopted it; the label goes when no other claim holds the issue.
        Nothing else is touched (an empty ``token``: nothing at all)."""
        if not token:
            return
        claims = claims_on(self.client, issue, self.identities)
        mine = next((c for c in claims if c.token == token and c.live and not c.run), None)
        if mine is None:
            return
        self.client.delete_comment(issue, mine.comment_id)
        if not any(c.live for c in claims if c.comment_id != mine.comment_id):
            self.client.remove_label(issue, LABEL_RUNNING)

    def _resolve(self, claim: Claim) -> None:
        self.client.edit_comment(claim.issue, claim.comment_id, released(claim))

    def drain(
        self,
        dispatch: Callable[[QueueEntry, str], None],
        *,
        post: PostClaim | None = None,
    ) -> list[int]:
        """Start queued issues while slots are free, oldest first; returns those started.

        Each start claims the slot for the run it dispatches (``post``; default: a bare
        claim) and keeps it only as :func:`~chimera.github.queue.claims.verdict` says; then
        ``dispatch(entry, token)`` sends the workflow dispatch naming the claim. A dispatch
        that fails withdraws that claim alone and gives the issue its place back.
        """
        started: list[int] = []
        for entry in self.queued():
            issue = self.client.issue(entry.issue)
            if issue.state != "open":
                self.client.remove_label(entry.issue, LABEL_QUEUED)
                continue
            claims = self.claims()
            if self._busy(entry.issue, claims) is not None:
                continue  # another contender is starting it
            if not self.slots(claims=claims).free:
                break
            mine, why = self._claim(entry.issue, post)
            if why == BUSY:
                continue
            if why is not None:
                break
            if LABEL_QUEUED not in self.client.issue(entry.issue).labels:
                # The listing is older than the claim: a stop (or another drain) took the
                # issue off the queue meanwhile. Its label was removed before any stop record
                # was posted, and this claim was posted before this read, so a stop that this
                # read missed comes after the claim, where its record stops the run.
                self.withdraw(entry.issue, mine.token)
                continue
            self.client.remove_label(entry.issue, LABEL_QUEUED)
            try:
                dispatch(entry, mine.token)
            except Exception:
                # Not started: give the place back rather than lose the issue; only this
                # claim's writes are undone.
                self.client.add_labels(entry.issue, LABEL_QUEUED)
                self.client.delete_comment(entry.issue, mine.comment_id)
                if self._busy(entry.issue, claims_on(self.client, entry.issue,
                                                     self.identities)) is None:  # fmt: skip
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
