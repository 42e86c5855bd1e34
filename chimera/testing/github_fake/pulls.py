"""Pull requests: create, list, update (close, reopen), reviewers, reviews, merge refusal."""

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
from chimera.testing.github_fake.state import FakeRepo, TokenKind, issue_record, now

# GitHub's answers while "Allow GitHub Actions to create and approve pull requests" is off.
ACTIONS_MAY_NOT_CREATE = "GitHub Actions is not permitted to create or approve pull requests."
ACTIONS_MAY_NOT_APPROVE = "GitHub Actions is not permitted to approve pull requests."
_CREATE_DOCS = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
_REVIEW_DOCS = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
_REVIEW_STATE = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}


def _actions_blocked(repo: FakeRepo, req: FakeRequest) -> bool:
    who = req.identity
    return (
        who is not None and who.kind is TokenKind.WORKFLOW and not repo.allow_actions_pull_requests
    )


class Pulls(Resource):
    @route("GET", "{repo}/pulls")
    def list_pulls(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        state = req.query.get("state", "open")
        items = [p for p in repo.pulls() if state == "all" or p["state"] == state]
        if "head" in req.query:
            head_owner, _, head_ref = req.query["head"].partition(":")
            items = [
                p
                for p in items
                if head_owner == p.get("head_owner", repo.owner) and p["head"] == head_ref
            ]
        if "base" in req.query:
            items = [p for p in items if p["base"] == req.query["base"]]
        reverse = req.query.get("direction", "desc") == "desc"
        items.sort(key=lambda p: p["number"], reverse=reverse)
        return self.paginate(req, [self.json.pull(repo, p) for p in items])

    @route("POST", "{repo}/pulls")
    def create_pull(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        login = self.need(repo, req, "write", "pull-requests")
        if _actions_blocked(repo, req):
            raise HttpError(403, ACTIONS_MAY_NOT_CREATE, docs=_CREATE_DOCS)
        data = req.data
        head = str(data.get("head", "")).split(":")[-1]
        base = str(data.get("base", repo.default_branch))
        if not head or not data.get("title"):
            raise validation_failed({"resource": "PullRequest", "code": "missing_field"})
        if repo.remote is not None and repo.head_sha(head) is None:
            raise validation_failed({"resource": "PullRequest", "field": "head", "code": "invalid"})
        if any(p["head"] == head and p["base"] == base for p in repo.own_open_pulls()):
            message = f"A pull request already exists for {repo.owner}:{head}."
            raise validation_failed(
                {"resource": "PullRequest", "code": "custom", "message": message}
            )
        num = self.fake.next_number(repo)
        body = data.get("body") or ""
        pull = issue_record(num, self.fake.new_id(), title=data["title"], body=body, user=login)
        pull |= {
            "is_pull": True,
            "head": head,
            "base": base,
            "draft": bool(data.get("draft", False)),
            "requested_reviewers": [],
            "head_sha": repo.head_sha(head),
            "auto_merge": None,
            "in_merge_queue": False,
        }
        repo.issues[num] = pull
        self._emit(repo, req, pull, "opened")
        return FakeResponse(201, self.json.pull(repo, pull))

    def _emit(self, repo: FakeRepo, req: FakeRequest, pull: dict[str, Any], action: str) -> None:
        sha = self.fake.pull_head_sha(repo, pull)
        self.fake.emit(
            repo, req, "pull_request", action, number=pull["number"], ref=pull["head"], sha=sha
        )

    @route("GET", "{repo}/pulls/{num:int}")
    def get_pull(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        return FakeResponse(200, self.json.pull(repo, self.pull(repo, req)))

    @route("PATCH", "{repo}/pulls/{num:int}")
    def patch_pull(self, req: FakeRequest) -> FakeResponse:
        """Edit title, body, base; ``state`` closes or reopens (``closed``/``reopened``)."""
        repo = self.repo(req)
        self.need(repo, req, "write", "pull-requests")
        pull = self.pull(repo, req)
        data = req.data
        state = data.get("state", pull["state"])
        if state == "open" and pull["state"] == "closed":
            self._check_reopen(repo, pull)
        edited = [k for k in ("title", "body", "base") if k in data and data[k] != pull[k]]
        for key in edited:
            pull[key] = data[key]
        if edited:
            self._emit(repo, req, pull, "edited")
        if state != pull["state"] and state in ("open", "closed"):
            if state == "closed":
                self.fake.pull_head_sha(repo, pull)  # remember the head it was closed at
            pull["state"] = state
            pull["closed_at"] = now() if state == "closed" else None
            self._emit(repo, req, pull, "closed" if state == "closed" else "reopened")
        pull["updated_at"] = now()
        return FakeResponse(200, self.json.pull(repo, pull))

    def _check_reopen(self, repo: FakeRepo, pull: dict[str, Any]) -> None:
        if pull.get("merged_at"):
            raise HttpError(422, "Cannot reopen a merged pull request")
        if repo.remote is not None and repo.head_sha(pull["head"]) is None:
            raise validation_failed(
                {"resource": "PullRequest", "code": "custom", "message": "head branch was deleted"}
            )
        if any(o["head"] == pull["head"] and o is not pull for o in repo.own_open_pulls()):
            raise HttpError(422, "Validation Failed")

    @route("PUT", "{repo}/pulls/{num:int}/merge")
    def merge_pull(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        repo.merge_attempts.append({"pull": req.number(), "by": req.login, "via": "rest"})
        raise HttpError(405, "Base branch requires review; merging is refused by the fake")

    @route("POST", "{repo}/pulls/{num:int}/requested_reviewers")
    def request_reviewers(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        self.need(repo, req, "write", "pull-requests")
        pull = self.pull(repo, req)
        for user in req.data.get("reviewers", []):
            if user not in self.fake.users:
                raise HttpError(422, "Reviews may only be requested from collaborators.")
            if user == pull["user"]:
                raise HttpError(422, "Review cannot be requested from pull request author.")
            if user not in pull["requested_reviewers"]:
                pull["requested_reviewers"].append(user)
        return FakeResponse(201, self.json.pull(repo, pull))

    @route("GET", "{repo}/pulls/{num:int}/requested_reviewers")
    def get_requested_reviewers(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        pull = self.pull(repo, req)
        users = [self.json.user(u) for u in pull["requested_reviewers"]]
        return FakeResponse(200, {"users": users, "teams": []})

    @route("GET", "{repo}/pulls/{num:int}/reviews")
    def list_reviews(self, req: FakeRequest) -> FakeResponse:
        """Every review, oldest first, each with the ``commit_id`` it reviewed."""
        repo = self.repo(req)
        num = self.pull(repo, req)["number"]
        reviews = repo.reviews.get(num, [])
        return self.paginate(req, [self.json.review(repo, num, r) for r in reviews])

    @route("POST", "{repo}/pulls/{num:int}/reviews")
    def create_review(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        pull = self.pull(repo, req)
        login = self.need(repo, req, "read", "pull-requests")
        state = _REVIEW_STATE.get(str(req.data.get("event", "COMMENT")), "COMMENTED")
        if state == "APPROVED" and _actions_blocked(repo, req):
            raise HttpError(
                422, "Unprocessable Entity", docs=_REVIEW_DOCS, errors=[ACTIONS_MAY_NOT_APPROVE]
            )
        if login == pull["user"] and state != "COMMENTED":
            raise HttpError(422, "Can not approve your own pull request")
        review = {
            "id": self.fake.new_id(),
            "user": login,
            "state": state,
            "body": req.data.get("body", ""),
            "commit_id": req.data.get("commit_id") or self.fake.pull_head_sha(repo, pull),
            "submitted_at": now(),
            "comments": [
                {"id": self.fake.new_id(), "path": str(c.get("path", "")),
                 "line": c.get("line") or c.get("position"), "body": str(c.get("body", ""))}
                for c in req.data.get("comments") or []
                if isinstance(c, dict)
            ],
        }  # fmt: skip
        repo.reviews.setdefault(pull["number"], []).append(review)
        self.fake.emit(
            repo, req, "pull_request_review", "submitted",
            number=pull["number"], ref=pull["head"], sha=review["commit_id"],
            review=review["id"],
        )  # fmt: skip
        return FakeResponse(200, self.json.review(repo, pull["number"], review))

    @route("GET", "{repo}/pulls/{num:int}/reviews/{rid:int}/comments")
    def review_comments(self, req: FakeRequest) -> FakeResponse:
        """A review's inline comments (``path``, ``line``, ``body``), oldest first."""
        repo = self.repo(req)
        num = self.pull(repo, req)["number"]
        for review in repo.reviews.get(num, []):
            if review["id"] == req.number("rid"):
                items = [
                    {
                        "id": c["id"],
                        "pull_request_review_id": review["id"],
                        "path": c["path"],
                        "line": c["line"],
                        "original_line": c["line"],
                        "side": "RIGHT",
                        "body": c["body"],
                        "commit_id": review["commit_id"],
                        "user": self.json.user(review["user"]),
                    }
                    for c in review.get("comments", [])
                ]
                return self.paginate(req, items)
        raise HttpError(404, "Not Found")
