"""JSON payloads in the shapes of GitHub's OpenAPI description (users, repositories, issues,
labels, comments, pull requests, reviews).

``tests/data/github/openapi-subset.json`` holds the response schemas of the served operations;
a test validates the fake's answers against them, so a field added here keeps that shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chimera.testing.github_fake.state import FakeRepo, node_id, now

if TYPE_CHECKING:
    from chimera.testing.github_fake.server import GitHubFake

# The repository fields that are only URLs below the repository's API URL.
_REPO_URL_KEYS = (
    "archive",
    "assignees",
    "blobs",
    "branches",
    "collaborators",
    "comments",
    "commits",
    "compare",
    "contents",
    "contributors",
    "deployments",
    "downloads",
    "events",
    "forks",
    "git_commits",
    "git_refs",
    "git_tags",
    "issue_comment",
    "issue_events",
    "issues",
    "keys",
    "labels",
    "languages",
    "merges",
    "milestones",
    "notifications",
    "pulls",
    "releases",
    "stargazers",
    "statuses",
    "subscribers",
    "subscription",
    "tags",
    "teams",
    "trees",
    "hooks",
)


class Payloads:
    """Builds the fake's JSON answers from its state (reads ``fake.api_url``/``web_url``)."""

    def __init__(self, fake: GitHubFake) -> None:
        self.fake = fake

    def _api(self, repo: FakeRepo) -> str:
        return f"{self.fake.api_url}/repos/{repo.full_name}"

    def _web(self, repo: FakeRepo) -> str:
        return f"{self.fake.web_url}/{repo.full_name}"

    def user(self, login: str) -> dict[str, Any]:
        """A ``simple-user`` (the user is created when unknown, as a ``User``)."""
        user = self.fake.add_user(login)
        base = f"{self.fake.api_url}/users/{login}"
        return {
            "login": login,
            "id": user["id"],
            "node_id": node_id("U", user["id"]),
            "avatar_url": f"{self.fake.web_url}/avatars/{login}",
            "gravatar_id": "",
            "url": base,
            "html_url": f"{self.fake.web_url}/{login}",
            "followers_url": f"{base}/followers",
            "following_url": f"{base}/following{{/other_user}}",
            "gists_url": f"{base}/gists{{/gist_id}}",
            "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{base}/subscriptions",
            "organizations_url": f"{base}/orgs",
            "repos_url": f"{base}/repos",
            "events_url": f"{base}/events{{/privacy}}",
            "received_events_url": f"{base}/received_events",
            "type": user["type"],
            "site_admin": False,
        }

    def full_user(self, login: str) -> dict[str, Any]:
        """A ``public-user`` (``GET /user``, ``GET /users/{login}``)."""
        return self.user(login) | {
            "user_view_type": "public",
            "name": None,
            "company": None,
            "blog": "",
            "location": None,
            "email": None,
            "hireable": None,
            "bio": None,
            "public_repos": 0,
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        }

    def repo(self, repo: FakeRepo) -> dict[str, Any]:
        """A ``full-repository`` (without ``permissions``, which depend on the caller)."""
        base = self._api(repo)
        open_count = sum(1 for i in repo.issues.values() if i["state"] == "open")
        out: dict[str, Any] = {
            "id": repo.id,
            "node_id": node_id("R", repo.id),
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "owner": self.user(repo.owner),
            "html_url": self._web(repo),
            "description": None,
            "fork": False,
            "url": base,
            "default_branch": repo.default_branch,
            "visibility": "private" if repo.private else "public",
            "archived": False,
            "disabled": False,
            "allow_auto_merge": True,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": now(),
            "pushed_at": now(),
        }
        out |= {f"{key}_url": f"{base}/{key}" for key in _REPO_URL_KEYS}
        return out | {
            "git_url": f"git://127.0.0.1/{repo.full_name}.git",
            "ssh_url": f"git@127.0.0.1:{repo.full_name}.git",
            "clone_url": str(repo.remote) if repo.remote else f"{self._web(repo)}.git",
            "svn_url": self._web(repo),
            "homepage": None,
            "mirror_url": None,
            "language": "Python",
            "forks_count": 0,
            "stargazers_count": 0,
            "watchers_count": 0,
            "size": 1,
            "open_issues_count": open_count,
            "is_template": False,
            "topics": [],
            "has_issues": True,
            "has_projects": True,
            "has_wiki": True,
            "has_pages": False,
            "has_downloads": True,
            "has_discussions": False,
            "network_count": 0,
            "subscribers_count": 0,
            "forks": 0,
            "open_issues": open_count,
            "watchers": 0,
            "license": None,
        }

    def label(self, repo: FakeRepo, name: str) -> dict[str, Any]:
        label = self.fake.ensure_label(repo, name)
        return {
            "id": label["id"],
            "node_id": node_id("L", label["id"]),
            "url": f"{self._api(repo)}/labels/{name}",
            "name": name,
            "color": label["color"],
            "default": False,
            "description": label["description"],
        }

    def labels(self, repo: FakeRepo, issue: dict[str, Any]) -> list[dict[str, Any]]:
        return [self.label(repo, n) for n in issue["labels"]]

    def issue(self, repo: FakeRepo, issue: dict[str, Any]) -> dict[str, Any]:
        """An ``issue`` (a pull request's issue side carries ``pull_request`` and ``draft``)."""
        base, num = self._api(repo), issue["number"]
        out: dict[str, Any] = {
            "id": issue["id"],
            "node_id": node_id("I", issue["id"]),
            "url": f"{base}/issues/{num}",
            "repository_url": base,
            "labels_url": f"{base}/issues/{num}/labels{{/name}}",
            "comments_url": f"{base}/issues/{num}/comments",
            "events_url": f"{base}/issues/{num}/events",
            "html_url": f"{self._web(repo)}/issues/{num}",
            "number": num,
            "state": issue["state"],
            "state_reason": None,
            "title": issue["title"],
            "body": issue["body"],
            "user": self.user(issue["user"]),
            "labels": self.labels(repo, issue),
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "locked": issue["locked"],
            "active_lock_reason": None,
            "comments": len(repo.issue_comments(num)),
            "closed_at": issue["closed_at"],
            "created_at": issue["created_at"],
            "updated_at": issue["updated_at"],
            "author_association": "OWNER" if issue["user"] == repo.owner else "CONTRIBUTOR",
        }
        if issue.get("is_pull"):
            html = f"{self._web(repo)}/pull/{num}"
            out["pull_request"] = {
                "url": f"{base}/pulls/{num}",
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "merged_at": issue.get("merged_at"),
            }
            out["draft"] = issue["draft"]
        return out

    def _branch_ref(
        self, repo: FakeRepo, ref: str, sha: str, owner: str | None = None
    ) -> dict[str, Any]:
        if owner is not None and owner != repo.owner:  # a fork's branch
            fork = self.repo(repo) | {"full_name": f"{owner}/{repo.name}", "fork": True}
            fork["owner"] = self.user(owner)
            return {"label": f"{owner}:{ref}", "ref": ref, "sha": sha,
                    "user": self.user(owner), "repo": fork}  # fmt: skip
        return {
            "label": f"{repo.owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self.user(repo.owner),
            "repo": self.repo(repo),
        }

    def pull(self, repo: FakeRepo, pull: dict[str, Any]) -> dict[str, Any]:
        """A ``pull-request``; the head commit is read from the remote while the PR is open."""
        base, num = self._api(repo), pull["number"]
        sha = self.fake.pull_head_sha(repo, pull)
        html = f"{self._web(repo)}/pull/{num}"
        links = {
            "self": f"{base}/pulls/{num}",
            "html": html,
            "issue": f"{base}/issues/{num}",
            "comments": f"{base}/issues/{num}/comments",
            "review_comments": f"{base}/pulls/{num}/comments",
            "review_comment": f"{base}/pulls/comments{{/number}}",
            "commits": f"{base}/pulls/{num}/commits",
            "statuses": f"{base}/statuses/{sha}",
        }
        return {
            "url": links["self"],
            "id": pull["id"],
            "node_id": node_id("PR", num),
            "html_url": html,
            "diff_url": html + ".diff",
            "patch_url": html + ".patch",
            "issue_url": links["issue"],
            "commits_url": links["commits"],
            "review_comments_url": links["review_comments"],
            "review_comment_url": links["review_comment"],
            "comments_url": links["comments"],
            "statuses_url": links["statuses"],
            "number": num,
            "state": pull["state"],
            "locked": False,
            "title": pull["title"],
            "user": self.user(pull["user"]),
            "body": pull["body"],
            "labels": self.labels(repo, pull),
            "milestone": None,
            "active_lock_reason": None,
            "created_at": pull["created_at"],
            "updated_at": pull["updated_at"],
            "closed_at": pull["closed_at"],
            "merged_at": pull.get("merged_at"),
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [self.user(u) for u in pull["requested_reviewers"]],
            "requested_teams": [],
            "head": self._branch_ref(repo, pull["head"], sha, pull.get("head_owner")),
            "base": self._branch_ref(repo, pull["base"], repo.head_sha(pull["base"]) or "0" * 40),
            "_links": {key: {"href": href} for key, href in links.items()},
            "author_association": "CONTRIBUTOR",
            "auto_merge": pull.get("auto_merge"),
            "draft": pull["draft"],
            "merged": bool(pull.get("merged_at")),
            "mergeable": True,
            "rebaseable": True,
            "mergeable_state": "clean",
            "merged_by": None,
            "comments": len(repo.issue_comments(num)),
            "review_comments": 0,
            "maintainer_can_modify": False,
            "commits": 1,
            "additions": 1,
            "deletions": 0,
            "changed_files": 1,
        }

    def comment(self, repo: FakeRepo, comment: dict[str, Any]) -> dict[str, Any]:
        base, cid, num = self._api(repo), comment["id"], comment["issue"]
        return {
            "id": cid,
            "node_id": node_id("IC", cid),
            "url": f"{base}/issues/comments/{cid}",
            "html_url": f"{self._web(repo)}/issues/{num}#issuecomment-{cid}",
            "body": comment["body"],
            "user": self.user(comment["user"]),
            "created_at": comment["created_at"],
            "updated_at": comment["updated_at"],
            "issue_url": f"{base}/issues/{num}",
            "author_association": "NONE",
        }

    def review(self, repo: FakeRepo, num: int, review: dict[str, Any]) -> dict[str, Any]:
        api = f"{self._api(repo)}/pulls/{num}"
        html = f"{self._web(repo)}/pull/{num}"
        return {
            "id": review["id"],
            "node_id": node_id("PRR", review["id"]),
            "user": self.user(review["user"]),
            "body": review["body"],
            "state": review["state"],
            "html_url": f"{html}#pullrequestreview-{review['id']}",
            "pull_request_url": api,
            "_links": {"html": {"href": html}, "pull_request": {"href": api}},
            "submitted_at": review["submitted_at"],
            "commit_id": review["commit_id"],
            "author_association": "COLLABORATOR",
        }
