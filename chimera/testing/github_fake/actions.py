"""GitHub Actions: workflow dispatches, workflow runs (read; cancel, which is asynchronous as on
GitHub: the run stays ``in_progress`` until :meth:`GitHubFake.settle_cancels`), run
artifacts, the repository's workflow permissions (``GET .../actions/permissions/workflow``:
an admin's, as on GitHub) and the names of its secrets and of the organization's secrets
shared with it (``GET .../actions/secrets``, ``.../actions/organization-secrets``: a
collaborator with write access, or a token granted ``secrets: read``)."""

from __future__ import annotations

from chimera.testing.github_fake.routing import (
    FakeRequest,
    FakeResponse,
    HttpError,
    Resource,
    route,
)
from chimera.testing.github_fake.state import ROLE_RANK, FakeRepo, node_id


class Actions(Resource):
    @route("POST", "{repo}/actions/workflows/{wf}/dispatches")
    def dispatch_workflow(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        login = self.need(repo, req, "write", "actions")
        data = req.data
        if "ref" not in data:
            raise HttpError(422, 'Invalid request. "ref" wasn\'t supplied.')
        inputs = data.get("inputs") or {}
        if not isinstance(inputs, dict) or any(not isinstance(v, str) for v in inputs.values()):
            raise HttpError(422, "Invalid request. inputs must be strings.")
        repo.dispatches.append(
            {"workflow": req.params["wf"], "ref": data["ref"], "inputs": dict(inputs), "by": login}
        )
        self.fake.emit(repo, req, "workflow_dispatch", None, ref=str(data["ref"]))
        return FakeResponse(204)

    @route("GET", "{repo}/actions/runs/{run:int}/artifacts")
    def list_artifacts(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        run = req.number("run")
        base = f"{self.fake.api_url}/repos/{repo.full_name}/actions/artifacts"
        items = [
            {
                "id": a["id"],
                "node_id": node_id("A", a["id"]),
                "name": a["name"],
                "size_in_bytes": len(a["data"]),
                "url": f"{base}/{a['id']}",
                "archive_download_url": f"{base}/{a['id']}/zip",
                "expired": False,
                "created_at": a["created_at"],
                "expires_at": None,
                "updated_at": a["created_at"],
                "workflow_run": {"id": run},
            }
            for a in self.fake.artifacts_of(repo, run)
            if req.query.get("name") in (None, a["name"])
        ]
        return FakeResponse(200, {"total_count": len(items), "artifacts": items})

    @route("GET", "{repo}/actions/artifacts/{aid:int}/zip")
    def download_artifact(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        if req.login is None:
            raise HttpError(401, "Requires authentication")
        runs = set(repo.artifacts) | set(repo.workflow_runs) | self.fake.stored_runs(repo)
        for run in sorted(runs):
            for art in self.fake.artifacts_of(repo, run):
                if art["id"] == req.number("aid"):
                    return FakeResponse(200, raw=art["data"], content_type="application/zip")
        raise HttpError(404, "Not Found")

    @route("GET", "{repo}/actions/runs/{run:int}")
    def get_run(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        run = repo.workflow_runs.get(req.number("run"))
        if run is None:
            raise HttpError(404, "Not Found")
        base = f"{self.fake.api_url}/repos/{repo.full_name}/actions/runs/{run['id']}"
        return FakeResponse(
            200,
            {
                "id": run["id"],
                "node_id": node_id("WFR", run["id"]),
                "name": run.get("name", "Chimera fix"),
                "event": run.get("event", "issues"),
                "status": run["status"],
                "conclusion": run.get("conclusion"),
                "run_attempt": run.get("run_attempt", 1),
                "url": base,
                "artifacts_url": f"{base}/artifacts",
                "cancel_url": f"{base}/cancel",
                "rerun_url": f"{base}/rerun",
                "jobs_url": f"{base}/jobs",
                "logs_url": f"{base}/logs",
                "path": run.get("path", ".github/workflows/chimera.yml"),
                "html_url": f"{self.fake.web_url}/{repo.full_name}/actions/runs/{run['id']}",
                "created_at": run.get("created_at", "2026-01-01T00:00:00Z"),
                "updated_at": run.get("created_at", "2026-01-01T00:00:00Z"),
            },
        )

    @route("POST", "{repo}/actions/runs/{run:int}/cancel")
    def cancel_run(self, req: FakeRequest) -> FakeResponse:
        """GitHub's cancel: 202 for a queued or running run, 409 once it has completed. It is
        asynchronous: the run completes as ``cancelled`` at ``GitHubFake.settle_cancels``."""
        repo = self.repo(req)
        self.need(repo, req, "write", "actions")
        run = repo.workflow_runs.get(req.number("run"))
        if run is None:
            raise HttpError(404, "Not Found")
        if run["status"] == "completed":
            raise HttpError(409, "Cannot cancel a workflow run that is completed.")
        run["cancel_requested"] = True
        return FakeResponse(202, {})

    @route("GET", "{repo}/actions/permissions/workflow")
    def workflow_permissions(self, req: FakeRequest) -> FakeResponse:
        """GitHub's answer to an admin (a token granted ``administration: read``); 403 for
        anyone else."""
        repo = self.repo(req)
        self._may_read(repo, req, "admin", "administration")
        return FakeResponse(
            200,
            {
                "default_workflow_permissions": repo.default_workflow_permissions,
                "can_approve_pull_request_reviews": repo.allow_actions_pull_requests,
            },
        )

    @route("GET", "{repo}/actions/secrets")
    def list_secrets(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        self._may_read(repo, req, "write", "secrets")
        return self._secrets(req, repo.secrets, "")

    @route("GET", "{repo}/actions/organization-secrets")
    def list_org_secrets(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        self._may_read(repo, req, "write", "secrets")
        return self._secrets(req, repo.org_secrets, "selected")

    def _may_read(self, repo: FakeRepo, req: FakeRequest, role: str, scope: str) -> None:
        who = req.identity
        if who is None:
            raise HttpError(401, "Requires authentication")
        if ROLE_RANK[self.role(repo, who.login)] < ROLE_RANK[role] or not who.allows(scope, "read"):
            raise HttpError(403, "Resource not accessible by integration")

    def _secrets(self, req: FakeRequest, found: dict[str, str], visibility: str) -> FakeResponse:
        items = [
            {"name": name, "created_at": stamp, "updated_at": stamp}
            | ({"visibility": visibility} if visibility else {})
            for name, stamp in sorted(found.items())
        ]
        page = self.paginate(req, items)
        return FakeResponse(200, {"total_count": len(items), "secrets": page.payload}, page.headers)
