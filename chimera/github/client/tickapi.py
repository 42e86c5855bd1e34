"""The API calls the schedules' tick makes beyond
:class:`~chimera.github.client.client.GitHubClient`: file an issue at most once and read a ref's
latest check run. (Which journal commits to trust is
:func:`chimera.github.trust.branchcommit.github_trust`'s question, as for every branch store.)

Kept apart from ``client.py`` (already long): :class:`TickClient` wraps one client, adds
these two calls through the client's retry and error mapping, and passes the calls the tick
shares with the other jobs through unchanged, so it satisfies
:class:`~chimera.github.jobs.tick.TickGitHub`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from chimera.errors import GitHubApiError, GitHubNotFound

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient, IssueInfo

__all__ = ["CheckRunSeen", "TickClient"]


@dataclass(frozen=True)
class CheckRunSeen:
    """The newest check run of one name on a ref.

    Attributes:
        head_sha: the commit it ran on (40 hex digits).
        conclusion: ``success``, ``failure`` ... (``None`` while it runs).
        summary: its output's summary (``""`` when it has none).
    """

    head_sha: str
    conclusion: str | None
    summary: str


class TickClient:
    """One repository's API for the tick (see the module docstring).

    Args:
        client: the connected client (the tick's App token).
    """

    def __init__(self, client: GitHubClient) -> None:
        self.client = client

    # -- passed through ---------------------------------------------------------------------

    def issues_with_label(self, label: str) -> list[IssueInfo]:
        return self.client.issues_with_label(label)

    def comment(self, number: int, body: str, *, marker: str | None = None) -> int:
        return self.client.comment(number, body, marker=marker)

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> None:
        self.client.dispatch_workflow(workflow, ref, inputs)

    # -- added ------------------------------------------------------------------------------

    def _find(self, label: str, marker: str) -> int | None:
        for issue in self.client.issues_with_label(label):
            if marker in issue.body:
                return issue.number
        return None

    def create_issue(self, title: str, body: str, labels: Sequence[str], *, marker: str) -> int:
        """The number of the open issue labelled ``labels[0]`` whose body holds ``marker``, or
        of a new one filed with ``body`` (which must hold ``marker``). A POST whose reply was
        lost is found again by the marker before any retry, so a retried tick never files
        twice.

        Raises:
            ValueError: ``labels`` is empty or ``body`` lacks ``marker``.
            GitHubError: the API failed after retries.
        """
        if not labels or marker not in body:
            raise ValueError("create_issue needs a label and a body holding the marker")
        found = self._find(labels[0], marker)
        if found is not None:
            return found
        repo = self.client.repository
        payload = {"title": title, "body": body, "labels": list(labels)}

        def post() -> int:
            return int(self.client._raw("POST", f"/repos/{repo}/issues", payload)["number"])

        return self.client._call(
            f"POST issue {title[:40]!r}", post, recover=lambda: self._find(labels[0], marker)
        )

    def latest_check_run(self, ref: str, name: str) -> CheckRunSeen | None:
        """The newest check run called ``name`` on ``ref`` (a branch or a SHA), or ``None``.

        Raises:
            GitHubError: the API failed after retries (an unknown ref is ``None``: GitHub's
                404, or its 422 "No commit found").
        """
        url = (
            f"/repos/{self.client.repository}/commits/{quote(ref, safe='')}/check-runs"
            f"?check_name={quote(name, safe='')}&filter=latest&per_page=100"
        )

        def get() -> CheckRunSeen | None:
            runs: list[Any] = self.client._raw("GET", url).get("check_runs") or []
            if not runs:
                return None
            newest = max(runs, key=lambda r: (str(r.get("started_at") or ""), int(r["id"])))
            output = newest.get("output") or {}
            return CheckRunSeen(
                head_sha=str(newest.get("head_sha") or ""),
                conclusion=str(newest["conclusion"]) if newest.get("conclusion") else None,
                summary=str(output.get("summary") or ""),
            )

        try:
            return self.client._call(f"GET check runs {name!r} of {ref}", get)
        except GitHubApiError as exc:
            if _absent(exc):
                return None
            raise


def _absent(exc: GitHubApiError) -> bool:
    """GitHub's answers for a ref or commit it does not have: 404, or 422 "No commit found"."""
    return isinstance(exc, GitHubNotFound) or exc.status == 422
