"""Slot claims of the ChangeQueue: one comment per start, ordered by its id.

A run takes a ChangeQueue slot with a *claim*: its one outcome comment, posted by Chimera's
own identity as ``running`` ("Started") *before* it counts as started, its trailer marker
carrying the claim's token (``{"issue", "key", "kind": "running", "claim": "<token>"}``).
A comment is the one write on GitHub that is atomic and totally ordered: every POST makes a
new comment, and GitHub's comment ids grow with time. So every contender — a label's decide,
``@chimera run``/``retry``, the drain starting a queued issue — orders the same claims the same
way (by comment id, never by issue number), the way a ticket lock orders its takers:

1. post the claim (an outcome comment, ``running``);
2. read every live claim (:func:`live_claims`) and keep the slot only when
   :func:`verdict` says so: the claim is the oldest live one of its issue, it ranks within
   ``max_open`` among the oldest live claim of each issue (open Chimera PRs of issues without
   one take slots first), and within ``max_per_hour`` among the claims made in the hour before
   it (deleted claims do not count: they never started);
3. a claim that lost is deleted by whoever posted it; nothing else is rolled back, because
   nothing else was written yet (``chimera:running`` is added only by the claim that won).

Why this holds: a claim made later has a larger id and is posted after every earlier claim,
so when the later one reads, it sees each earlier claim that is still live; the kept claims
thus never exceed either limit whatever the interleaving. (A contender that reads an earlier
claim which is later withdrawn may back off needlessly: that costs a drain, never a limit.)

A claim stays live until its comment states an outcome (``kind`` is no longer ``running``):
publish's outcome, a stop (``cancelled``), the drain's heal (``crashed``). The drain claims
for a run that does not exist yet: its claim's key is ``dispatch-<token>:<issue>`` and the
token goes with the workflow dispatch (input ``claim``); the dispatched run's decide *adopts*
the claim — edits that same comment into its own running comment, keeping id and token — and
only the run holding the token of a live, unadopted claim is admitted. ``chimera:running``
mirrors the claims for people and for the guards that read labels.

Timestamps are GitHub's (a comment's ``created_at``), never a runner's clock.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from chimera.github.conversation.documents import outcome_comment
from chimera.github.conversation.outcome import outcome_key
from chimera.github.trust.summary import parse_marker, render_marker

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.client.shapes import CommentInfo

__all__ = [
    "BUSY",
    "DISPATCH_PREFIX",
    "FULL",
    "HOUR",
    "HOUR_SPAN",
    "Claim",
    "bare_claim",
    "claim_of",
    "claims_on",
    "live_claims",
    "new_token",
    "recent_claims",
    "released",
    "stop_after",
    "verdict",
    "with_fields",
]

# The key of a drain's claim before its run adopts it: ``dispatch-<token>:<issue>``.
DISPATCH_PREFIX = "dispatch-"
# The key of a claim that names no run (a local run, a test): ``claim-<token>:<issue>``.
_BARE_PREFIX = "claim-"
HOUR_SPAN = timedelta(hours=1)
# What :func:`verdict` says of a claim that lost.
BUSY = "busy"  # an older live claim holds the same issue
FULL = "full"  # max_open reached
HOUR = "hour"  # max_per_hour reached
# Outcome kinds that never held a started run (a start refused after its claim).
_NOT_STARTED = frozenset({"refused"})
# How far back the repository's comments are listed: the hour of the per-hour limit, with
# room for a runner's clock being off.
_LISTING = timedelta(hours=3)


@dataclass(frozen=True)
class Claim:
    """One claim (see the module docstring).

    Attributes:
        issue: the issue it is for.
        comment_id: its comment's id: the order every contender agrees on.
        token: the claim's token (a dispatch names it; adoption keeps it).
        key: the outcome key: ``<run>:<issue>``, or ``dispatch-<token>:<issue>`` before a
            dispatched run adopts it.
        kind: the outcome the comment states (``running`` while the slot is held).
        created_at: GitHub's time of the comment (ISO 8601, UTC).
        dispatched: a drain's claim: when the dispatch was sent (the drain's clock; heal's
            grace).
    """

    issue: int
    comment_id: int
    token: str
    key: str
    kind: str
    created_at: str
    dispatched: str = ""

    @property
    def live(self) -> bool:
        return self.kind == "running"

    @property
    def run(self) -> str:
        """The workflow run holding the claim (``""``: a dispatch not adopted yet)."""
        head = self.key.split(":", 1)[0]
        return "" if head.startswith((DISPATCH_PREFIX, _BARE_PREFIX)) else head

    @property
    def started(self) -> bool:
        """Whether it counts as a start (for the per-hour limit)."""
        return self.kind not in _NOT_STARTED

    def created(self) -> datetime:
        return _time(self.created_at)


def new_token() -> str:
    """A fresh claim token (16 hex digits)."""
    return secrets.token_hex(8)


def _time(text: str) -> datetime:
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def claim_of(comment: CommentInfo, identities: Collection[str]) -> Claim | None:
    """The claim ``comment`` holds: a trailer outcome marker with a ``claim`` token, written
    by one of Chimera's ``identities`` (anyone else's counts for nothing)."""
    if comment.author not in identities:
        return None
    marker = parse_marker(comment.body, "outcome")
    if marker is None or not marker.get("claim"):
        return None
    issue = marker.get("issue")
    if not isinstance(issue, int) or (comment.issue and comment.issue != issue):
        return None
    return Claim(
        issue=issue,
        comment_id=comment.id,
        token=str(marker["claim"]),
        key=str(marker.get("key") or ""),
        kind=str(marker.get("kind") or ""),
        created_at=comment.created_at,
        dispatched=str(marker.get("dispatched") or ""),
    )


def claims_on(client: GitHubClient, issue: int, identities: Collection[str]) -> list[Claim]:
    """Every claim on ``issue``, oldest first.

    Raises:
        GitHubError: the API failed after retries.
    """
    found = (claim_of(c, identities) for c in client.comment_records(issue))
    return [c for c in found if c is not None]


def recent_claims(
    client: GitHubClient, identities: Collection[str], *, now: datetime | None = None
) -> list[Claim]:
    """Every claim in the repository's comments of the last hours (one listing), oldest
    first.

    Raises:
        GitHubError: the API failed after retries.
    """
    since = (now or datetime.now(UTC)) - _LISTING
    found = (claim_of(c, identities) for c in client.comments_since(since))
    return sorted((c for c in found if c is not None), key=lambda c: c.comment_id)


def live_claims(
    client: GitHubClient,
    identities: Collection[str],
    *,
    running: Iterable[int] = (),
    now: datetime | None = None,
) -> list[Claim]:
    """The recent claims (:func:`recent_claims`), plus the claims of the ``running``
    issues (those labelled ``chimera:running``) whose live claim is older than the listing.
    Live or not: the caller filters (the per-hour limit counts finished starts too).

    Raises:
        GitHubError: the API failed after retries.
    """
    claims = recent_claims(client, identities, now=now)
    seen = {c.issue for c in claims if c.live}
    for issue in running:
        if issue not in seen:
            claims.extend(c for c in claims_on(client, issue, identities) if c.live)
    unique = {c.comment_id: c for c in claims}
    return sorted(unique.values(), key=lambda c: c.comment_id)


def verdict(
    claims: list[Claim],
    mine: Claim,
    *,
    max_open: int,
    max_per_hour: int,
    open_pr_issues: Collection[int] = (),
) -> str | None:
    """``None`` when ``mine`` keeps its slot, else why not: :data:`BUSY`, :data:`FULL` or
    :data:`HOUR` (see the module docstring). ``claims`` must include ``mine``;
    ``open_pr_issues``: the issues with an open Chimera PR (each holds a slot; one that runs
    again holds one slot, not two)."""
    live = [c for c in claims if c.live or c.comment_id == mine.comment_id]
    oldest: dict[int, Claim] = {}
    for claim in sorted(live, key=lambda c: c.comment_id):
        oldest.setdefault(claim.issue, claim)
    if oldest.get(mine.issue) != mine:
        return BUSY
    holders = sorted(c.comment_id for c in oldest.values())
    others_open = len(set(open_pr_issues) - set(oldest))
    if holders.index(mine.comment_id) >= max_open - others_open:
        return FULL
    since = mine.created() - HOUR_SPAN
    window = sorted(
        c.comment_id
        for c in claims
        if (c.started or c.comment_id == mine.comment_id) and c.created() >= since
    )
    if window.index(mine.comment_id) >= max_per_hour:
        return HOUR
    return None


def stop_after(
    comments: Iterable[CommentInfo], issue: int, after: int, identities: Collection[str]
) -> int | None:
    """The id of the first ``@chimera stop`` record on ``issue`` newer than comment ``after``
    (the stop command's reply carries ``"stop": true`` in its outcome marker), or ``None``."""
    for comment in comments:
        if comment.id <= after or comment.author not in identities:
            continue
        marker = parse_marker(comment.body, "outcome")
        if marker is not None and marker.get("issue") == issue and marker.get("stop") is True:
            return comment.id
    return None


def with_fields(body: str, **fields: object) -> str:
    """``body`` with ``fields`` added to its trailer outcome marker (``body`` unchanged when
    it has none)."""
    marker = parse_marker(body, "outcome")
    if marker is None:
        return body
    lines = body.rstrip().splitlines()
    return "\n".join([*lines[:-1], render_marker("outcome", marker | fields)])


def bare_claim(issue: int, token: str) -> str:
    """The body of a claim that names no workflow run (a local run, or a test)."""
    body = outcome_comment(
        "running",
        issue=issue,
        key=outcome_key(f"{_BARE_PREFIX}{token}", issue),
        detail="Chimera is working on it: this comment holds the issue's ChangeQueue slot.",
    )
    return with_fields(body, claim=token)


def released(claim: Claim) -> str:
    """``claim``'s comment once its slot was released without an outcome (a ``cancelled``
    outcome; the token stays, so the start still counts for the hour)."""
    body = outcome_comment(
        "cancelled",
        issue=claim.issue,
        key=claim.key,
        detail="The run's ChangeQueue slot was released before it stated an outcome.",
    )
    return with_fields(body, claim=claim.token)
