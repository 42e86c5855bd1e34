"""Issues, their comments and labels (pull requests share the issue endpoints and numbers)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chimera.testing.github_fake.routing import (
    FakeRequest,
    FakeResponse,
    HttpError,
    Resource,
    route,
    validation_failed,
)
from chimera.testing.github_fake.state import ROLE_RANK, FakeRepo, issue_record, node_id, now


def _github_time(value: str) -> str:
    """An ISO 8601 ``since`` (``2026-01-01T00:00:00Z`` or with an offset) in the fake's own
    ``%Y-%m-%dT%H:%M:%SZ`` form, so the two compare as strings."""
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise HttpError(422, f"Invalid since: {value[:40]}") from exc
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _scope(issue: dict[str, Any]) -> str:
    # A pull request's issue side may be written with either permission.
    return "issues|pull-requests" if issue.get("is_pull") else "issues"


def _event(issue: dict[str, Any]) -> str:
    return "pull_request" if issue.get("is_pull") else "issues"


class Issues(Resource):
    @route("GET", "{repo}/issues")
    def list_issues(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        state = req.query.get("state", "open")
        wanted = [w for w in req.query.get("labels", "").split(",") if w]
        items = [
            i
            for i in repo.issues.values()
            if (state == "all" or i["state"] == state) and all(w in i["labels"] for w in wanted)
        ]
        reverse = req.query.get("direction", "desc") == "desc"
        items.sort(key=lambda i: (i["created_at"], i["number"]), reverse=reverse)
        return self.paginate(req, [self.json.issue(repo, i) for i in items])

    @route("POST", "{repo}/issues")
    def create_issue(self, req: FakeRequest) -> FakeResponse:
        """A new issue by the caller (``issues: write``). Labels, from a caller with triage
        access or more, are created on first use and each recorded as a ``labeled`` event by the
        caller, as GitHub does (others' labels are dropped silently)."""
        repo = self.repo(req)
        login = self.need(repo, req, "read", "issues")
        title = req.data.get("title")
        if not isinstance(title, str) or not title.strip():
            raise validation_failed(
                {"resource": "Issue", "field": "title", "code": "missing_field"}
            )
        body = req.data.get("body") or ""
        names = req.data.get("labels") or []
        if not isinstance(body, str) or not isinstance(names, list):
            raise HttpError(422, "Validation Failed")
        num = self.fake.next_number(repo)
        issue = issue_record(num, self.fake.new_id(), title=title, body=body, user=login)
        repo.issues[num] = issue
        self.fake.emit(repo, req, "issues", "opened", number=num)
        # GitHub drops the labels of a caller without push access, silently.
        pusher = ROLE_RANK[self.role(repo, login)] >= ROLE_RANK["triage"]
        for label in names if pusher else []:
            name = label["name"] if isinstance(label, dict) else str(label)
            if name not in issue["labels"]:
                self.fake.ensure_label(repo, name)
                issue["labels"].append(name)
                self._labeled(repo, req, issue, "labeled", name)
        return FakeResponse(201, self.json.issue(repo, issue))

    @route("GET", "{repo}/issues/{num:int}")
    def get_issue(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        return FakeResponse(200, self.json.issue(repo, self.issue(repo, req)))

    @route("PATCH", "{repo}/issues/{num:int}")
    def patch_issue(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        issue = self.issue(repo, req)
        self.need(repo, req, "triage", _scope(issue))
        data = req.data
        for key in ("title", "body"):
            if key in data:
                issue[key] = data[key]
        if "labels" in data:
            issue["labels"] = [str(x) for x in data["labels"]]
        if data.get("state") in ("open", "closed") and data["state"] != issue["state"]:
            issue["state"] = data["state"]
            issue["closed_at"] = now() if data["state"] == "closed" else None
            action = "closed" if data["state"] == "closed" else "reopened"
            self.fake.emit(repo, req, _event(issue), action, number=issue["number"])
        issue["updated_at"] = now()
        return FakeResponse(200, self.json.issue(repo, issue))

    # -- comments --------------------------------------------------------------------------

    @route("GET", "{repo}/issues/{num:int}/comments")
    def list_comments(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        num = self.issue(repo, req)["number"]
        comments = sorted(repo.issue_comments(num), key=lambda c: c["id"])
        return self.paginate(req, [self.json.comment(repo, c) for c in comments])

    @route("POST", "{repo}/issues/{num:int}/comments")
    def add_comment(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        issue = self.issue(repo, req)
        login = self.need(repo, req, "read", _scope(issue))
        if issue["locked"] and ROLE_RANK[self.role(repo, login)] < ROLE_RANK["write"]:
            raise HttpError(403, "Unable to create comment because issue is locked.")
        text = req.data.get("body")
        if not isinstance(text, str) or not text:
            raise validation_failed({"field": "body", "code": "missing_field"})
        stamp = now()
        comment: dict[str, Any] = {
            "id": self.fake.new_id(),
            "issue": issue["number"],
            "body": text,
            "user": login,
            "created_at": stamp,
            "updated_at": stamp,
        }
        repo.comments[comment["id"]] = comment
        self.fake.emit(
            repo, req, "issue_comment", "created", number=issue["number"], comment=comment["id"]
        )
        return FakeResponse(201, self.json.comment(repo, comment))

    @route("GET", "{repo}/issues/comments")
    def list_repo_comments(self, req: FakeRequest) -> FakeResponse:
        """Every issue and PR comment of the repository, as GitHub lists them: by ascending
        id unless ``sort`` (``created`` or ``updated``) is given, when ``direction`` (default
        ``desc``) applies; ``since`` keeps those updated at or after that time."""
        repo = self.repo(req)
        comments = sorted(repo.comments.values(), key=lambda c: c["id"])
        since = req.query.get("since")
        if since:
            comments = [c for c in comments if c["updated_at"] >= _github_time(since)]
        sort = req.query.get("sort")
        if sort in ("created", "updated"):
            desc = req.query.get("direction", "desc") == "desc"
            comments.sort(key=lambda c: (c[f"{sort}_at"], c["id"]), reverse=desc)
        return self.paginate(req, [self.json.comment(repo, c) for c in comments])

    @route("DELETE", "{repo}/issues/comments/{cid:int}")
    def delete_comment(self, req: FakeRequest) -> FakeResponse:
        """Delete a comment (its author, or a writer): 204; 404 when it is gone."""
        repo = self.repo(req)
        comment = repo.comments.get(req.number("cid"))
        if comment is None:
            raise HttpError(404, "Not Found")
        if comment["user"] != req.login:
            self.need(repo, req, "write", "issues|pull-requests")
        else:
            self.need(repo, req, "read", "issues|pull-requests")
        del repo.comments[comment["id"]]
        self.fake.emit(repo, req, "issue_comment", "deleted", number=comment["issue"])
        return FakeResponse(204)

    @route("GET", "{repo}/issues/comments/{cid:int}")
    def get_comment(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        comment = repo.comments.get(req.number("cid"))
        if comment is None:
            raise HttpError(404, "Not Found")
        return FakeResponse(200, self.json.comment(repo, comment))

    @route("POST", "{repo}/issues/comments/{cid:int}/reactions")
    def react(self, req: FakeRequest) -> FakeResponse:
        """A reaction (``+1``, ``eyes`` ...): 201 when new, 200 when the user already gave it."""
        repo = self.repo(req)
        comment = repo.comments.get(req.number("cid"))
        if comment is None:
            raise HttpError(404, "Not Found")
        login = self.need(repo, req, "read", "issues|pull-requests")
        content = req.data.get("content")
        if content not in ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"):
            raise validation_failed({"field": "content", "code": "invalid"})
        reactions = comment.setdefault("reactions", [])
        status = 200 if (login, content) in reactions else 201
        if status == 201:
            reactions.append((login, content))
        return FakeResponse(status, {"id": len(reactions), "content": content,
                                     "user": self.json.user(login)})  # fmt: skip

    @route("PATCH", "{repo}/issues/comments/{cid:int}")
    def edit_comment(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        comment = repo.comments.get(req.number("cid"))
        if comment is None:
            raise HttpError(404, "Not Found")
        if comment["user"] != req.login:
            self.need(repo, req, "write", "issues|pull-requests")
        comment["body"] = req.data.get("body", comment["body"])
        comment["updated_at"] = now()
        self.fake.emit(
            repo, req, "issue_comment", "edited", number=comment["issue"], comment=comment["id"]
        )
        return FakeResponse(200, self.json.comment(repo, comment))

    # -- labels ----------------------------------------------------------------------------

    @route("GET", "{repo}/issues/{num:int}/labels")
    def issue_labels(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        return FakeResponse(200, self.json.labels(repo, self.issue(repo, req)))

    @route("POST", "{repo}/issues/{num:int}/labels")
    def add_labels(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        issue = self.issue(repo, req)
        self.need(repo, req, "triage", _scope(issue))
        names = req.body.get("labels", []) if isinstance(req.body, dict) else req.body
        if not isinstance(names, list):
            raise HttpError(422, "Validation Failed")
        for label in names:
            name = label["name"] if isinstance(label, dict) else str(label)
            if name not in issue["labels"]:
                issue["labels"].append(name)
                self._labeled(repo, req, issue, "labeled", name)
        issue["updated_at"] = now()
        return FakeResponse(200, self.json.labels(repo, issue))

    @route("DELETE", "{repo}/issues/{num:int}/labels/{label}")
    def remove_label(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        issue = self.issue(repo, req)
        self.need(repo, req, "triage", _scope(issue))
        if req.params["label"] not in issue["labels"]:
            raise HttpError(404, "Label does not exist")
        issue["labels"].remove(req.params["label"])
        self._labeled(repo, req, issue, "unlabeled", req.params["label"])
        issue["updated_at"] = now()
        return FakeResponse(200, self.json.labels(repo, issue))

    def _labeled(
        self, repo: FakeRepo, req: FakeRequest, issue: dict[str, Any], act: str, label: str
    ) -> None:
        self.fake.emit(repo, req, _event(issue), act, number=issue["number"], label=label)
        actor = req.identity.login if req.identity is not None else repo.owner
        self.fake.record_issue_event(repo, issue["number"], act, actor, label)

    @route("GET", "{repo}/issues/{num:int}/events")
    def issue_events(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        number = self.issue(repo, req)["number"]
        items = [
            {
                "id": e["id"],
                "node_id": node_id("LE", e["id"]),
                "url": f"{self.fake.api_url}/repos/{repo.full_name}/issues/events/{e['id']}",
                "event": e["event"],
                "actor": self.json.user(e["actor"]),
                "label": {"name": e["label"], "color": "ededed"},
                "commit_id": None,
                "commit_url": None,
                "created_at": e["created_at"],
            }
            for e in repo.issue_events
            if e["issue"] == number
        ]
        return self.paginate(req, items)

    @route("GET", "{repo}/labels")
    def list_labels(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        return self.paginate(req, [self.json.label(repo, n) for n in sorted(repo.labels)])

    @route("POST", "{repo}/labels")
    def create_label(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        self.need(repo, req, "write", "issues|pull-requests")
        name = str(req.data.get("name", ""))
        if not name:
            raise HttpError(422, "Validation Failed")
        if name in repo.labels:
            raise validation_failed(
                {"resource": "Label", "code": "already_exists", "field": "name"}
            )
        label = self.fake.ensure_label(repo, name)
        label["color"] = str(req.data.get("color", "ededed"))
        label["description"] = req.data.get("description")
        return FakeResponse(201, self.json.label(repo, name))

    @route("GET", "{repo}/labels/{label}")
    def get_label(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        if req.params["label"] not in repo.labels:
            raise HttpError(404, "Not Found")
        return FakeResponse(200, self.json.label(repo, req.params["label"]))
