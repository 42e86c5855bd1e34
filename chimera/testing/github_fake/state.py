"""The fake's state: repositories, token identities, faults, and what tests assert on.

Tests arrange a scenario by mutating these records directly (``repo.collaborators["alice"] =
"write"``) and read back what the code under test did (``fake.calls``, ``fake.events``).
"""

from __future__ import annotations

import base64
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any

ROLE_RANK = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}
# The REST permission endpoint folds roles into these legacy levels (GitHub does the same).
LEGACY_PERMISSION = {
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
# The login every workflow's GITHUB_TOKEN acts as.
ACTIONS_LOGIN = "github-actions[bot]"
# GITHUB_TOKEN writes start no workflow, with these two exceptions (GitHub's documented rule).
_TOKEN_TRIGGERS = frozenset({"workflow_dispatch", "repository_dispatch"})


# Seconds the fake's clock runs ahead of the real one (GitHubFake.advance_clock): a test of
# per-hour limits lets hours pass without waiting for them.
_CLOCK = {"offset": 0.0}


def now() -> str:
    """The current UTC time as GitHub writes it (``2026-01-01T00:00:00Z``), on the fake's
    clock (:func:`set_clock_offset`)."""
    stamp = datetime.now(UTC) + timedelta(seconds=_CLOCK["offset"])
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def set_clock_offset(seconds: float) -> None:
    """Run the fake's clock ``seconds`` ahead of the real one (``0``: in step again). Every
    timestamp the fake writes from then on (comments, label events, PRs) is on that clock."""
    _CLOCK["offset"] = float(seconds)


def node_id(kind: str, number: int) -> str:
    """A GraphQL global id of the fake's shape (``kind`` is ``PR``, ``I``, ``U``...)."""
    return base64.b64encode(f"0:{kind}{number}".encode()).decode().rstrip("=")


def issue_record(num: int, ident: int, *, title: str, body: str, user: str) -> dict[str, Any]:
    """The internal record of an open issue; a pull request extends it (same number space)."""
    stamp = now()
    return {
        "number": num,
        "id": ident,
        "title": title,
        "body": body,
        "user": user,
        "labels": [],
        "state": "open",
        "locked": False,
        "created_at": stamp,
        "updated_at": stamp,
        "closed_at": None,
        "is_pull": False,
    }


class TokenKind(StrEnum):
    """Who a token belongs to; it decides which writes GitHub lets it make and what they start."""

    WORKFLOW = "workflow"  # a workflow's GITHUB_TOKEN, acting as github-actions[bot]
    APP = "app"  # a GitHub App installation token, acting as <slug>[bot]
    PERSONAL = "personal"  # a person's token (classic or fine-grained), acting as that user


@dataclass(frozen=True)
class Identity:
    """The authenticated side of a request.

    Attributes:
        login: who the token acts as.
        kind: the token's :class:`TokenKind`.
        permissions: scope → ``"read"``/``"write"`` (the keys of a workflow's ``permissions:``
            block: ``contents``, ``pull-requests``, ``issues``, ``checks``, ``statuses``,
            ``actions``); ``None``: only the login's repository role limits writes. A scope
            missing from the mapping is ``none``, as in a workflow that declares permissions.
        repo: for a GITHUB_TOKEN, the one repository (``owner/name``) it may write to.
    """

    login: str
    kind: TokenKind
    permissions: Mapping[str, str] | None = field(default=None, hash=False)
    repo: str | None = None

    def allows(self, scope: str, level: str = "write") -> bool:
        """Whether the token's permissions grant ``level`` on ``scope``."""
        if self.permissions is None:
            return True
        granted = self.permissions.get(scope, "none")
        return granted == "write" or (level == "read" and granted == "read")


@dataclass(frozen=True)
class RepoEvent:
    """A webhook event a write through the fake caused (what could start workflows).

    Attributes:
        event: the webhook event name (``pull_request``, ``push``, ``issues``...).
        action: its activity type (``opened``, ``reopened``...; ``None`` for ``push``).
        repo: ``owner/name``.
        actor: the login that made the write.
        kind: the token kind that made it (``None``: no token, e.g. an arranging helper).
        number: the issue or pull request number, when there is one.
        ref: the branch (``push``: ``refs/heads/<b>``; ``pull_request``: the head branch).
        sha: the commit the event is about, when there is one.
        label: the label a ``labeled``/``unlabeled`` event is about.
        comment: the comment id of an ``issue_comment`` event.
        review: the review id of a ``pull_request_review`` event.
        before: a ``push``'s previous commit of the branch.
        payload: the webhook payload GitHub delivers for it, built from the fake's state when
            the write happened (:func:`chimera.testing.github_fake.webhooks.delivery`): what a
            test replays as the event that starts a workflow run.
    """

    event: str
    action: str | None
    repo: str
    actor: str
    kind: TokenKind | None
    number: int | None = None
    ref: str | None = None
    sha: str | None = None
    label: str | None = None
    comment: int | None = None
    review: int | None = None
    before: str | None = None
    payload: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def triggers_workflows(self) -> bool:
        """GitHub's rule: events caused by a GITHUB_TOKEN start no workflow run (except
        ``workflow_dispatch`` and ``repository_dispatch``); App and personal tokens' do."""
        return self.kind is not TokenKind.WORKFLOW or self.event in _TOKEN_TRIGGERS


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
        before: called (in the server's thread) before the request is answered: a test's
            side effect at a chosen point of a run it does not drive itself (``status=None``
            to answer normally afterwards).
    """

    method: str = "*"
    path: str = ".*"
    status: int | None = 500
    retry_after: float | None = None
    delay: float = 0.0
    after_write: bool = False
    secondary_rate_limit: bool = False
    times: int = 1
    before: Callable[[], None] | None = None

    def matches(self, method: str, path: str) -> bool:
        return (self.method in ("*", method)) and re.search(self.path, path) is not None


@dataclass(frozen=True)
class RecordedCall:
    """One request the fake received; ``kind`` is the token kind that made it."""

    method: str
    path: str
    status: int
    login: str | None
    body: Any
    kind: TokenKind | None = None

    @property
    def is_write(self) -> bool:
        """A successful request that changed state: not a ``GET``, a GraphQL query or a git
        fetch, and answered below 300."""
        if self.method == "GET" or self.status >= 300 or self.path.endswith("/git-upload-pack"):
            return False
        return self.path != "/graphql" or "mutation" in str(self.body)


@dataclass
class FakeRepo:
    """The state of one repository (mutate it directly to arrange a test).

    ``allow_actions_pull_requests`` is the setting "Allow GitHub Actions to create and approve
    pull requests" (off by default, as for new repositories): while off, a GITHUB_TOKEN gets
    403 creating a pull request and 422 approving one. ``default_workflow_permissions`` is the
    same settings page's ``read`` or ``write`` default for ``GITHUB_TOKEN``. ``secrets`` are
    the repository's Actions secrets and ``org_secrets`` the organization's secrets shared
    with it (name → ``created_at``; their values never leave GitHub).
    """

    owner: str
    name: str
    id: int
    default_branch: str = "main"
    remote: Path | None = None
    private: bool = False
    allow_actions_pull_requests: bool = False
    default_workflow_permissions: str = "read"
    secrets: dict[str, str] = field(default_factory=dict)
    org_secrets: dict[str, str] = field(default_factory=dict)
    collaborators: dict[str, str] = field(default_factory=dict)
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    rules: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    protection: dict[str, dict[str, Any]] = field(default_factory=dict)
    dispatches: list[dict[str, Any]] = field(default_factory=list)
    artifacts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    issue_events: list[dict[str, Any]] = field(default_factory=list)
    merge_attempts: list[dict[str, Any]] = field(default_factory=list)
    workflows: dict[str, int] = field(default_factory=dict)
    # Workflow runs by id: {"id", "status": queued|in_progress|completed, "conclusion", and
    # "cancel_requested" once a cancel was asked for (GitHubFake.settle_cancels finishes it)}.
    workflow_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    check_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    # Commits GitHub verified (sha → the account it attributes them to): what it reports for
    # a commit an App made through the API, which GitHub signs itself.
    verified_commits: dict[str, str] = field(default_factory=dict)
    # The folder of a runner's artifact service (act's: <run id>/<name>/<name>.zip) whose
    # artifacts the REST endpoints list and serve beside `artifacts` (runs.RunsMixin).
    artifact_store: Path | None = None

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    # -- arranging and reading helpers ------------------------------------------------------

    def pulls(self) -> list[dict[str, Any]]:
        """Every pull request (as the fake's internal records)."""
        return [i for i in self.issues.values() if i.get("is_pull")]

    def open_pulls(self) -> list[dict[str, Any]]:
        return [p for p in self.pulls() if p["state"] == "open"]

    def own_open_pulls(self) -> list[dict[str, Any]]:
        """Open PRs whose head branch is this repository's (not a fork's)."""
        return [p for p in self.open_pulls() if p.get("head_owner", self.owner) == self.owner]

    def protect(self, branch: str, *, checks: tuple[str, ...] = (), strict: bool = True) -> None:
        """Arrange branch protection on ``branch`` requiring the status checks ``checks``
        (their contexts, any App), as the settings page saves it."""
        self.protection[branch] = {
            "required_status_checks": {
                "strict": strict,
                "contexts": list(checks),
                "checks": [{"context": c, "app_id": None} for c in checks],
            },
            "enforce_admins": {"enabled": False},
            "required_linear_history": {"enabled": False},
            "allow_force_pushes": {"enabled": False},
            "allow_deletions": {"enabled": False},
        }

    def issue_comments(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.comments.values() if c["issue"] == number]

    def checks_for(self, sha: str) -> list[dict[str, Any]]:
        """The check runs on commit ``sha``, oldest first."""
        return [c for c in self.check_runs.values() if c["head_sha"] == sha]

    def statuses_for(self, sha: str) -> list[dict[str, Any]]:
        """The commit statuses on ``sha``, newest first (as GitHub lists them)."""
        return [s for s in reversed(self.statuses) if s["sha"] == sha]

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

    def has_commit(self, sha: str) -> bool:
        """Whether the remote holds commit ``sha`` (``True`` without a remote)."""
        if self.remote is None:
            return True
        proc = subprocess.run(
            ["git", "--git-dir", str(self.remote), "cat-file", "-e", f"{sha}^{{commit}}"],
            capture_output=True,
            check=False,
        )
        return proc.returncode == 0

    def branch_heads(self) -> dict[str, str]:
        """Every ``refs/heads/*`` of the remote → its commit (empty without a remote)."""
        if self.remote is None:
            return {}
        proc = subprocess.run(
            [
                "git",
                "--git-dir",
                str(self.remote),
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/heads",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        pairs = (line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
        return {ref: sha for ref, sha in pairs}
