"""The trust chain on commits: a branch's tip, and the Spec verdict shown on a head commit."""

from __future__ import annotations

from chimera.errors import GitHubPermissionDenied
from chimera.github.client.core import ClientCore

__all__ = ["CommitsMixin"]


class CommitsMixin(ClientCore):
    """Branch tips and the ``Chimera Spec`` verdict (a check run, else a commit status)."""

    def branch_sha(self, branch: str) -> str:
        """The commit at the tip of ``branch`` (40 hex digits)."""

        def get() -> str:
            data = self._raw("GET", f"/repos/{self.repository}/branches/{branch}")
            return str(data["commit"]["sha"])

        return self._call(f"GET branch {branch}", get)

    def spec_verdict(self, sha: str, *, passed: bool, title: str, summary: str) -> str:
        """Show the Spec verdict on commit ``sha``: a check run named ``Chimera Spec`` (an App
        or ``GITHUB_TOKEN``), else — a personal token gets GitHub's 403 for check runs — a
        commit status with the context ``chimera/spec``. Returns ``"check_run"`` or
        ``"status"``.

        Raises:
            GitHubError: both writes failed (after retries).
        """
        check = {
            "name": "Chimera Spec",
            "head_sha": sha,
            "status": "completed",
            "conclusion": "success" if passed else "failure",
            "output": {"title": title[:250], "summary": summary[:60000]},
        }
        try:
            self._call(
                f"POST check run on {sha[:12]}",
                lambda: self._raw("POST", f"/repos/{self.repository}/check-runs", check),
            )
            return "check_run"
        except GitHubPermissionDenied:
            status = {
                "state": "success" if passed else "failure",
                "context": "chimera/spec",
                "description": title[:140],
            }
            self._call(
                f"POST status on {sha[:12]}",
                lambda: self._raw("POST", f"/repos/{self.repository}/statuses/{sha}", status),
            )
            return "status"
