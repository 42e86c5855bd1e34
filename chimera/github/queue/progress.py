"""The "working on it" comment: decide posts the run's one outcome comment as ``running``
("Started", with the workflow run's link), ``@chimera stop`` and ``@chimera status`` read the
run from it, and publish edits it into the outcome (:mod:`chimera.github.conversation.outcome`), so
a run leaves one comment on the issue, not two.

Its marker is the outcome marker (``{"issue": N, "key": "<run>:<N>", "kind": "running"}``,
the last line), read only from comments written by Chimera's own identities.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Protocol

from chimera.github.conversation.documents import outcome_comment
from chimera.github.conversation.outcome import outcome_key, post_outcome_once
from chimera.github.queue.claims import with_fields
from chimera.github.trust.summary import code, parse_marker

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.trust.settings import ActionSettings

__all__ = ["acknowledge", "post_progress", "progress_runs"]


class _Run(Protocol):
    """What :func:`post_progress` needs of the job's context (``ActionContext`` has it)."""

    @property
    def workflow_run(self) -> str | None: ...

    @property
    def run_attempt(self) -> str | None: ...

    def run_link(self) -> str: ...


def post_progress(
    ctx: _Run,
    client: GitHubClient,
    issue: int,
    *,
    actor: str,
    what: str,
    authors: Collection[str] = (),
    claim: str | None = None,
    adopt: int | None = None,
) -> int | None:
    """The run's one outcome comment on ``issue``, stating ``running``: Chimera is working on
    it, with the workflow run's link (found again and edited in place, never doubled);
    ``None`` for a local run, which has no run to link or cancel. ``ctx``: the job's
    ``ActionContext``. ``claim``: the ChangeQueue claim token the comment carries (it is then
    the run's slot claim, :mod:`chimera.github.queue.claims`); ``adopt``: the id of the drain's
    claim comment to turn into this run's (a dispatched run), instead of finding its own.

    Raises:
        GitHubError: the API failed after retries.
    """
    workflow_run = ctx.workflow_run
    if not workflow_run:
        return None
    detail = (
        f"Chimera is working on it ({what}, for {code(actor, 60)}): workflow run "
        f"{code(workflow_run, 30)} holds this issue's slot in the ChangeQueue; this comment "
        "becomes the run's outcome.\n\n"
        "- `@chimera stop` cancels it; `@chimera status` says where it stands."
    )

    def render(key: str) -> str:
        body = outcome_comment(
            "running", issue=issue, key=key, detail=detail, run_link=ctx.run_link()
        )
        return with_fields(body, claim=claim) if claim else body

    if adopt is not None:
        client.edit_comment(issue, adopt, render(outcome_key(workflow_run, issue)))
        return adopt
    return post_outcome_once(
        client,
        issue,
        "running",
        render,
        workflow_run=workflow_run,
        attempt=ctx.run_attempt,
        authors=authors,
    )


def _progress(client: GitHubClient, settings: ActionSettings, issue: int) -> list[str]:
    """The workflow runs of Chimera's ``running`` outcome comments on ``issue``, oldest
    first."""
    found: list[str] = []
    for _cid, author, body in client.comments(issue):
        if not settings.is_self(author):
            continue
        marker = parse_marker(body, "outcome")
        if not marker or marker.get("issue") != issue or marker.get("kind") != "running":
            continue
        run = str(marker.get("key") or "").split(":", 1)[0]
        if run.isdigit():
            found.append(run)
    return found


def progress_runs(client: GitHubClient, settings: ActionSettings, issue: int) -> list[int]:
    """The workflow runs Chimera's own "working on it" (``running``) comments on ``issue``
    name, newest first (a comment by anyone else, or a marker outside the trailer, is never
    read)."""
    runs = [int(run) for run in _progress(client, settings, issue)]
    return list(dict.fromkeys(reversed(runs)))


def acknowledge(client: GitHubClient, payload: Any) -> bool:
    """React 👀 to the command comment of an ``issue_comment`` ``payload`` (the command was
    taken); returns whether a comment id was found.

    Raises:
        GitHubError: the API failed after retries.
    """
    comment = payload.get("comment") if isinstance(payload, dict) else None
    cid = comment.get("id") if isinstance(comment, dict) else None
    if not isinstance(cid, int) or isinstance(cid, bool):
        return False
    url = f"/repos/{client.repository}/issues/comments/{cid}/reactions"

    def post() -> Any:
        return client._raw("POST", url, {"content": "eyes"})

    client._call(f"POST reaction on comment {cid}", post)
    return True
