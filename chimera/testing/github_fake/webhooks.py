"""Webhook payloads built from the fake's state, in GitHub's shapes, for events the fake does
not deliver by itself (it records events; a test hands the payload to the job under test).

* :func:`comment_event` — ``issue_comment`` (``created``, ``edited``, ``deleted``) for a
  comment the fake holds (posted through the API, e.g. with PyGithub): the issue (with
  ``pull_request`` on a PR's conversation), the comment, the repository and the sender, as
  GitHub sends them; an edit carries ``changes.body.from``.
* :func:`pull_request_event` — ``pull_request`` / ``pull_request_target`` (``synchronize``
  after a push, by default) for a PR the fake holds, its head read from the remote.
* :func:`add_workflow_run` — a workflow run the Actions API can read and cancel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chimera.testing.github_fake.server import GitHubFake

__all__ = ["add_workflow_run", "comment_event", "pull_request_event"]


def comment_event(
    fake: GitHubFake,
    full_name: str,
    comment_id: int,
    *,
    action: str = "created",
    previous_body: str | None = None,
) -> dict[str, Any]:
    """The ``issue_comment`` payload for comment ``comment_id`` of ``full_name``.

    Raises:
        KeyError: no such repository or comment.
    """
    repo = fake.repos[full_name]
    with fake.lock:
        comment = repo.comments[comment_id]
        issue = repo.issues[comment["issue"]]
        json = fake.payloads
        data: dict[str, Any] = {
            "action": action,
            "issue": json.issue(repo, issue),
            "comment": json.comment(repo, comment),
            "repository": json.repo(repo),
            "sender": json.user(comment["user"]),
        }
    if action == "edited":
        data["changes"] = {"body": {"from": previous_body or ""}}
    return data


def pull_request_event(
    fake: GitHubFake,
    full_name: str,
    number: int,
    *,
    action: str = "synchronize",
    sender: str | None = None,
) -> dict[str, Any]:
    """The ``pull_request`` payload (``pull_request_target`` has the same shape) for PR
    ``number`` of ``full_name``, sent by ``sender`` (default: the PR's author).

    Raises:
        KeyError: no such repository or pull request.
    """
    repo = fake.repos[full_name]
    with fake.lock:
        pull = repo.issues[number]
        json = fake.payloads
        data: dict[str, Any] = {
            "action": action,
            "number": number,
            "pull_request": json.pull(repo, pull),
            "repository": json.repo(repo),
            "sender": json.user(sender or pull["user"]),
        }
    return data


def add_workflow_run(
    fake: GitHubFake, full_name: str, run_id: int, *, status: str = "in_progress"
) -> dict[str, Any]:
    """Record workflow run ``run_id`` (``queued``, ``in_progress`` or ``completed``): the
    same model as :meth:`GitHubFake.add_workflow_run`, which it calls."""
    return fake.add_workflow_run(full_name, run_id, status=status)
