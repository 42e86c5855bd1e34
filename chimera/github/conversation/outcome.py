"""Exactly one outcome comment per workflow run: found again, edited in place, never doubled.

Every job that reports on an issue (decide, publish, drain's cancels) goes through
:func:`post_outcome_once`. The comment's trailer marker carries the run's key
(``<run id>:<issue>``) and the outcome's kind. Whatever job or attempt of the same run writes
next finds that comment and makes it state the newest truth:

* a ``running``, ``rate_limited`` or ``crashed`` outcome is edited in place when a later
  attempt gets further (re-running publish after a rate limit turns the same comment into
  "PR opened");
* the same kind again with the same text (a retried step) changes nothing;
* a refusal from a re-run ("Re-run all jobs" on an old run whose trigger label is gone) never
  overwrites what the run achieved: it is posted once more under the attempt's own key.

Only comments written by Chimera's identities count, and only their trailer marker is read
(:func:`~chimera.github.trust.summary.parse_marker`), so a pasted marker changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from chimera.github.trust.summary import parse_marker, render_marker

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient

__all__ = ["REPLACEABLE", "carry_claim", "find_outcome", "outcome_key", "post_outcome_once"]

# Outcomes that say "not finished": a later attempt of the same run replaces them in place.
REPLACEABLE = frozenset({"running", "rate_limited", "crashed"})


def outcome_key(workflow_run: str | None, issue: int, attempt: str | None = None) -> str:
    """The idempotency key of a run's outcome on ``issue`` (``attempt``: a re-run's own key,
    for outcomes that must not replace the run's first one)."""
    key = f"{workflow_run or 'local'}:{issue}"
    return f"{key}:attempt-{attempt}" if attempt else key


def find_outcome(
    client: GitHubClient, number: int, key: str, authors: Collection[str] = ()
) -> tuple[int, str, str] | None:
    """``(comment id, kind, body)`` of the outcome comment with ``key`` on ``number``, or ``None``.

    ``authors``: the logins whose comments count (empty: any author — the caller has no
    identities, e.g. a local run).

    Raises:
        GitHubError: the API failed after retries.
    """
    for cid, author, text in client.comments(number):
        if authors and author not in authors:
            continue
        marker = parse_marker(text, "outcome")
        if marker is not None and marker.get("key") == key:
            return cid, str(marker.get("kind") or ""), text
    return None


def post_outcome_once(
    client: GitHubClient,
    number: int,
    kind: str,
    render: Callable[[str], str],
    *,
    workflow_run: str | None,
    attempt: str | None = None,
    authors: Collection[str] = (),
) -> int:
    """Make ``number`` hold exactly one outcome comment for this run, stating ``kind``.

    ``render(key)`` returns the comment's body (its trailer marker must carry ``key`` and
    ``kind``). Returns the comment's id.

    Raises:
        GitHubError: the API failed after retries.
    """
    key = outcome_key(workflow_run, number)
    found = find_outcome(client, number, key, authors)
    if found is None:
        body = render(key)
        return client.comment(number, body, marker=_trailer(body))
    cid, existing, current = found
    if kind == "refused" and existing not in REPLACEABLE and existing != kind and attempt:
        # A re-run refused: what the run achieved stays; the refusal is said once more.
        key = outcome_key(workflow_run, number, attempt)
        again = find_outcome(client, number, key, authors)
        if again is not None:
            return again[0]
        body = render(key)
        return client.comment(number, body, marker=_trailer(body))
    body = carry_claim(current, render(key))
    if current != body:
        client.edit_comment(number, cid, body)
    return cid


def carry_claim(old: str, new: str) -> str:
    """``new`` (an outcome comment replacing ``old``) with ``old``'s ChangeQueue claim kept in
    its trailer marker: a start stays counted for the per-hour limit after its outcome
    (:mod:`chimera.github.queue.claims`)."""
    before = parse_marker(old, "outcome") or {}
    after = parse_marker(new, "outcome")
    if after is None or not before.get("claim") or after.get("claim"):
        return new
    lines = new.rstrip().splitlines()
    return "\n".join([*lines[:-1], render_marker("outcome", after | {"claim": before["claim"]})])


def _trailer(body: str) -> str:
    return body[body.rindex("<!-- chimera:outcome") :]
