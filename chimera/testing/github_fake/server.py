"""The :class:`GitHubFake` server: its state, the arranging helpers tests call, and routing.

Slightly past 400 lines: the arranging helpers are the one API tests read, so they stay
together; the App, run and artifact helpers already live in mixins (:mod:`.apps`,
:mod:`.runs`)."""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from chimera.testing._server import LocalServer
from chimera.testing.github_fake.apps import AppsMixin, FakeApp
from chimera.testing.github_fake.git import GitBackend
from chimera.testing.github_fake.handler import Handler
from chimera.testing.github_fake.payloads import Payloads
from chimera.testing.github_fake.resources import all_resources
from chimera.testing.github_fake.routing import FakeRequest, FakeResponse, HttpError
from chimera.testing.github_fake.routing import Handler as RouteHandler
from chimera.testing.github_fake.runs import RunsMixin
from chimera.testing.github_fake.state import (
    ACTIONS_LOGIN,
    FakeFault,
    FakeRepo,
    Identity,
    RecordedCall,
    RepoEvent,
    TokenKind,
    issue_record,
    now,
    set_clock_offset,
)
from chimera.testing.github_fake.webhooks import delivery

if TYPE_CHECKING:
    import github


class GitHubFake(AppsMixin, RunsMixin, LocalServer):
    """A threaded, stateful GitHub API fake on ``127.0.0.1`` (see the package docstring).

    Use as a context manager, or call :meth:`start` and :meth:`stop`. ``api_url`` is the
    ``base_url`` for PyGithub (GraphQL is served at ``<api_url>/graphql``, which is where
    PyGithub derives it for a non-``/api/v3`` base).

    Attributes:
        repos: ``owner/name`` → :class:`FakeRepo`.
        users: login → ``{"login", "id", "type"}`` (``type`` is ``User`` or ``Bot``).
        identities: token → the :class:`Identity` it authenticates as.
        calls: every request received, in order.
        events: every webhook event a write caused (see :attr:`triggered_events`).
        internal_errors: bugs of the fake itself (answered with status 599).
        rejects_unknown_tokens: answer a token the fake does not know (or revoked) with
            GitHub's 401 "Bad credentials", as GitHub does; off by default, when such a
            request is anonymous (runners' own tokens the fake never issued).
    """

    handler = Handler
    thread_name = "github-fake"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.repos: dict[str, FakeRepo] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.identities: dict[str, Identity] = {}
        self.apps: dict[str, FakeApp] = {}
        self._store_ids: dict[tuple[str, int, str], int] = {}
        self.calls: list[RecordedCall] = []
        self.events: list[RepoEvent] = []
        self.internal_errors: list[str] = []
        self._faults: list[FakeFault] = []
        self.rejects_unknown_tokens = False
        self._clock_offset = 0.0
        self._ids = itertools.count(1000)
        super().__init__()
        self.payloads = Payloads(self)
        self._routes: list[tuple[str, re.Pattern[str], RouteHandler]] = [
            r for res in all_resources(self) for r in res.routes()
        ]
        self.git = GitBackend(self)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/web"

    @property
    def lock(self) -> threading.RLock:
        """Held while a handler runs; hold it to read or arrange state from another thread."""
        return self._lock

    @property
    def stopping(self) -> threading.Event:
        """Set while the server stops (delayed handlers wait on it)."""
        return self._stopping

    @property
    def tokens(self) -> dict[str, str]:
        """Token → the login it acts as."""
        with self._lock:
            return {token: who.login for token, who in self.identities.items()}

    def clone_url(self, full_name: str, token: str | None = None) -> str:
        """The smart-HTTP URL of a repository's remote; with ``token``, git authenticates
        with it (as ``actions/checkout`` does: user ``x-access-token``, the token as password)."""
        auth = f"x-access-token:{token}@" if token else ""
        return f"http://{auth}127.0.0.1:{self.port}/web/{full_name}.git"

    def pygithub(self, token: str) -> github.Github:
        """A real PyGithub client of this fake, authenticated with ``token`` (no retries, no
        throttling)."""
        import github  # lazily: importing the fake stays light

        return github.Github(
            auth=github.Auth.Token(token),
            base_url=self.api_url,
            retry=None,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )

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

    def add_token(
        self,
        login: str,
        token: str | None = None,
        *,
        bot: bool = False,
        kind: TokenKind | None = None,
        permissions: Mapping[str, str] | None = None,
        repo: str | None = None,
    ) -> str:
        """Register a token acting as ``login`` (created if unknown); returns the token.

        ``kind`` defaults to :attr:`TokenKind.APP` for a bot login, else
        :attr:`TokenKind.PERSONAL`; ``permissions`` and ``repo`` narrow what it may write
        (see :class:`Identity`).
        """
        user = self.add_user(login, bot=bot)
        if kind is None:
            kind = TokenKind.APP if user["type"] == "Bot" else TokenKind.PERSONAL
        with self._lock:
            token = token or f"tok-{login}-{next(self._ids)}"
            self.identities[token] = Identity(login, kind, permissions, repo)
        return token

    def add_workflow_token(
        self, full_name: str, *, permissions: Mapping[str, str] | None = None
    ) -> str:
        """A workflow run's ``GITHUB_TOKEN`` in ``full_name``: acts as ``github-actions[bot]``,
        writes only there, and its writes start no workflow. ``permissions`` is the job's
        ``permissions:`` block (``None``: the permissive default, write on every scope)."""
        self.repos[full_name].collaborators.setdefault(ACTIONS_LOGIN, "write")
        return self.add_token(
            ACTIONS_LOGIN,
            f"ghs_workflow_{next(self._ids)}",
            kind=TokenKind.WORKFLOW,
            permissions=permissions,
            repo=full_name,
        )

    def add_app_token(
        self,
        slug: str,
        *,
        repos: tuple[str, ...] = (),
        permissions: Mapping[str, str] | None = None,
        repo: str | None = None,
    ) -> str:
        """An installation token of the GitHub App ``slug`` (acts as ``<slug>[bot]``), installed
        with write access on ``repos``; its writes start workflows. ``repo``: the one
        repository it may write to (``None``: any its role allows)."""
        login = f"{slug}[bot]"
        for full_name in repos:
            self.repos[full_name].collaborators.setdefault(login, "write")
        token = f"ghs_app_{slug}_{next(self._ids)}"
        return self.add_token(login, token, kind=TokenKind.APP, permissions=permissions, repo=repo)

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
        labelled_by: str | None = None,
    ) -> dict[str, Any]:
        """Arrange an issue; its ``labels`` were added by ``labelled_by`` (default: ``user``),
        as the issue's events say."""
        repo = self.repos[full_name]
        self.add_user(user)
        with self._lock:
            num = number or self.next_number(repo)
            issue = issue_record(num, next(self._ids), title=title, body=body, user=user)
            issue["state"] = state
            issue |= {"labels": list(labels), "locked": locked}
            for name in labels:
                self.ensure_label(repo, name)
                self.record_issue_event(repo, num, "labeled", labelled_by or user, name)
            repo.issues[num] = issue
            return issue

    def add_fork_pull(
        self,
        full_name: str,
        *,
        head: str,
        user: str,
        title: str = "A change from a fork",
        body: str = "",
        head_sha: str = "f" * 40,
    ) -> dict[str, Any]:
        """Arrange an open PR from ``user``'s fork, whose head branch there is named ``head``:
        anyone can open one on a public repository, with any branch name (its head is the
        fork's, so ``GET /pulls?head=<owner>:<head>`` does not list it)."""
        repo = self.repos[full_name]
        self.add_user(user)
        with self._lock:
            num = self.next_number(repo)
            pull = issue_record(num, next(self._ids), title=title, body=body, user=user)
            pull |= {
                "is_pull": True,
                "head": head,
                "head_owner": user,
                "base": repo.default_branch,
                "draft": False,
                "requested_reviewers": [],
                "head_sha": head_sha,
                "auto_merge": None,
                "in_merge_queue": False,
            }
            repo.issues[num] = pull
            return pull

    def record_issue_event(
        self, repo: FakeRepo, issue: int, event: str, actor: str, label: str
    ) -> None:
        """Append one issue timeline event (``labeled``/``unlabeled``) as GitHub lists it."""
        with self._lock:
            repo.issue_events.append(
                {
                    "id": next(self._ids),
                    "issue": issue,
                    "event": event,
                    "actor": actor,
                    "label": label,
                    "created_at": now(),
                }
            )

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
        """Record a review (``APPROVED``, ``CHANGES_REQUESTED``, ``COMMENTED``) on a PR, of
        ``commit_id`` (default: the PR's current head). Arranging: no event is recorded."""
        repo = self.repos[full_name]
        self.add_user(user)
        with self._lock:
            pull = repo.issues[number]
            review = {
                "id": next(self._ids),
                "user": user,
                "state": state,
                "body": body,
                "commit_id": commit_id or self.pull_head_sha(repo, pull),
                "submitted_at": now(),
            }
            repo.reviews.setdefault(number, []).append(review)
            return review

    def advance_clock(self, seconds: float) -> None:
        """Move the fake's clock ``seconds`` forward (timestamps it writes from now on, such
        as a comment's ``created_at``); :meth:`stop` sets it back in step with the real one."""
        with self._lock:
            set_clock_offset(self._clock_offset + seconds)
            self._clock_offset += seconds

    def stop(self) -> None:
        super().stop()
        with self._lock:
            if self._clock_offset:
                set_clock_offset(0)
                self._clock_offset = 0.0

    def inject(self, *faults: FakeFault) -> None:
        """Queue faults; each is consumed by the first ``times`` requests it matches."""
        with self._lock:
            self._faults.extend(faults)

    # -- reading what happened -------------------------------------------------------------

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return sum(f.times for f in self._faults)

    def calls_to(self, method: str, pattern: str) -> list[RecordedCall]:
        with self._lock:
            return [c for c in self.calls if c.method == method and re.search(pattern, c.path)]

    def writes(self, full_name: str | None = None) -> list[RecordedCall]:
        """The successful writes (see :attr:`RecordedCall.is_write`), optionally to one
        repository's REST or git paths; each names its login and token kind."""
        git = (f"/web/{full_name}.git/", f"/{full_name}/", f"/{full_name}.git/")
        prefixes = (f"/repos/{full_name}/", *git) if full_name else ("/",)
        with self._lock:
            return [c for c in self.calls if c.is_write and c.path.startswith(prefixes)]

    @property
    def triggered_events(self) -> list[RepoEvent]:
        """The events that start workflow runs (a GITHUB_TOKEN's writes start none)."""
        with self._lock:
            return [e for e in self.events if e.triggers_workflows]

    # -- used by the handlers --------------------------------------------------------------

    def identity_for(self, authorization: str) -> Identity | None:
        """The identity of an ``Authorization`` header: ``token T``, ``Bearer T``, or git's
        ``Basic`` with the token as password (or as user name, with no password)."""
        scheme, _, value = authorization.strip().partition(" ")
        token = value.strip()
        if scheme.lower() == "basic":
            try:
                user, _, password = base64.b64decode(token).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return None
            token = password or user
        elif scheme.lower() not in ("token", "bearer"):
            return None
        with self._lock:
            return self.identities.get(token)

    def take_fault(self, method: str, path: str) -> FakeFault | None:
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def record(self, req: FakeRequest, status: int, body: Any = None) -> None:
        kind = req.identity.kind if req.identity is not None else None
        call = RecordedCall(req.method, req.path, status, req.login, body or req.body, kind)
        with self._lock:
            self.calls.append(call)

    def emit(
        self, repo: FakeRepo, req: FakeRequest, event: str, action: str | None, **about: Any
    ) -> None:
        """Record the webhook event a write caused (``about``: the :class:`RepoEvent` fields
        number, ref, sha, label, comment, review, before), with its delivery payload."""
        who = req.identity
        actor = who.login if who is not None else repo.owner
        kind = who.kind if who is not None else None
        with self._lock:
            bare = RepoEvent(event, action, repo.full_name, actor, kind, **about)
            self.events.append(replace(bare, payload=delivery(self, repo, bare)))

    def handle(self, req: FakeRequest) -> FakeResponse:
        """Route ``req`` (first match wins) and answer it; errors become GitHub's error body."""
        path = req.path.rstrip("/") or "/"
        try:
            for method, pattern, handler in self._routes:
                match = pattern.fullmatch(path) if method == req.method else None
                if match is None:
                    continue
                params = {k: unquote(v) for k, v in match.groupdict().items()}
                with self._lock:
                    return handler(replace(req, params=params))
            raise HttpError(404, "Not Found")
        except HttpError as exc:
            return FakeResponse(exc.status, exc.payload)
        except Exception as exc:  # a bug in the fake: answer it, so the test sees it
            self.internal_errors.append(f"{req.method} {req.path}: {type(exc).__name__}: {exc}")
            return FakeResponse(599, {"message": f"github fake internal error: {exc}"})

    def new_id(self) -> int:
        return next(self._ids)

    def next_number(self, repo: FakeRepo) -> int:
        return max(repo.issues, default=0) + 1

    def ensure_label(self, repo: FakeRepo, name: str) -> dict[str, Any]:
        if name not in repo.labels:
            repo.labels[name] = {
                "id": next(self._ids),
                "name": name,
                "color": "ededed",
                "description": None,
            }
        return repo.labels[name]

    def pull_head_sha(self, repo: FakeRepo, pull: dict[str, Any]) -> str:
        """The PR's head commit: the remote's branch tip while open, the last seen after."""
        if pull["state"] == "open" and pull.get("head_owner", repo.owner) == repo.owner:
            sha = repo.head_sha(pull["head"])
            if sha:
                pull["head_sha"] = sha
        return str(pull.get("head_sha") or "0" * 40)
