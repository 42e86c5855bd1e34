"""Check runs (GitHub Apps and the GITHUB_TOKEN only) and commit statuses (any write token).

A personal token creating a check run gets GitHub's 403 "You must authenticate via a GitHub
App."; only the app that created a check run may update it. A check run made with the
GITHUB_TOKEN belongs to the ``github-actions`` app (id 15368 on github.com).
"""

from __future__ import annotations

from typing import Any

from chimera.testing.github_fake.routing import (
    FakeRequest,
    FakeResponse,
    HttpError,
    Resource,
    route,
    validation_failed,
)
from chimera.testing.github_fake.state import FakeRepo, TokenKind, node_id, now

NOT_AN_APP = "You must authenticate via a GitHub App."
ACTIONS_APP = ("github-actions", 15368)
_CHECK_DOCS = "https://docs.github.com/rest/checks/runs#create-a-check-run"
_STATUSES = ("queued", "in_progress", "completed")
_CONCLUSIONS = frozenset(
    {
        "action_required",
        "cancelled",
        "failure",
        "neutral",
        "success",
        "skipped",
        "stale",
        "timed_out",
    }
)
_STATUS_STATES = ("error", "failure", "pending", "success")


class Checks(Resource):
    def _app(self, req: FakeRequest) -> tuple[str, int]:
        """The (slug, id) of the app the caller's token belongs to; 403 for a person."""
        who = req.identity
        if who is None or who.kind is TokenKind.PERSONAL:
            raise HttpError(403, NOT_AN_APP, docs=_CHECK_DOCS)
        if who.kind is TokenKind.WORKFLOW:
            return ACTIONS_APP
        return who.login.removesuffix("[bot]"), int(self.fake.users[who.login]["id"])

    def _sha(self, repo: FakeRepo, ref: str) -> str:
        """A commit SHA, or the branch tip ``ref`` names; 422 when the remote lacks it."""
        sha = repo.head_sha(ref) or ref
        if repo.remote is not None and not repo.has_commit(sha):
            raise HttpError(422, f"No commit found for SHA: {ref}")
        return sha

    def _apply(self, run: dict[str, Any], data: dict[str, Any]) -> None:
        status = data.get("status", run["status"])
        conclusion = data.get("conclusion", run["conclusion"])
        if status not in _STATUSES or (conclusion is not None and conclusion not in _CONCLUSIONS):
            raise validation_failed({"resource": "CheckRun", "code": "invalid"})
        if "conclusion" in data:
            status = "completed"  # GitHub completes a run given a conclusion
        if status == "completed" and conclusion is None:
            raise HttpError(422, "Invalid request. `conclusion` is required when completed.")
        for key in ("name", "details_url", "external_id"):
            if key in data:
                run[key] = data[key]
        output = data.get("output") or {}
        notes = output.get("annotations") or []
        if len(notes) > 50:
            # GitHub's limit: at most 50 annotations per request (more need further PATCHes).
            raise validation_failed(
                {"resource": "CheckRun", "field": "annotations", "code": "invalid"}
            )
        if notes and not (output.get("title") and output.get("summary")):
            raise validation_failed(
                {"resource": "CheckRun", "field": "output", "code": "missing_field"}
            )
        run.setdefault("annotations", []).extend(notes)
        run["output"] |= {k: output[k] for k in ("title", "summary", "text") if k in output}
        run["status"], run["conclusion"] = status, conclusion
        if status == "completed":
            run["completed_at"] = data.get("completed_at") or now()

    @route("POST", "{repo}/check-runs")
    def create_check_run(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        slug, app_id = self._app(req)
        self.need(repo, req, "write", "checks")
        if not req.data.get("name") or not req.data.get("head_sha"):
            raise validation_failed({"resource": "CheckRun", "code": "missing_field"})
        run: dict[str, Any] = {
            "id": self.fake.new_id(),
            "head_sha": self._sha(repo, str(req.data["head_sha"])),
            "name": str(req.data["name"]),
            "status": "queued",
            "conclusion": None,
            "details_url": None,
            "external_id": None,
            "started_at": req.data.get("started_at") or now(),
            "completed_at": None,
            "output": {"title": None, "summary": None, "text": None},
            "app": slug,
            "app_id": app_id,
            "by": req.login,
        }
        self._apply(run, req.data)
        repo.check_runs[run["id"]] = run
        action = "completed" if run["status"] == "completed" else "created"
        self.fake.emit(repo, req, "check_run", action, sha=run["head_sha"])
        return FakeResponse(201, self._json(repo, run))

    @route("PATCH", "{repo}/check-runs/{cid:int}")
    def update_check_run(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        app_id = self._app(req)[1]
        self.need(repo, req, "write", "checks")
        run = self._run(repo, req)
        if run["app_id"] != app_id:
            raise HttpError(
                403,
                f"Invalid app_id `{app_id}` - check run can only be modified by the GitHub App "
                "that created it.",
            )
        was = run["status"]
        self._apply(run, req.data)
        if run["status"] == "completed" and was != "completed":
            self.fake.emit(repo, req, "check_run", "completed", sha=run["head_sha"])
        return FakeResponse(200, self._json(repo, run))

    @route("GET", "{repo}/check-runs/{cid:int}/annotations")
    def list_annotations(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        return self.paginate(req, list(self._run(repo, req).get("annotations", [])))

    @route("GET", "{repo}/check-runs/{cid:int}")
    def get_check_run(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        return FakeResponse(200, self._json(repo, self._run(repo, req)))

    @route("GET", "{repo}/commits/{ref:path}/check-runs")
    def list_check_runs(self, req: FakeRequest) -> FakeResponse:
        """The ref's check runs, newest first; ``check_name``, ``status``, ``app_id`` filter,
        ``filter=latest`` (the default) keeps the newest run of each name."""
        repo = self.repo(req)
        runs = list(reversed(repo.checks_for(self._sha(repo, req.params["ref"]))))
        wanted = {k: req.query[k] for k in ("check_name", "status", "app_id") if k in req.query}
        field = {"check_name": "name", "status": "status", "app_id": "app_id"}
        runs = [r for r in runs if all(str(r[field[k]]) == v for k, v in wanted.items())]
        if req.query.get("filter", "latest") == "latest":
            runs = [r for i, r in enumerate(runs) if r["name"] not in {o["name"] for o in runs[:i]}]
        items = [self._json(repo, r) for r in runs]
        return FakeResponse(200, {"total_count": len(items), "check_runs": items})

    def _run(self, repo: FakeRepo, req: FakeRequest) -> dict[str, Any]:
        run = repo.check_runs.get(req.number("cid"))
        if run is None:
            raise HttpError(404, "Not Found")
        return run

    # -- commit statuses -------------------------------------------------------------------

    @route("POST", "{repo}/statuses/{sha}")
    def create_status(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        login = self.need(repo, req, "write", "statuses")
        state = req.data.get("state")
        if state not in _STATUS_STATES:
            raise validation_failed({"resource": "Status", "field": "state", "code": "invalid"})
        stamp = now()
        status = {
            "id": self.fake.new_id(),
            "sha": self._sha(repo, req.params["sha"]),
            "state": state,
            "context": str(req.data.get("context") or "default"),
            "description": req.data.get("description"),
            "target_url": req.data.get("target_url"),
            "creator": login,
            "created_at": stamp,
            "updated_at": stamp,
        }
        repo.statuses.append(status)
        self.fake.emit(repo, req, "status", None, sha=status["sha"])
        return FakeResponse(201, self._status_json(repo, status))

    @route("GET", "{repo}/commits/{ref:path}/statuses")
    def list_statuses(self, req: FakeRequest) -> FakeResponse:
        """Every status of the ref, newest first."""
        repo = self.repo(req)
        found = repo.statuses_for(self._sha(repo, req.params["ref"]))
        return self.paginate(req, [self._status_json(repo, s) for s in found])

    # The older alias PyGithub's ``Commit.get_statuses`` calls.
    @route("GET", "{repo}/statuses/{ref}")
    def list_statuses_legacy(self, req: FakeRequest) -> FakeResponse:
        return self.list_statuses(req)

    @route("GET", "{repo}/commits/{ref:path}/status")
    def combined_status(self, req: FakeRequest) -> FakeResponse:
        """The newest status of each context and their combined ``state``."""
        repo = self.repo(req)
        sha = self._sha(repo, req.params["ref"])
        latest: dict[str, dict[str, Any]] = {}
        for status in repo.statuses_for(sha):
            latest.setdefault(status["context"], status)
        states = {s["state"] for s in latest.values()}
        if states & {"error", "failure"}:
            state = "failure"
        elif not states or "pending" in states:
            state = "pending"
        else:
            state = "success"
        api = f"{self.fake.api_url}/repos/{repo.full_name}"
        return FakeResponse(
            200,
            {
                "state": state,
                "sha": sha,
                "total_count": len(latest),
                "statuses": [self._status_json(repo, s) for s in latest.values()],
                "repository": self.json.repo(repo),
                "commit_url": f"{api}/commits/{sha}",
                "url": f"{api}/commits/{sha}/status",
            },
        )

    # -- payloads --------------------------------------------------------------------------

    def _status_json(self, repo: FakeRepo, status: dict[str, Any]) -> dict[str, Any]:
        creator = self.json.user(status["creator"])
        return {
            "url": f"{self.fake.api_url}/repos/{repo.full_name}/statuses/{status['sha']}",
            "avatar_url": creator["avatar_url"],
            "id": status["id"],
            "node_id": node_id("SC", status["id"]),
            "state": status["state"],
            "description": status["description"],
            "target_url": status["target_url"],
            "context": status["context"],
            "created_at": status["created_at"],
            "updated_at": status["updated_at"],
            "creator": creator,
        }

    def _app_json(self, slug: str, app_id: int) -> dict[str, Any]:
        return {
            "id": app_id,
            "slug": slug,
            "node_id": node_id("App", app_id),
            "owner": self.json.user(slug if slug != ACTIONS_APP[0] else "github"),
            "name": slug,
            "description": None,
            "external_url": f"{self.fake.web_url}/apps/{slug}",
            "html_url": f"{self.fake.web_url}/apps/{slug}",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "permissions": {"checks": "write", "metadata": "read"},
            "events": [],
        }

    def _json(self, repo: FakeRepo, run: dict[str, Any]) -> dict[str, Any]:
        api = f"{self.fake.api_url}/repos/{repo.full_name}"
        html = f"{self.fake.web_url}/{repo.full_name}/runs/{run['id']}"
        return {
            "id": run["id"],
            "node_id": node_id("CR", run["id"]),
            "head_sha": run["head_sha"],
            "name": run["name"],
            "url": f"{api}/check-runs/{run['id']}",
            "html_url": html,
            "details_url": run["details_url"] or html,
            "status": run["status"],
            "conclusion": run["conclusion"],
            "started_at": run["started_at"],
            "completed_at": run["completed_at"],
            "external_id": run["external_id"] or "",
            "check_suite": {"id": run["app_id"] * 1000 + 1},
            "output": run["output"]
            | {
                "annotations_count": len(run.get("annotations", [])),
                "annotations_url": f"{api}/check-runs/{run['id']}/annotations",
            },
            "app": self._app_json(run["app"], run["app_id"]),
            "pull_requests": [
                self._pull_minimal(repo, p)
                for p in repo.open_pulls()
                if self.fake.pull_head_sha(repo, p) == run["head_sha"]
            ],
        }

    def _pull_minimal(self, repo: FakeRepo, pull: dict[str, Any]) -> dict[str, Any]:
        api = f"{self.fake.api_url}/repos/{repo.full_name}"
        mini_repo = {"id": repo.id, "url": api, "name": repo.name}
        head_sha = self.fake.pull_head_sha(repo, pull)
        base_sha = repo.head_sha(pull["base"]) or "0" * 40
        return {
            "id": pull["id"],
            "number": pull["number"],
            "url": f"{api}/pulls/{pull['number']}",
            "head": {"ref": pull["head"], "sha": head_sha, "repo": mini_repo},
            "base": {"ref": pull["base"], "sha": base_sha, "repo": mini_repo},
        }
