"""GitHub Actions: dispatch a workflow, read or cancel a run, download a run's artifact."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

from chimera.confine import confined
from chimera.errors import (
    GitHubApiError,
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    UnsafePathError,
)
from chimera.github.client.core import ClientCore

__all__ = ["ActionsMixin"]


class ActionsMixin(ClientCore):
    """Workflow dispatches, workflow runs and their artifacts."""

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> None:
        """``workflow_dispatch`` of ``workflow`` (file name or id) on ``ref``.

        Not retried blindly: a dispatch whose reply was lost (a 5xx or a timeout) may still
        have started a run, and a second dispatch would start the issue twice. Only rate
        limits — requests GitHub refused before acting — are retried; anything else is raised
        for the caller to report (the queue gives the issue its place back).
        """
        url = f"/repos/{self.repository}/actions/workflows/{workflow}/dispatches"
        import github
        import requests

        for attempt in range(1, self.retry.attempts + 1):
            try:
                self._raw("POST", url, {"ref": ref, "inputs": inputs})
                return
            except (github.GithubException, requests.RequestException) as exc:
                err = self._map(f"POST dispatch {workflow}", exc)
                if not isinstance(err, GitHubRateLimited) or attempt == self.retry.attempts:
                    raise err from exc
                wait = err.retry_after if err.retry_after is not None else self.retry.backoff_s
                if wait > self.retry.max_wait_s:
                    raise err from exc
                self.waits.append(wait)
                self.sleep(wait)

    def workflow_run(self, run_id: int) -> tuple[str, str | None] | None:
        """``(status, conclusion)`` of workflow run ``run_id`` (``status``: ``queued``,
        ``in_progress``, ``completed``...); ``None`` when GitHub has no such run (deleted).

        Raises:
            GitHubError: the API failed after retries.
        """
        url = f"/repos/{self.repository}/actions/runs/{int(run_id)}"

        def get() -> tuple[str, str | None] | None:
            data = self._raw("GET", url)
            conclusion = data.get("conclusion")
            return str(data.get("status") or ""), str(conclusion) if conclusion else None

        try:
            return self._call(f"GET workflow run {run_id}", get)
        except GitHubNotFound:
            return None

    def cancel_workflow_run(self, run_id: int) -> bool:
        """Ask GitHub to cancel workflow run ``run_id`` (asynchronous: it may still run for a
        while); ``False`` when it is already finished or gone.

        Raises:
            GitHubError: the API failed after retries.
        """
        url = f"/repos/{self.repository}/actions/runs/{int(run_id)}/cancel"
        try:
            self._call(f"POST cancel workflow run {run_id}", lambda: self._raw("POST", url))
        except GitHubNotFound:
            return False
        except GitHubApiError as exc:
            if exc.status == 409:
                return False
            raise
        return True

    def download_artifact(self, run_id: int, name: str, dest: Path) -> Path:
        """Download artifact ``name`` of workflow run ``run_id`` and unzip it into ``dest``.

        Raises:
            GitHubNotFound: the run has no such artifact (expired or never uploaded).
        """
        listing = self._call(
            f"GET artifacts of run {run_id}",
            lambda: self._raw(
                "GET", f"/repos/{self.repository}/actions/runs/{run_id}/artifacts?name={name}"
            ),
        )
        found = [a for a in listing.get("artifacts", []) if a.get("name") == name]
        if not found or found[0].get("expired"):
            raise GitHubNotFound(
                f"workflow run {run_id} has no artifact {name!r} (expired or never uploaded)",
                status=404,
            )
        art_id = int(found[0]["id"])
        data = self._call(
            f"GET artifact {art_id}",
            lambda: self._blob(f"/repos/{self.repository}/actions/artifacts/{art_id}/zip"),
        )
        dest.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for member in zf.infolist():
                try:
                    confined(dest, member.filename, what=f"artifact {name!r}")
                except UnsafePathError as exc:
                    raise GitHubError(
                        f"artifact {name!r} holds a path outside its folder: "
                        f"{member.filename[:200]!r}"
                    ) from exc
            zf.extractall(dest)
        return dest

    def _blob(self, path: str) -> bytes:
        """GET ``path`` as bytes with the client's token, following GitHub's redirect."""
        import github
        import requests

        headers = {"Accept": "application/vnd.github+json"}
        auth = self._gh.requester.auth
        if auth is not None:
            headers["Authorization"] = f"{auth.token_type} {auth.token}"
        resp = requests.get(
            self.api_url + path,
            headers=headers,
            timeout=self.retry.timeout_s,
            allow_redirects=False,
        )
        if resp.status_code in (301, 302, 303, 307) and "location" in resp.headers:
            resp = requests.get(resp.headers["location"], timeout=self.retry.timeout_s)
        if resp.status_code >= 400:
            try:
                payload: Any = resp.json()
            except ValueError:
                payload = {"message": resp.text[:200]}
            raise github.GithubException(resp.status_code, payload, dict(resp.headers))
        return bytes(resp.content)
