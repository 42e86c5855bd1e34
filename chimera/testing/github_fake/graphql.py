"""The GraphQL calls Chimera sends: auto-merge, merge queue, draft state, merge refusal, and
``createCommitOnBranch`` (:mod:`.gitdata`).

GraphQL answers 200 with an ``errors`` list for every failure but a missing token.
"""

from __future__ import annotations

import re
from typing import Any

from chimera.testing.github_fake.gitdata import create_commit_on_branch
from chimera.testing.github_fake.routing import (
    FakeRequest,
    FakeResponse,
    HttpError,
    Resource,
    route,
)
from chimera.testing.github_fake.state import ROLE_RANK, FakeRepo, node_id

_MUTATION = re.compile(
    r"\b(enablePullRequestAutoMerge|enqueuePullRequest|markPullRequestReadyForReview"
    r"|convertPullRequestToDraft|mergePullRequest|createCommitOnBranch)\b"
)


def _errors(message: str, kind: str | None = None) -> FakeResponse:
    error = {"message": message} | ({"type": kind} if kind else {})
    return FakeResponse(200, {"data": None, "errors": [error]})


class _NotFound(Exception):
    def __init__(self, node: str) -> None:
        super().__init__(node)
        self.errors = [
            {
                "type": "NOT_FOUND",
                "message": f"Could not resolve to a node with the global id of '{node}'",
            }
        ]


class GraphQL(Resource):
    def _find(self, node: str) -> tuple[FakeRepo, dict[str, Any]]:
        for repo in self.fake.repos.values():
            for pull in repo.pulls():
                if node_id("PR", pull["number"]) == node:
                    return repo, pull
        raise _NotFound(node)

    @route("POST", "/graphql")
    def graphql(self, req: FakeRequest) -> FakeResponse:
        if req.identity is None:
            raise HttpError(401, "Requires authentication")
        text = str(req.data.get("query", ""))
        variables = req.data.get("variables") or {}
        mutation = _MUTATION.search(text)
        if mutation is None:
            return self._query(text, variables)
        inp = variables.get("input") or {}
        if mutation.group(1) == "createCommitOnBranch":
            return create_commit_on_branch(self, req, inp)
        try:
            repo, pull = self._find(str(inp.get("pullRequestId", "")))
        except _NotFound as exc:
            return FakeResponse(200, {"data": None, "errors": exc.errors})
        who = req.identity
        writable = ROLE_RANK[self.role(repo, who.login)] >= ROLE_RANK["write"]
        if not writable or not who.allows("pull-requests"):
            return _errors("Resource not accessible by integration", "FORBIDDEN")
        return self._mutate(mutation.group(1), repo, pull, req, inp)

    def _query(self, text: str, variables: dict[str, Any]) -> FakeResponse:
        if "mergeQueueEntry" not in text or "node(" not in text:
            return FakeResponse(
                200,
                {"errors": [{"message": "the fake serves only the GraphQL calls Chimera uses"}]},
            )
        try:
            _repo, pull = self._find(str(variables.get("id", "")))
        except _NotFound as exc:
            return FakeResponse(200, {"data": {"node": None}, "errors": exc.errors})
        entry = {"id": f"MQE_{pull['number']}"} if pull.get("in_merge_queue") else None
        return FakeResponse(200, {"data": {"node": {"mergeQueueEntry": entry}}})

    def _mutate(
        self,
        name: str,
        repo: FakeRepo,
        pull: dict[str, Any],
        req: FakeRequest,
        inp: dict[str, Any],
    ) -> FakeResponse:
        login = req.login
        if name == "mergePullRequest":
            repo.merge_attempts.append({"pull": pull["number"], "by": login, "via": "graphql"})
            return _errors("merging is refused by the fake")
        if name in ("markPullRequestReadyForReview", "convertPullRequestToDraft"):
            draft = name == "convertPullRequestToDraft"
            if pull["draft"] != draft:
                pull["draft"] = draft
                action = "converted_to_draft" if draft else "ready_for_review"
                self.fake.emit(repo, req, "pull_request", action, number=pull["number"])
            out: dict[str, Any] = {"clientMutationId": None, "pullRequest": {"isDraft": draft}}
            return FakeResponse(200, {"data": {name: out}})
        expected = inp.get("expectedHeadOid")
        if expected and expected != self.fake.pull_head_sha(repo, pull):
            return _errors("head commit moved")
        if pull["draft"]:
            return _errors("Pull request is in draft state")
        if name == "enqueuePullRequest":
            if not any(r.get("type") == "merge_queue" for r in repo.rules.get(pull["base"], [])):
                return _errors("The base branch does not use a merge queue")
            pull["in_merge_queue"] = True
            entry = {"id": f"MQE_{pull['number']}", "position": 1}
            out = {"clientMutationId": None, "mergeQueueEntry": entry}
            return FakeResponse(200, {"data": {name: out}})
        assert login is not None
        user = self.json.user(login)
        pull["auto_merge"] = {
            "enabled_by": user,
            "merge_method": str(inp.get("mergeMethod", "MERGE")).lower(),
            "commit_title": None,
            "commit_message": None,
        }
        self.fake.emit(repo, req, "pull_request", "auto_merge_enabled", number=pull["number"])
        actor = {
            "avatarUrl": user["avatar_url"],
            "login": login,
            "resourcePath": f"/{login}",
            "url": user["html_url"],
        }
        return FakeResponse(200, {"data": {name: {"clientMutationId": None, "actor": actor}}})
