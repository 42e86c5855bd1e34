"""The small frozen shapes :class:`~chimera.github.client.client.GitHubClient` returns, and their
conversion from PyGithub objects, so that callers never hold a PyGithub object.

Timestamps (``created_at``) are ISO 8601 strings in UTC, to the second (``""`` when unknown).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "CommentInfo",
    "IssueInfo",
    "PullInfo",
    "ReviewInfo",
    "comment_info",
    "issue_info",
    "pull_info",
]


@dataclass(frozen=True)
class IssueInfo:
    number: int
    title: str
    body: str
    state: str
    locked: bool
    labels: tuple[str, ...]
    is_pull: bool
    author: str
    html_url: str
    created_at: str


@dataclass(frozen=True)
class PullInfo:
    number: int
    title: str
    body: str
    state: str
    draft: bool
    merged: bool
    head_ref: str
    head_sha: str
    base_ref: str
    labels: tuple[str, ...]
    author: str
    html_url: str
    node_id: str
    requested_reviewers: tuple[str, ...]
    created_at: str
    auto_merge: bool


@dataclass(frozen=True)
class CommentInfo:
    """An issue or PR comment: ``issue`` is the number it is on (``0``: unknown)."""

    id: int
    issue: int
    author: str
    body: str
    created_at: str


@dataclass(frozen=True)
class ReviewInfo:
    id: int
    user: str
    user_type: str
    state: str
    commit_id: str
    body: str


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="seconds")
    return str(value or "")


def issue_info(raw: Any) -> IssueInfo:
    """A PyGithub ``Issue`` (an issue or a PR seen as an issue) as an :class:`IssueInfo`."""
    return IssueInfo(
        number=int(raw.number),
        title=str(raw.title or ""),
        body=str(raw.body or ""),
        state=str(raw.state),
        locked=bool(raw.locked),
        labels=tuple(label.name for label in raw.labels),
        is_pull=raw.pull_request is not None,
        author=str(raw.user.login) if raw.user else "",
        html_url=str(raw.html_url),
        created_at=_iso(raw.created_at),
    )


def pull_info(raw: Any) -> PullInfo:
    """A PyGithub ``PullRequest`` as a :class:`PullInfo`."""
    return PullInfo(
        number=int(raw.number),
        title=str(raw.title or ""),
        body=str(raw.body or ""),
        state=str(raw.state),
        draft=bool(raw.draft),
        merged=bool(raw.merged),
        head_ref=str(raw.head.ref),
        head_sha=str(raw.head.sha),
        base_ref=str(raw.base.ref),
        labels=tuple(label.name for label in raw.labels),
        author=str(raw.user.login) if raw.user else "",
        html_url=str(raw.html_url),
        node_id=str(raw.node_id),
        requested_reviewers=tuple(u.login for u in raw.requested_reviewers),
        created_at=_iso(raw.created_at),
        auto_merge=raw.raw_data.get("auto_merge") is not None,
    )


def comment_info(raw: Any) -> CommentInfo:
    """A PyGithub ``IssueComment`` as a :class:`CommentInfo` (its issue from ``issue_url``)."""
    url = str(getattr(raw, "issue_url", "") or "")
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return CommentInfo(
        id=int(raw.id),
        issue=int(tail) if tail.isdigit() else 0,
        author=str(raw.user.login) if raw.user else "",
        body=str(raw.body or ""),
        created_at=_iso(raw.created_at),
    )
