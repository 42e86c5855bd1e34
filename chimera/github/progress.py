"""The "working on it" comment: decide posts it when a run starts (with the workflow run's
link), ``@chimera stop`` reads the run to cancel from it, and the run's outcome replaces it,
so a run leaves one comment on the issue, not two.

Its marker — ``<!-- chimera:progress {"issue": N, "run": "R"} -->``, the last line — is read
only from comments written by Chimera's own identities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chimera.github.summary import code, parse_marker, render_marker

if TYPE_CHECKING:
    from chimera.github.client import GitHubClient
    from chimera.github.settings import ActionSettings

__all__ = ["acknowledge", "post_progress", "progress_runs", "replace_progress"]


def progress_marker(issue: int, workflow_run: str) -> str:
    return render_marker("progress", {"issue": issue, "run": workflow_run})


def post_progress(
    client: GitHubClient,
    issue: int,
    *,
    workflow_run: str | None,
    run_link: str,
    actor: str,
    what: str,
) -> int | None:
    """The "working on it" comment on ``issue`` for ``workflow_run`` (posted once per workflow
    run); ``None`` for a local run, which has no run to link or cancel.

    Raises:
        GitHubError: the API failed after retries.
    """
    if not workflow_run:
        return None
    marker = progress_marker(issue, workflow_run)
    body = (
        f"**Chimera is working on it** ({what}, for {code(actor, 60)}).\n\n"
        f"- Follow the run: {run_link}\n"
        "- `@chimera stop` cancels it; `@chimera status` says where it stands.\n\n" + marker
    )
    return client.comment(issue, body, marker=marker)


def _progress(
    client: GitHubClient, settings: ActionSettings | None, issue: int
) -> list[tuple[int, str]]:
    """``(comment id, workflow run)`` of Chimera's progress comments on ``issue``, oldest
    first (with ``settings=None`` the author is not checked: the caller filtered already)."""
    found: list[tuple[int, str]] = []
    for cid, author, body in client.comments(issue):
        if settings is not None and not settings.is_self(author):
            continue
        marker = parse_marker(body, "progress")
        run = str((marker or {}).get("run") or "")
        if marker and marker.get("issue") == issue and run.isdigit():
            found.append((cid, run))
    return found


def progress_runs(client: GitHubClient, settings: ActionSettings, issue: int) -> list[int]:
    """The workflow runs Chimera's own "working on it" comments on ``issue`` name, newest
    first (a comment by anyone else, or a marker outside the trailer, is never read)."""
    runs = [int(run) for _cid, run in _progress(client, settings, issue)]
    return list(dict.fromkeys(reversed(runs)))


def replace_progress(
    client: GitHubClient, settings: ActionSettings, issue: int, workflow_run: str, body: str
) -> int | None:
    """Edit this workflow run's progress comment on ``issue`` into ``body``; returns its id,
    or ``None`` when there is none (the caller posts a new comment).

    Raises:
        GitHubError: the API failed after retries.
    """
    for cid, run in _progress(client, settings, issue):
        if run == workflow_run:
            url = f"/repos/{client.repository}/issues/comments/{cid}"

            def patch(url: str = url) -> Any:
                return client._raw("PATCH", url, {"body": body})

            client._call(f"PATCH comment {cid}", patch)
            return cid
    return None


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
