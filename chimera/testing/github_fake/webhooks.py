"""Webhook payloads built from the fake's state, in GitHub's shapes, for events the fake does
not deliver by itself (it records events; a test hands the payload to the job under test).

* :func:`comment_event` — ``issue_comment`` (``created``, ``edited``, ``deleted``) for a
  comment the fake holds (posted through the API, e.g. with PyGithub): the issue (with
  ``pull_request`` on a PR's conversation), the comment, the repository and the sender, as
  GitHub sends them; an edit carries ``changes.body.from``.
* :func:`pull_request_event` — ``pull_request`` / ``pull_request_target`` (``synchronize``
  after a push, by default) for a PR the fake holds, its head read from the remote.
* :func:`add_workflow_run` — a workflow run the Actions API can read and cancel.
* :func:`delivery` — the payload of any event a write through the fake caused, built when it
  happened and kept on the :class:`~chimera.testing.github_fake.state.RepoEvent`
  (``event.payload``): ``issues``, ``issue_comment``, ``pull_request``,
  ``pull_request_review``, ``workflow_dispatch``, ``push`` and the rest with the common fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chimera.testing.github_fake.server import GitHubFake
    from chimera.testing.github_fake.state import FakeRepo, RepoEvent

__all__ = ["add_workflow_run", "comment_event", "delivery", "pull_request_event"]


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


def delivery(fake: GitHubFake, repo: FakeRepo, event: RepoEvent) -> dict[str, Any]:
    """The webhook payload of ``event`` in GitHub's shape, from the fake's state now (call it
    when the write happens; the caller holds ``fake.lock``). An edited comment's payload
    leaves out ``changes`` (the fake keeps no earlier body)."""
    json = fake.payloads
    data: dict[str, Any] = {"repository": json.repo(repo), "sender": json.user(event.actor)}
    if event.action is not None:
        data["action"] = event.action
    item = repo.issues.get(event.number) if event.number is not None else None
    if event.event in ("issues", "issue_comment") and item is not None:
        data["issue"] = json.issue(repo, item)
    if event.event == "issue_comment" and event.comment in repo.comments:
        data["comment"] = json.comment(repo, repo.comments[event.comment])
    if event.event in ("pull_request", "pull_request_review") and item is not None:
        data["number"] = item["number"]
        data["pull_request"] = json.pull(repo, item)
    if event.event == "pull_request_review" and item is not None:
        review = next(
            (r for r in repo.reviews.get(item["number"], []) if r["id"] == event.review), None
        )
        if review is not None:
            data["review"] = json.review(repo, item["number"], review)
    if event.label is not None:
        data["label"] = json.label(repo, event.label)
    if event.event == "workflow_dispatch" and repo.dispatches:
        sent = repo.dispatches[-1]
        ref = str(sent["ref"])
        data |= {
            "inputs": dict(sent["inputs"]),
            "ref": ref if ref.startswith("refs/") else f"refs/heads/{ref}",
            "workflow": f".github/workflows/{sent['workflow']}",
        }
    if event.event == "push":
        data |= {
            "ref": event.ref,
            "before": event.before or "0" * 40,
            "after": event.sha,
            "pusher": {"name": event.actor, "email": None},
            "created": (event.before or "0" * 40) == "0" * 40,
            "deleted": event.sha == "0" * 40,
        }
    return data
