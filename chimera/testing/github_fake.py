"""A local, stateful fake of the GitHub REST API (and the GraphQL mutations Chimera sends).

It runs on ``127.0.0.1`` (an ephemeral port) in background threads and is reached through the
real PyGithub client (``base_url=fake.api_url``), so tests exercise the same HTTP requests,
pagination and error mapping as production. Payloads follow the shapes of GitHub's published
OpenAPI description (``tests/data/github/openapi-subset.json`` holds the schemas of the
endpoints served here; a test validates the fake's answers against them).

What it models:

* repositories with issues (pull requests share their number space, as on GitHub), labels
  (created on first use, like the real API), comments, collaborator permissions, users (``User``
  or ``Bot``), tokens (``Authorization: token T`` maps to a login; writes need ``write``);
* pull requests: create (422 for a second open PR from the same head, like GitHub), list by
  ``head``/``base``/``state``, update, draft, requested reviewers, reviews, a head commit read
  from a local bare git repository (the remote) when one is attached;
* branch rules (``merge_queue``), branch protection, workflow dispatches, run artifacts (zip);
* GraphQL: ``enablePullRequestAutoMerge``, ``enqueuePullRequest``,
  ``markPullRequestReadyForReview``; a ``mergePullRequest`` mutation or ``PUT .../merge`` is
  recorded as a merge attempt and refused (Chimera must never merge);
* faults, consumed in order: an HTTP status (500, secondary rate limit 403/429 with
  ``retry-after``), optionally *after* the write happened (the reply is lost, the change is
  not), and delays (client timeouts);
* a record of every request (method, path, status, acting login).

Example::

    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=bare_repo_path)
        fake.add_user("alice"); repo.collaborators["alice"] = "write"
        gh = github.Github(auth=github.Auth.Token(fake.add_token("alice")),
                           base_url=fake.api_url, retry=None,
                           seconds_between_requests=None, seconds_between_writes=None)
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import re
import subprocess
import threading
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from chimera.testing._server import LocalServer

__all__ = ["FakeFault", "FakeRepo", "GitHubFake", "RecordedCall", "make_bare_remote"]

ROLE_RANK = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}
# The REST permission endpoint folds roles into these legacy levels (GitHub does the same).
_LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}
SECONDARY_RATE_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node_id(kind: str, number: int) -> str:
    return base64.b64encode(f"0:{kind}{number}".encode()).decode().rstrip("=")


@dataclass
class FakeFault:
    """One injected fault, consumed by the first request it matches.

    Attributes:
        method: HTTP method to match (``"*"`` for any).
        path: a regular expression searched in the request path (``/graphql`` included).
        status: the status to answer (``None``: only the delay applies).
        retry_after: seconds, sent as ``Retry-After``.
        delay: seconds to wait before answering (client timeouts).
        after_write: perform the request first, then answer with ``status`` (a lost reply).
        secondary_rate_limit: answer with GitHub's secondary-rate-limit message.
        times: how many requests it affects.
    """

    method: str = "*"
    path: str = ".*"
    status: int | None = 500
    retry_after: float | None = None
    delay: float = 0.0
    after_write: bool = False
    secondary_rate_limit: bool = False
    times: int = 1

    def matches(self, method: str, path: str) -> bool:
        return (self.method in ("*", method)) and re.search(self.path, path) is not None


@dataclass(frozen=True)
class RecordedCall:
    """One request the fake received."""

    method: str
    path: str
    status: int
    login: str | None
    body: Any


@dataclass
class FakeRepo:
    """The state of one repository (mutate it directly to arrange a test)."""

    owner: str
    name: str
    id: int
    default_branch: str = "main"
    remote: Path | None = None
    private: bool = False
    collaborators: dict[str, str] = field(default_factory=dict)
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    rules: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    protection: dict[str, dict[str, Any]] = field(default_factory=dict)
    dispatches: list[dict[str, Any]] = field(default_factory=list)
    artifacts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    merge_attempts: list[dict[str, Any]] = field(default_factory=list)
    workflows: dict[str, int] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    # -- arranging helpers ---------------------------------------------------------------

    def pulls(self) -> list[dict[str, Any]]:
        """Every pull request (as the fake's internal records)."""
        return [i for i in self.issues.values() if i.get("is_pull")]

    def open_pulls(self) -> list[dict[str, Any]]:
        return [p for p in self.pulls() if p["state"] == "open"]

    def issue_comments(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.comments.values() if c["issue"] == number]

    def head_sha(self, ref: str) -> str | None:
        """The commit ``refs/heads/<ref>`` points at in the remote (``None``: no such branch)."""
        if self.remote is None:
            return None
        proc = subprocess.run(
            [
                "git",
                "--git-dir",
                str(self.remote),
                "rev-parse",
                "--verify",
                "-q",
                f"refs/heads/{ref}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.stdout.strip() or None


class _HttpError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.payload: dict[str, Any] = {
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            **extra,
        }


class _Handler(BaseHTTPRequestHandler):
    @property
    def _owner(self) -> GitHubFake:
        owner: GitHubFake = self.server.owner  # type: ignore[attr-defined]
        return owner

    protocol_version = "HTTP/1.1"
    timeout = 10

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", errors="replace")

    def _send(
        self,
        status: int,
        payload: Any,
        headers: Mapping[str, str] | None = None,
        raw: bytes | None = None,
        content_type: str = "application/json; charset=utf-8",
    ) -> None:
        data = (
            raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
        )
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.send_header("X-RateLimit-Limit", "5000")
            self.send_header("X-RateLimit-Remaining", "4999")
            self.send_header("X-RateLimit-Reset", "9999999999")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _dispatch(self, method: str) -> None:
        fake = self._owner
        body = self._body() if method in ("POST", "PATCH", "PUT", "DELETE") else None
        split = urlsplit(self.path)
        path = split.path
        if path.startswith("/api/v3"):
            path = path[len("/api/v3") :]
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        login = fake._login_for(self.headers.get("Authorization", ""))
        fault = fake._take_fault(method, path)
        if fault is not None and fault.delay > 0 and fake._stopping.wait(fault.delay):
            return
        if fault is not None and fault.status is not None and not fault.after_write:
            self._fault_reply(fault, method, path, login, body)
            return
        try:
            status, payload, headers, raw = fake._route(method, path, query, body, login)
        except _HttpError as exc:
            fake._record(method, path, exc.status, login, body)
            self._send(exc.status, exc.payload)
            return
        except Exception as exc:  # a bug in the fake: answer it, so the test sees it
            fake._record(method, path, 599, login, body)
            fake.internal_errors.append(f"{method} {path}: {type(exc).__name__}: {exc}")
            self._send(599, {"message": f"github fake internal error: {exc}"})
            return
        if fault is not None and fault.status is not None:  # after_write: the reply is lost
            self._fault_reply(fault, method, path, login, body)
            return
        fake._record(method, path, status, login, body)
        if raw is not None:
            self._send(status, None, headers, raw=raw, content_type="application/zip")
        else:
            self._send(status, payload, headers)

    def _fault_reply(
        self, fault: FakeFault, method: str, path: str, login: str | None, body: Any
    ) -> None:
        assert fault.status is not None
        headers: dict[str, str] = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = f"{fault.retry_after:g}"
        message = SECONDARY_RATE_MESSAGE if fault.secondary_rate_limit else "Server Error"
        self._owner._record(method, path, fault.status, login, body)
        self._send(
            fault.status,
            {"message": message, "documentation_url": "https://docs.github.com/rest"},
            headers,
        )

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")


Route = Callable[..., Any]


class GitHubFake(LocalServer):
    """A threaded, stateful GitHub API fake on ``127.0.0.1`` (see the module docstring).

    Use as a context manager, or call :meth:`start` and :meth:`stop`. ``api_url`` is the
    ``base_url`` for PyGithub (GraphQL is served at ``<api_url>/graphql``, which is where
    PyGithub derives it for a non-``/api/v3`` base).
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.repos: dict[str, FakeRepo] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, str] = {}
        self.calls: list[RecordedCall] = []
        self.internal_errors: list[str] = []
        self._faults: list[FakeFault] = []
        self._ids = itertools.count(1000)
        super().__init__()
        self._routes: list[tuple[str, re.Pattern[str], Route]] = []
        self._install_routes()

    handler = _Handler
    thread_name = "github-fake"

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/web"

    # -- arranging -------------------------------------------------------------------------

    def add_user(self, login: str, *, bot: bool = False) -> dict[str, Any]:
        with self._lock:
            if login not in self.users:
                self.users[login] = {
                    "login": login,
                    "id": next(self._ids),
                    "type": "Bot" if bot or login.endswith("[bot]") else "User",
                }
            return self.users[login]

    def add_token(self, login: str, token: str | None = None, *, bot: bool = False) -> str:
        """Register a token acting as ``login`` (created if unknown); returns the token."""
        self.add_user(login, bot=bot)
        token = token or f"tok-{login}-{next(self._ids)}"
        with self._lock:
            self.tokens[token] = login
        return token

    def add_repo(
        self, full_name: str, *, remote: Path | None = None, default_branch: str = "main"
    ) -> FakeRepo:
        owner, name = full_name.split("/", 1)
        self.add_user(owner)
        with self._lock:
            repo = FakeRepo(
                owner=owner,
                name=name,
                id=next(self._ids),
                remote=remote,
                default_branch=default_branch,
            )
            repo.collaborators.setdefault(owner, "admin")
            self.repos[full_name] = repo
            return repo

    def add_issue(
        self,
        full_name: str,
        *,
        title: str,
        body: str = "",
        user: str,
        labels: tuple[str, ...] = (),
        state: str = "open",
        locked: bool = False,
        number: int | None = None,
    ) -> dict[str, Any]:
        repo = self.repos[full_name]
        self.add_user(user)
        with self._lock:
            num = number or self._next_number(repo)
            issue = {
                "number": num,
                "id": next(self._ids),
                "title": title,
                "body": body,
                "user": user,
                "labels": list(labels),
                "state": state,
                "locked": locked,
                "created_at": _now(),
                "updated_at": _now(),
                "closed_at": None,
                "is_pull": False,
            }
            for name in labels:
                self._ensure_label(repo, name)
            repo.issues[num] = issue
            return issue

    def add_review(
        self,
        full_name: str,
        number: int,
        *,
        user: str,
        state: str,
        body: str = "",
        commit_id: str | None = None,
    ) -> dict[str, Any]:
        """Record a review (``APPROVED``, ``CHANGES_REQUESTED``, ``COMMENTED``) on a PR."""
        repo = self.repos[full_name]
        self.add_user(user)
        with self._lock:
            pull = repo.issues[number]
            review = {
                "id": next(self._ids),
                "user": user,
                "state": state,
                "body": body,
                "commit_id": commit_id or self._pull_head_sha(repo, pull),
                "submitted_at": _now(),
            }
            repo.reviews.setdefault(number, []).append(review)
            return review

    def add_artifact(self, full_name: str, run_id: int, name: str, folder: Path) -> int:
        """Store ``folder`` zipped as an artifact of workflow run ``run_id`` (as upload-artifact
        would); returns the artifact id."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    zf.write(path, path.relative_to(folder).as_posix())
        repo = self.repos[full_name]
        with self._lock:
            art_id = next(self._ids)
            repo.artifacts.setdefault(run_id, []).append(
                {"id": art_id, "name": name, "data": buf.getvalue(), "created_at": _now()}
            )
            return art_id

    def inject(self, *faults: FakeFault) -> None:
        """Queue faults; each is consumed by the first ``times`` requests it matches."""
        with self._lock:
            self._faults.extend(faults)

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return sum(f.times for f in self._faults)

    def calls_to(self, method: str, pattern: str) -> list[RecordedCall]:
        with self._lock:
            return [c for c in self.calls if c.method == method and re.search(pattern, c.path)]

    # -- internals -------------------------------------------------------------------------

    def _login_for(self, authorization: str) -> str | None:
        parts = authorization.split()
        if len(parts) == 2 and parts[0].lower() in ("token", "bearer"):
            with self._lock:
                return self.tokens.get(parts[1])
        return None

    def _take_fault(self, method: str, path: str) -> FakeFault | None:
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _record(self, method: str, path: str, status: int, login: str | None, body: Any) -> None:
        with self._lock:
            self.calls.append(RecordedCall(method, path, status, login, body))

    def _next_number(self, repo: FakeRepo) -> int:
        return max(repo.issues, default=0) + 1

    def _ensure_label(self, repo: FakeRepo, name: str) -> dict[str, Any]:
        if name not in repo.labels:
            repo.labels[name] = {
                "id": next(self._ids),
                "name": name,
                "color": "ededed",
                "description": None,
            }
        return repo.labels[name]

    def _route(
        self, method: str, path: str, query: dict[str, str], body: Any, login: str | None
    ) -> tuple[int, Any, dict[str, str], bytes | None]:
        path = path.rstrip("/") or "/"
        for route_method, pattern, handler in self._routes:
            if route_method != method:
                continue
            match = pattern.fullmatch(path)
            if match is None:
                continue
            groups = {k: unquote(v) for k, v in match.groupdict().items()}
            with self._lock:
                result = handler(query=query, body=body, login=login, **groups)
            if len(result) == 2:
                return int(result[0]), result[1], {}, None
            status, payload, headers, raw = result
            return int(status), payload, dict(headers), raw
        raise _HttpError(404, "Not Found")

    def _install_routes(self) -> None:
        """The REST and GraphQL routes: (method, path pattern, handler), first match wins.

        ``{repo}`` stands for ``/repos/OWNER/NAME`` (named groups ``owner`` and ``name``).
        """
        repo = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
        table: list[tuple[str, str, Route]] = [
            ("GET", r"/user", self._get_self),
            ("GET", r"/users/(?P<who>[^/]+)", self._get_user),
            ("GET", "{repo}", self._get_repo),
            ("GET", r"{repo}/issues", self._list_issues),
            ("GET", r"{repo}/issues/(?P<num>\d+)", self._get_issue),
            ("PATCH", r"{repo}/issues/(?P<num>\d+)", self._patch_issue),
            ("GET", r"{repo}/issues/(?P<num>\d+)/comments", self._list_comments),
            ("POST", r"{repo}/issues/(?P<num>\d+)/comments", self._add_comment),
            ("PATCH", r"{repo}/issues/comments/(?P<cid>\d+)", self._edit_comment),
            ("GET", r"{repo}/issues/(?P<num>\d+)/labels", self._issue_labels),
            ("POST", r"{repo}/issues/(?P<num>\d+)/labels", self._add_labels),
            ("DELETE", r"{repo}/issues/(?P<num>\d+)/labels/(?P<label>[^/]+)", self._remove_label),
            ("GET", r"{repo}/labels", self._list_labels),
            ("POST", r"{repo}/labels", self._create_label),
            ("GET", r"{repo}/labels/(?P<label>[^/]+)", self._get_label),
            ("GET", r"{repo}/collaborators/(?P<who>[^/]+)/permission", self._permission),
            ("GET", r"{repo}/pulls", self._list_pulls),
            ("POST", r"{repo}/pulls", self._create_pull),
            ("GET", r"{repo}/pulls/(?P<num>\d+)", self._get_pull),
            ("PATCH", r"{repo}/pulls/(?P<num>\d+)", self._patch_pull),
            ("PUT", r"{repo}/pulls/(?P<num>\d+)/merge", self._merge_pull),
            ("POST", r"{repo}/pulls/(?P<num>\d+)/requested_reviewers", self._request_reviewers),
            (
                "GET",
                r"{repo}/pulls/(?P<num>\d+)/requested_reviewers",
                self._get_requested_reviewers,
            ),
            ("GET", r"{repo}/pulls/(?P<num>\d+)/reviews", self._list_reviews),
            ("POST", r"{repo}/pulls/(?P<num>\d+)/reviews", self._create_review),
            ("GET", r"{repo}/branches/(?P<branch>.+)/protection", self._protection),
            ("GET", r"{repo}/branches/(?P<branch>.+)", self._get_branch),
            ("GET", r"{repo}/rules/branches/(?P<branch>.+)", self._branch_rules),
            ("POST", r"{repo}/actions/workflows/(?P<wf>[^/]+)/dispatches", self._dispatch_workflow),
            ("GET", r"{repo}/actions/runs/(?P<run>\d+)/artifacts", self._list_artifacts),
            ("GET", r"{repo}/actions/artifacts/(?P<aid>\d+)/zip", self._download_artifact),
            ("POST", r"/graphql", self._graphql),
        ]
        for method, path, handler in table:
            self._routes.append((method, re.compile(path.replace("{repo}", repo)), handler))

    # -- helpers ---------------------------------------------------------------------------

    def _repo(self, owner: str, name: str, login: str | None = None) -> FakeRepo:
        repo = self.repos.get(f"{owner}/{name}")
        if repo is None:
            raise _HttpError(404, "Not Found")
        if repo.private and (login is None or ROLE_RANK[self._role(repo, login)] < 1):
            raise _HttpError(404, "Not Found")
        return repo

    def _role(self, repo: FakeRepo, login: str) -> str:
        return repo.collaborators.get(login, "read" if not repo.private else "none")

    def _need(self, repo: FakeRepo, login: str | None, role: str = "write") -> None:
        if login is None:
            raise _HttpError(401, "Requires authentication")
        if ROLE_RANK[self._role(repo, login)] < ROLE_RANK[role]:
            raise _HttpError(403, "Resource not accessible by integration")

    def _issue(self, repo: FakeRepo, num: str) -> dict[str, Any]:
        issue = repo.issues.get(int(num))
        if issue is None:
            raise _HttpError(404, "Not Found")
        return issue

    def _pull(self, repo: FakeRepo, num: str) -> dict[str, Any]:
        issue = self._issue(repo, num)
        if not issue.get("is_pull"):
            raise _HttpError(404, "Not Found")
        return issue

    def _pull_head_sha(self, repo: FakeRepo, pull: dict[str, Any]) -> str:
        if pull["state"] == "open":
            sha = repo.head_sha(pull["head"])
            if sha:
                pull["head_sha"] = sha
        return str(pull.get("head_sha") or "0" * 40)

    # -- payload builders (shapes of GitHub's OpenAPI description) -------------------------

    def _user_json(self, login: str) -> dict[str, Any]:
        user = self.add_user(login)
        base = f"{self.api_url}/users/{login}"
        return {
            "login": login,
            "id": user["id"],
            "node_id": _node_id("U", user["id"]),
            "avatar_url": f"{self.web_url}/avatars/{login}",
            "gravatar_id": "",
            "url": base,
            "html_url": f"{self.web_url}/{login}",
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

    def _repo_json(self, repo: FakeRepo) -> dict[str, Any]:
        base = f"{self.api_url}/repos/{repo.full_name}"
        out: dict[str, Any] = {
            "id": repo.id,
            "node_id": _node_id("R", repo.id),
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "owner": self._user_json(repo.owner),
            "html_url": f"{self.web_url}/{repo.full_name}",
            "description": None,
            "fork": False,
            "url": base,
            "default_branch": repo.default_branch,
            "visibility": "private" if repo.private else "public",
            "archived": False,
            "disabled": False,
            "allow_auto_merge": True,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": _now(),
            "pushed_at": _now(),
        }
        for key in (
            "archive_url",
            "assignees_url",
            "blobs_url",
            "branches_url",
            "collaborators_url",
            "comments_url",
            "commits_url",
            "compare_url",
            "contents_url",
            "contributors_url",
            "deployments_url",
            "downloads_url",
            "events_url",
            "forks_url",
            "git_commits_url",
            "git_refs_url",
            "git_tags_url",
            "issue_comment_url",
            "issue_events_url",
            "issues_url",
            "keys_url",
            "labels_url",
            "languages_url",
            "merges_url",
            "milestones_url",
            "notifications_url",
            "pulls_url",
            "releases_url",
            "stargazers_url",
            "statuses_url",
            "subscribers_url",
            "subscription_url",
            "tags_url",
            "teams_url",
            "trees_url",
            "hooks_url",
        ):
            out[key] = f"{base}/{key.removesuffix('_url')}"
        out.update(
            {
                "git_url": f"git://127.0.0.1/{repo.full_name}.git",
                "ssh_url": f"git@127.0.0.1:{repo.full_name}.git",
                "clone_url": str(repo.remote)
                if repo.remote
                else f"{self.web_url}/{repo.full_name}.git",
                "svn_url": f"{self.web_url}/{repo.full_name}",
                "homepage": None,
                "mirror_url": None,
                "language": "Python",
                "forks_count": 0,
                "stargazers_count": 0,
                "watchers_count": 0,
                "size": 1,
                "open_issues_count": sum(1 for i in repo.issues.values() if i["state"] == "open"),
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
                "open_issues": sum(1 for i in repo.issues.values() if i["state"] == "open"),
                "watchers": 0,
                "license": None,
            }
        )
        return out

    def _label_json(self, repo: FakeRepo, name: str) -> dict[str, Any]:
        label = self._ensure_label(repo, name)
        return {
            "id": label["id"],
            "node_id": _node_id("L", label["id"]),
            "url": f"{self.api_url}/repos/{repo.full_name}/labels/{name}",
            "name": name,
            "color": label["color"],
            "default": False,
            "description": label["description"],
        }

    def _issue_json(self, repo: FakeRepo, issue: dict[str, Any]) -> dict[str, Any]:
        base = f"{self.api_url}/repos/{repo.full_name}"
        num = issue["number"]
        out: dict[str, Any] = {
            "id": issue["id"],
            "node_id": _node_id("I", issue["id"]),
            "url": f"{base}/issues/{num}",
            "repository_url": base,
            "labels_url": f"{base}/issues/{num}/labels{{/name}}",
            "comments_url": f"{base}/issues/{num}/comments",
            "events_url": f"{base}/issues/{num}/events",
            "html_url": f"{self.web_url}/{repo.full_name}/issues/{num}",
            "number": num,
            "state": issue["state"],
            "state_reason": None,
            "title": issue["title"],
            "body": issue["body"],
            "user": self._user_json(issue["user"]),
            "labels": [self._label_json(repo, n) for n in issue["labels"]],
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
            out["pull_request"] = {
                "url": f"{base}/pulls/{num}",
                "html_url": f"{self.web_url}/{repo.full_name}/pull/{num}",
                "diff_url": f"{self.web_url}/{repo.full_name}/pull/{num}.diff",
                "patch_url": f"{self.web_url}/{repo.full_name}/pull/{num}.patch",
                "merged_at": issue.get("merged_at"),
            }
            out["draft"] = issue["draft"]
        return out

    def _branch_ref_json(self, repo: FakeRepo, ref: str, sha: str) -> dict[str, Any]:
        return {
            "label": f"{repo.owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self._user_json(repo.owner),
            "repo": self._repo_json(repo),
        }

    def _pull_json(self, repo: FakeRepo, pull: dict[str, Any]) -> dict[str, Any]:
        base = f"{self.api_url}/repos/{repo.full_name}"
        num = pull["number"]
        sha = self._pull_head_sha(repo, pull)
        base_sha = repo.head_sha(pull["base"]) or "0" * 40
        html = f"{self.web_url}/{repo.full_name}/pull/{num}"
        out: dict[str, Any] = {
            "url": f"{base}/pulls/{num}",
            "id": pull["id"],
            "node_id": _node_id("PR", num),
            "html_url": html,
            "diff_url": html + ".diff",
            "patch_url": html + ".patch",
            "issue_url": f"{base}/issues/{num}",
            "commits_url": f"{base}/pulls/{num}/commits",
            "review_comments_url": f"{base}/pulls/{num}/comments",
            "review_comment_url": f"{base}/pulls/comments{{/number}}",
            "comments_url": f"{base}/issues/{num}/comments",
            "statuses_url": f"{base}/statuses/{sha}",
            "number": num,
            "state": pull["state"],
            "locked": False,
            "title": pull["title"],
            "user": self._user_json(pull["user"]),
            "body": pull["body"],
            "labels": [self._label_json(repo, n) for n in pull["labels"]],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": pull["created_at"],
            "updated_at": pull["updated_at"],
            "closed_at": pull["closed_at"],
            "merged_at": pull.get("merged_at"),
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [self._user_json(u) for u in pull["requested_reviewers"]],
            "requested_teams": [],
            "head": self._branch_ref_json(repo, pull["head"], sha),
            "base": self._branch_ref_json(repo, pull["base"], base_sha),
            "_links": {
                "self": {"href": f"{base}/pulls/{num}"},
                "html": {"href": html},
                "issue": {"href": f"{base}/issues/{num}"},
                "comments": {"href": f"{base}/issues/{num}/comments"},
                "review_comments": {"href": f"{base}/pulls/{num}/comments"},
                "review_comment": {"href": f"{base}/pulls/comments{{/number}}"},
                "commits": {"href": f"{base}/pulls/{num}/commits"},
                "statuses": {"href": f"{base}/statuses/{sha}"},
            },
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
        return out

    def _comment_json(self, repo: FakeRepo, comment: dict[str, Any]) -> dict[str, Any]:
        base = f"{self.api_url}/repos/{repo.full_name}"
        return {
            "id": comment["id"],
            "node_id": _node_id("IC", comment["id"]),
            "url": f"{base}/issues/comments/{comment['id']}",
            "html_url": f"{self.web_url}/{repo.full_name}/issues/{comment['issue']}"
            f"#issuecomment-{comment['id']}",
            "body": comment["body"],
            "user": self._user_json(comment["user"]),
            "created_at": comment["created_at"],
            "updated_at": comment["updated_at"],
            "issue_url": f"{base}/issues/{comment['issue']}",
            "author_association": "NONE",
        }

    def _review_json(self, repo: FakeRepo, num: int, review: dict[str, Any]) -> dict[str, Any]:
        base = f"{self.api_url}/repos/{repo.full_name}"
        html = f"{self.web_url}/{repo.full_name}/pull/{num}"
        return {
            "id": review["id"],
            "node_id": _node_id("PRR", review["id"]),
            "user": self._user_json(review["user"]),
            "body": review["body"],
            "state": review["state"],
            "html_url": f"{html}#pullrequestreview-{review['id']}",
            "pull_request_url": f"{base}/pulls/{num}",
            "_links": {"html": {"href": html}, "pull_request": {"href": f"{base}/pulls/{num}"}},
            "submitted_at": review["submitted_at"],
            "commit_id": review["commit_id"],
            "author_association": "COLLABORATOR",
        }

    # -- handlers --------------------------------------------------------------------------

    def _full_user_json(self, login: str) -> dict[str, Any]:
        return self._user_json(login) | {
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

    def _get_self(self, *, query: dict[str, str], body: Any, login: str | None) -> tuple[int, Any]:
        if login is None:
            raise _HttpError(401, "Requires authentication")
        if self.users[login]["type"] == "Bot":
            # Installation tokens of GitHub Apps cannot read /user.
            raise _HttpError(403, "Resource not accessible by integration")
        return 200, self._full_user_json(login)

    def _get_user(
        self, *, query: dict[str, str], body: Any, login: str | None, **kw: str
    ) -> tuple[int, Any]:
        if kw["who"] not in self.users:
            raise _HttpError(404, "Not Found")
        return 200, self._full_user_json(kw["who"])

    def _get_repo(
        self, *, query: dict[str, str], body: Any, login: str | None, owner: str, name: str
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        out = self._repo_json(repo)
        if login is not None:
            role = self._role(repo, login)
            rank = ROLE_RANK[role]
            out["permissions"] = {
                "admin": rank >= 5,
                "maintain": rank >= 4,
                "push": rank >= 3,
                "triage": rank >= 2,
                "pull": rank >= 1,
            }
        return 200, out

    def _paginate(
        self, items: list[Any], query: dict[str, str]
    ) -> tuple[int, Any, dict[str, str], None]:
        per_page = int(query.get("per_page", "30"))
        page = int(query.get("page", "1"))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers: dict[str, str] = {}
        if page * per_page < len(items):
            headers["Link"] = (
                f"<{self.api_url}{self._current_path}?per_page={per_page}"
                f'&page={page + 1}{self._current_extra}>; rel="next"'
            )
        return 200, chunk, headers, None

    _current_path = ""
    _current_extra = ""

    def _list_issues(
        self, *, query: dict[str, str], body: Any, login: str | None, owner: str, name: str
    ) -> Any:
        repo = self._repo(owner, name, login)
        state = query.get("state", "open")
        wanted = [w for w in query.get("labels", "").split(",") if w]
        items = [
            i
            for i in repo.issues.values()
            if (state == "all" or i["state"] == state) and all(w in i["labels"] for w in wanted)
        ]
        reverse = query.get("direction", "desc") == "desc"
        items.sort(key=lambda i: (i["created_at"], i["number"]), reverse=reverse)
        self._current_path = f"/repos/{owner}/{name}/issues"
        extra = "".join(f"&{k}={v}" for k, v in query.items() if k not in ("page", "per_page"))
        self._current_extra = extra
        return self._paginate([self._issue_json(repo, i) for i in items], query)

    def _get_issue(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        return 200, self._issue_json(repo, self._issue(repo, num))

    def _patch_issue(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "triage")
        issue = self._issue(repo, num)
        data = body or {}
        for key in ("title", "body", "state"):
            if key in data:
                issue[key] = data[key]
        if "labels" in data:
            issue["labels"] = [str(x) for x in data["labels"]]
        if data.get("state") == "closed":
            issue["closed_at"] = _now()
        issue["updated_at"] = _now()
        return 200, self._issue_json(repo, issue)

    def _list_comments(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> Any:
        repo = self._repo(owner, name, login)
        self._issue(repo, num)
        comments = sorted(repo.issue_comments(int(num)), key=lambda c: c["id"])
        self._current_path = f"/repos/{owner}/{name}/issues/{num}/comments"
        self._current_extra = ""
        return self._paginate([self._comment_json(repo, c) for c in comments], query)

    def _add_comment(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "read")
        issue = self._issue(repo, num)
        if issue["locked"] and ROLE_RANK[self._role(repo, login or "")] < ROLE_RANK["write"]:
            raise _HttpError(403, "Unable to create comment because issue is locked.")
        text = (body or {}).get("body")
        if not isinstance(text, str) or not text:
            raise _HttpError(
                422, "Validation Failed", errors=[{"field": "body", "code": "missing_field"}]
            )
        comment: dict[str, Any] = {
            "id": next(self._ids),
            "issue": int(num),
            "body": text,
            "user": login,
            "created_at": _now(),
            "updated_at": _now(),
        }
        repo.comments[comment["id"]] = comment
        return 201, self._comment_json(repo, comment)

    def _edit_comment(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        cid: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        comment = repo.comments.get(int(cid))
        if comment is None:
            raise _HttpError(404, "Not Found")
        if comment["user"] != login:
            self._need(repo, login, "write")
        comment["body"] = (body or {}).get("body", comment["body"])
        comment["updated_at"] = _now()
        return 200, self._comment_json(repo, comment)

    def _issue_labels(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        issue = self._issue(repo, num)
        return 200, [self._label_json(repo, n) for n in issue["labels"]]

    def _add_labels(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "triage")
        issue = self._issue(repo, num)
        names = body.get("labels", []) if isinstance(body, dict) else body
        if not isinstance(names, list):
            raise _HttpError(422, "Validation Failed")
        for label in names:
            label_name = label["name"] if isinstance(label, dict) else str(label)
            if label_name not in issue["labels"]:
                issue["labels"].append(label_name)
        issue["updated_at"] = _now()
        return 200, [self._label_json(repo, n) for n in issue["labels"]]

    def _remove_label(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
        label: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "triage")
        issue = self._issue(repo, num)
        if label not in issue["labels"]:
            raise _HttpError(404, "Label does not exist")
        issue["labels"].remove(label)
        issue["updated_at"] = _now()
        return 200, [self._label_json(repo, n) for n in issue["labels"]]

    def _list_labels(
        self, *, query: dict[str, str], body: Any, login: str | None, owner: str, name: str
    ) -> Any:
        repo = self._repo(owner, name, login)
        self._current_path = f"/repos/{owner}/{name}/labels"
        self._current_extra = ""
        return self._paginate([self._label_json(repo, n) for n in sorted(repo.labels)], query)

    def _create_label(
        self, *, query: dict[str, str], body: Any, login: str | None, owner: str, name: str
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "write")
        data = body or {}
        label_name = str(data.get("name", ""))
        if not label_name:
            raise _HttpError(422, "Validation Failed")
        if label_name in repo.labels:
            raise _HttpError(
                422,
                "Validation Failed",
                errors=[{"resource": "Label", "code": "already_exists", "field": "name"}],
            )
        label = self._ensure_label(repo, label_name)
        label["color"] = str(data.get("color", "ededed"))
        label["description"] = data.get("description")
        return 201, self._label_json(repo, label_name)

    def _get_label(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        label: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        if label not in repo.labels:
            raise _HttpError(404, "Not Found")
        return 200, self._label_json(repo, label)

    def _permission(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        **kw: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        if login is None:
            raise _HttpError(401, "Requires authentication")
        who = kw["who"]
        if who not in self.users:
            raise _HttpError(404, "Not Found")
        role = repo.collaborators.get(who, "read" if not repo.private else "none")
        return 200, {
            "permission": _LEGACY_PERMISSION[role],
            "role_name": role,
            "user": self._user_json(who)
            | {
                "permissions": {
                    "admin": role == "admin",
                    "maintain": ROLE_RANK[role] >= 4,
                    "push": ROLE_RANK[role] >= 3,
                    "triage": ROLE_RANK[role] >= 2,
                    "pull": ROLE_RANK[role] >= 1,
                },
                "role_name": role,
            },
        }

    def _list_pulls(
        self, *, query: dict[str, str], body: Any, login: str | None, owner: str, name: str
    ) -> Any:
        repo = self._repo(owner, name, login)
        state = query.get("state", "open")
        items = [p for p in repo.pulls() if state == "all" or p["state"] == state]
        if "head" in query:
            head_owner, _, head_ref = query["head"].partition(":")
            items = [p for p in items if head_owner == repo.owner and p["head"] == head_ref]
        if "base" in query:
            items = [p for p in items if p["base"] == query["base"]]
        items.sort(key=lambda p: p["number"], reverse=query.get("direction", "desc") == "desc")
        self._current_path = f"/repos/{owner}/{name}/pulls"
        self._current_extra = "".join(
            f"&{k}={v}" for k, v in query.items() if k not in ("page", "per_page")
        )
        return self._paginate([self._pull_json(repo, p) for p in items], query)

    def _create_pull(
        self, *, query: dict[str, str], body: Any, login: str | None, owner: str, name: str
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "write")
        data = body or {}
        head = str(data.get("head", "")).split(":")[-1]
        base = str(data.get("base", repo.default_branch))
        if not head or not data.get("title"):
            raise _HttpError(
                422,
                "Validation Failed",
                errors=[{"resource": "PullRequest", "code": "missing_field"}],
            )
        if repo.remote is not None and repo.head_sha(head) is None:
            raise _HttpError(
                422,
                "Validation Failed",
                errors=[{"resource": "PullRequest", "field": "head", "code": "invalid"}],
            )
        for pull in repo.open_pulls():
            if pull["head"] == head and pull["base"] == base:
                raise _HttpError(
                    422,
                    "Validation Failed",
                    errors=[
                        {
                            "resource": "PullRequest",
                            "code": "custom",
                            "message": f"A pull request already exists for {repo.owner}:{head}.",
                        }
                    ],
                )
        num = self._next_number(repo)
        assert login is not None
        pull = {
            "number": num,
            "id": next(self._ids),
            "title": data["title"],
            "body": data.get("body") or "",
            "user": login,
            "labels": [],
            "state": "open",
            "locked": False,
            "created_at": _now(),
            "updated_at": _now(),
            "closed_at": None,
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
        return 201, self._pull_json(repo, pull)

    def _get_pull(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        return 200, self._pull_json(repo, self._pull(repo, num))

    def _patch_pull(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "write")
        pull = self._pull(repo, num)
        data = body or {}
        for key in ("title", "body", "base"):
            if key in data:
                pull[key] = data[key]
        if "state" in data:
            if data["state"] == "open" and pull["state"] == "closed":
                for other in repo.open_pulls():
                    if other["head"] == pull["head"] and other is not pull:
                        raise _HttpError(422, "Validation Failed")
            pull["state"] = data["state"]
            pull["closed_at"] = _now() if data["state"] == "closed" else None
        pull["updated_at"] = _now()
        return 200, self._pull_json(repo, pull)

    def _merge_pull(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        repo.merge_attempts.append({"pull": int(num), "by": login, "via": "rest"})
        raise _HttpError(405, "Base branch requires review; merging is refused by the fake")

    def _request_reviewers(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "write")
        pull = self._pull(repo, num)
        for user in (body or {}).get("reviewers", []):
            if user not in self.users:
                raise _HttpError(422, "Reviews may only be requested from collaborators.")
            if user == pull["user"]:
                raise _HttpError(422, "Review cannot be requested from pull request author.")
            if user not in pull["requested_reviewers"]:
                pull["requested_reviewers"].append(user)
        return 201, self._pull_json(repo, pull)

    def _get_requested_reviewers(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        pull = self._pull(repo, num)
        return 200, {
            "users": [self._user_json(u) for u in pull["requested_reviewers"]],
            "teams": [],
        }

    def _list_reviews(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> Any:
        repo = self._repo(owner, name, login)
        self._pull(repo, num)
        reviews = repo.reviews.get(int(num), [])
        self._current_path = f"/repos/{owner}/{name}/pulls/{num}/reviews"
        self._current_extra = ""
        return self._paginate([self._review_json(repo, int(num), r) for r in reviews], query)

    def _create_review(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        num: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        pull = self._pull(repo, num)
        data = body or {}
        event = str(data.get("event", "COMMENT"))
        state = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}.get(
            event, "COMMENTED"
        )
        assert login is not None
        if login == pull["user"] and state != "COMMENTED":
            raise _HttpError(422, "Can not approve your own pull request")
        review = {
            "id": next(self._ids),
            "user": login,
            "state": state,
            "body": data.get("body", ""),
            "commit_id": data.get("commit_id") or self._pull_head_sha(repo, pull),
            "submitted_at": _now(),
        }
        repo.reviews.setdefault(int(num), []).append(review)
        return 200, self._review_json(repo, int(num), review)

    def _get_branch(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        branch: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        sha = repo.head_sha(branch)
        if sha is None:
            raise _HttpError(404, "Branch not found")
        return 200, {
            "name": branch,
            "commit": {"sha": sha, "url": f"{self.api_url}/repos/{repo.full_name}/commits/{sha}"},
            "protected": branch in repo.protection,
            "_links": {
                "self": f"{self.api_url}/repos/{repo.full_name}/branches/{branch}",
                "html": f"{self.web_url}/{repo.full_name}/tree/{branch}",
            },
            "protection_url": f"{self.api_url}/repos/{repo.full_name}/branches/{branch}/protection",
        }

    def _protection(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        branch: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "admin")
        if branch not in repo.protection:
            raise _HttpError(404, "Branch not protected")
        return 200, repo.protection[branch]

    def _branch_rules(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        branch: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        rules = [
            {"ruleset_source_type": "Repository", "ruleset_source": repo.full_name, "ruleset_id": 1}
            | rule
            for rule in repo.rules.get(branch, [])
        ]
        return 200, rules

    def _dispatch_workflow(
        self, *, query: dict[str, str], body: Any, login: str | None, owner: str, name: str, wf: str
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        self._need(repo, login, "write")
        data = body or {}
        if "ref" not in data:
            raise _HttpError(422, 'Invalid request. "ref" wasn\'t supplied.')
        inputs = data.get("inputs") or {}
        if not isinstance(inputs, dict) or any(not isinstance(v, str) for v in inputs.values()):
            raise _HttpError(422, "Invalid request. inputs must be strings.")
        repo.dispatches.append(
            {"workflow": wf, "ref": data["ref"], "inputs": dict(inputs), "by": login}
        )
        return 204, None

    def _list_artifacts(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        run: str,
    ) -> tuple[int, Any]:
        repo = self._repo(owner, name, login)
        base = f"{self.api_url}/repos/{repo.full_name}/actions/artifacts"
        items = [
            {
                "id": a["id"],
                "node_id": _node_id("A", a["id"]),
                "name": a["name"],
                "size_in_bytes": len(a["data"]),
                "url": f"{base}/{a['id']}",
                "archive_download_url": f"{base}/{a['id']}/zip",
                "expired": False,
                "created_at": a["created_at"],
                "expires_at": None,
                "updated_at": a["created_at"],
                "workflow_run": {"id": int(run)},
            }
            for a in repo.artifacts.get(int(run), [])
            if query.get("name") in (None, a["name"])
        ]
        return 200, {"total_count": len(items), "artifacts": items}

    def _download_artifact(
        self,
        *,
        query: dict[str, str],
        body: Any,
        login: str | None,
        owner: str,
        name: str,
        aid: str,
    ) -> tuple[int, Any, dict[str, str], bytes]:
        repo = self._repo(owner, name, login)
        if login is None:
            raise _HttpError(401, "Requires authentication")
        for arts in repo.artifacts.values():
            for art in arts:
                if art["id"] == int(aid):
                    return 200, None, {}, art["data"]
        raise _HttpError(404, "Not Found")

    # -- GraphQL ---------------------------------------------------------------------------

    def _find_by_node(self, node_id: str) -> tuple[FakeRepo, dict[str, Any]]:
        for repo in self.repos.values():
            for pull in repo.pulls():
                if _node_id("PR", pull["number"]) == node_id:
                    return repo, pull
        raise _HttpError(
            200,
            "Could not resolve to a node",
            errors=[
                {
                    "type": "NOT_FOUND",
                    "message": f"Could not resolve to a node with the global id of '{node_id}'",
                }
            ],
        )

    def _graphql(self, *, query: dict[str, str], body: Any, login: str | None) -> tuple[int, Any]:
        if login is None:
            raise _HttpError(401, "Requires authentication")
        data = body or {}
        text = str(data.get("query", ""))
        variables = data.get("variables") or {}
        mutation = re.search(
            r"\b(enablePullRequestAutoMerge|enqueuePullRequest|markPullRequestReadyForReview|mergePullRequest)\b",
            text,
        )
        if mutation is None:
            if "mergeQueueEntry" in text and "node(" in text:
                try:
                    _repo, pull = self._find_by_node(str(variables.get("id", "")))
                except _HttpError as exc:
                    return 200, {"data": {"node": None}, "errors": exc.payload.get("errors", [])}
                entry = {"id": f"MQE_{pull['number']}"} if pull.get("in_merge_queue") else None
                return 200, {"data": {"node": {"mergeQueueEntry": entry}}}
            return 200, {
                "errors": [{"message": "the fake serves only the GraphQL calls Chimera uses"}]
            }
        inp = variables.get("input") or {}
        node = str(inp.get("pullRequestId", ""))
        try:
            repo, pull = self._find_by_node(node)
        except _HttpError as exc:
            return 200, {"data": None, "errors": exc.payload.get("errors", [])}
        if ROLE_RANK[self._role(repo, login)] < ROLE_RANK["write"]:
            return 200, {
                "data": None,
                "errors": [
                    {"type": "FORBIDDEN", "message": "Resource not accessible by integration"}
                ],
            }
        name = mutation.group(1)
        if name == "mergePullRequest":
            repo.merge_attempts.append({"pull": pull["number"], "by": login, "via": "graphql"})
            return 200, {"data": None, "errors": [{"message": "merging is refused by the fake"}]}
        if name == "markPullRequestReadyForReview":
            pull["draft"] = False
            return 200, {
                "data": {name: {"clientMutationId": None, "pullRequest": {"isDraft": False}}}
            }
        expected = inp.get("expectedHeadOid")
        if expected and expected != self._pull_head_sha(repo, pull):
            return 200, {"data": None, "errors": [{"message": "head commit moved"}]}
        if pull["draft"]:
            return 200, {"data": None, "errors": [{"message": "Pull request is in draft state"}]}
        if name == "enqueuePullRequest":
            if not any(r.get("type") == "merge_queue" for r in repo.rules.get(pull["base"], [])):
                return 200, {
                    "data": None,
                    "errors": [{"message": "The base branch does not use a merge queue"}],
                }
            pull["in_merge_queue"] = True
            return 200, {
                "data": {
                    name: {
                        "clientMutationId": None,
                        "mergeQueueEntry": {"id": f"MQE_{pull['number']}", "position": 1},
                    }
                }
            }
        pull["auto_merge"] = {
            "enabled_by": self._user_json(login),
            "merge_method": str(inp.get("mergeMethod", "MERGE")).lower(),
            "commit_title": None,
            "commit_message": None,
        }
        user = self._user_json(login)
        return 200, {
            "data": {
                name: {
                    "clientMutationId": None,
                    "actor": {
                        "avatarUrl": user["avatar_url"],
                        "login": login,
                        "resourcePath": f"/{login}",
                        "url": user["html_url"],
                    },
                }
            }
        }


def make_bare_remote(
    folder: Path, files: Mapping[str, str] | None = None, *, branch: str = "main"
) -> tuple[Path, Path]:
    """A bare git repository (the remote of the fake) and a clone of it with one commit.

    Returns ``(remote, clone)``: ``folder/remote.git`` and ``folder/work``; ``files`` (path →
    text, default a README) form the first commit, pushed to ``branch``.
    """
    remote = folder / "remote.git"
    work = folder / "work"
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", branch, str(remote)], check=True, capture_output=True
    )
    subprocess.run(["git", "clone", "-q", str(remote), str(work)], check=True, capture_output=True)
    push_branch(work, branch, files or {"README.md": "# demo\n"}, message="base")
    return remote, work


def push_branch(
    work: Path,
    branch: str,
    files: Mapping[str, str],
    *,
    start: str | None = None,
    message: str = "change",
) -> None:
    """Check out ``branch`` in the clone ``work`` (from ``start``, default the current
    commit), commit ``files`` (path → text) on it and push it to ``origin``."""
    ident = ["-c", "user.name=Test", "-c", "user.email=test@example.invalid"]
    checkout = ["git", "checkout", "-q", "-B", branch, *([start] if start else [])]
    subprocess.run(checkout, cwd=work, check=True, capture_output=True)
    for rel, text in files.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=work, check=True)
    subprocess.run(["git", *ident, "commit", "-q", "-m", message], cwd=work, check=True)
    subprocess.run(
        ["git", "push", "-q", "origin", branch], cwd=work, check=True, capture_output=True
    )
