"""Users, repositories, collaborator permissions, branches, protection and branch rules."""

from __future__ import annotations

from chimera.testing.github_fake.routing import (
    FakeRequest,
    FakeResponse,
    HttpError,
    Resource,
    route,
)
from chimera.testing.github_fake.state import LEGACY_PERMISSION, ROLE_RANK


def _permissions(role: str) -> dict[str, bool]:
    rank = ROLE_RANK[role]
    return {
        "admin": rank >= 5,
        "maintain": rank >= 4,
        "push": rank >= 3,
        "triage": rank >= 2,
        "pull": rank >= 1,
    }


class Repos(Resource):
    @route("GET", "/user")
    def get_self(self, req: FakeRequest) -> FakeResponse:
        who = req.identity
        if who is None:
            raise HttpError(401, "Requires authentication")
        if self.fake.users[who.login]["type"] == "Bot":
            # Installation tokens and the GITHUB_TOKEN cannot read /user.
            raise HttpError(403, "Resource not accessible by integration")
        return FakeResponse(200, self.json.full_user(who.login))

    @route("GET", "/users/{who}")
    def get_user(self, req: FakeRequest) -> FakeResponse:
        if req.params["who"] not in self.fake.users:
            raise HttpError(404, "Not Found")
        return FakeResponse(200, self.json.full_user(req.params["who"]))

    @route("GET", "{repo}")
    def get_repo(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        out = self.json.repo(repo)
        if req.login is not None:
            out["permissions"] = _permissions(self.role(repo, req.login))
        return FakeResponse(200, out)

    @route("GET", "{repo}/collaborators/{who}/permission")
    def permission(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        if req.login is None:
            raise HttpError(401, "Requires authentication")
        who = req.params["who"]
        if who not in self.fake.users:
            raise HttpError(404, "Not Found")
        role = self.role(repo, who)
        user = self.json.user(who) | {"permissions": _permissions(role), "role_name": role}
        return FakeResponse(
            200, {"permission": LEGACY_PERMISSION[role], "role_name": role, "user": user}
        )

    # Declared before the branch route: a branch name may contain slashes.
    @route("GET", "{repo}/branches/{branch:path}/protection")
    def protection(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        self.need(repo, req, "admin")
        branch = req.params["branch"]
        if branch not in repo.protection:
            raise HttpError(404, "Branch not protected")
        url = f"{self.fake.api_url}/repos/{repo.full_name}/branches/{branch}/protection"
        out = {"url": url, "name": branch, "protection_url": url} | repo.protection[branch]
        checks = out.get("required_status_checks")
        if isinstance(checks, dict):
            extra = {"url": f"{url}/required_status_checks"}
            extra["contexts_url"] = f"{extra['url']}/contexts"
            out["required_status_checks"] = extra | checks
        for key in ("enforce_admins",):
            if isinstance(out.get(key), dict):
                out[key] = {"url": f"{url}/{key}"} | out[key]
        return FakeResponse(200, out)

    @route("GET", "{repo}/branches/{branch:path}")
    def get_branch(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        branch = req.params["branch"]
        sha = repo.head_sha(branch)
        if sha is None:
            raise HttpError(404, "Branch not found")
        api = f"{self.fake.api_url}/repos/{repo.full_name}"
        return FakeResponse(
            200,
            {
                "name": branch,
                "commit": {"sha": sha, "url": f"{api}/commits/{sha}"},
                "protected": branch in repo.protection,
                "_links": {
                    "self": f"{api}/branches/{branch}",
                    "html": f"{self.fake.web_url}/{repo.full_name}/tree/{branch}",
                },
                "protection_url": f"{api}/branches/{branch}/protection",
            },
        )

    @route("GET", "{repo}/rules/branches/{branch:path}")
    def branch_rules(self, req: FakeRequest) -> FakeResponse:
        repo = self.repo(req)
        source = {"ruleset_source_type": "Repository", "ruleset_source": repo.full_name}
        rules = [source | {"ruleset_id": 1} | r for r in repo.rules.get(req.params["branch"], [])]
        return FakeResponse(200, rules)
