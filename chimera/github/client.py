"""The PyGithub boundary: every GitHub call Chimera makes goes through :class:`GitHubClient`.

Responsibilities:

* **Error mapping.** Every PyGithub exception and every transport error (``requests``
  timeouts, refused connections) leaves this module as a :mod:`chimera.errors` GitHub error,
  raised with ``raise ... from exc``: :class:`~chimera.errors.GitHubNotFound` (404),
  :class:`~chimera.errors.GitHubPermissionDenied` (401/403 that are not rate limits),
  :class:`~chimera.errors.GitHubRateLimited` (still limited after the retries),
  :class:`~chimera.errors.GitHubApiError` (anything else; ``status`` and ``retry_after``).
* **Retries** for HTTP 5xx, secondary rate limits (403/429 with ``Retry-After`` or GitHub's
  "secondary rate limit" message) and timeouts, with the wait GitHub asks for (capped), else
  exponential backoff. PyGithub's own urllib3 retry is switched off so that this is the one
  place that decides — it would also re-send POSTs blindly.
* **No duplicates.** A write that is not idempotent (open a PR, post a comment) is retried
  only after looking for what a lost reply may already have created (a PR from the same head,
  a comment carrying the same marker); GitHub's own 422 "a pull request already exists" is
  answered with the existing PR.

Shapes returned are small frozen dataclasses (:class:`IssueInfo`, :class:`PullInfo`,
:class:`ReviewInfo`), so callers never hold PyGithub objects. Secondary-rate-limit etiquette
(GitHub's "Best practices": serial requests, about a second between writes) is PyGithub's
throttle, on by default and switched off by tests.
"""

from __future__ import annotations

import io
import logging
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from chimera.errors import (
    GitHubApiError,
    GitHubError,
    GitHubNotFound,
    GitHubPermissionDenied,
    GitHubRateLimited,
    MissingExtraError,
)

if TYPE_CHECKING:
    from github.Repository import Repository

__all__ = [
    "DEFAULT_API_URL",
    "GitHubClient",
    "IssueInfo",
    "PullInfo",
    "RetryPolicy",
    "ReviewInfo",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_API_URL = "https://api.github.com"


@dataclass(frozen=True)
class RetryPolicy:
    """How calls are retried.

    Attributes:
        attempts: total tries per call (1 = no retry).
        backoff_s: first wait for errors without ``Retry-After`` (doubles each retry).
        max_wait_s: the longest single wait; a ``Retry-After`` above it is not waited for —
            the call fails with :class:`GitHubRateLimited` (the caller reports "rate-limited").
        timeout_s: per-request timeout, seconds.
    """

    attempts: int = 4
    backoff_s: float = 1.0
    max_wait_s: float = 60.0
    timeout_s: int = 30


@dataclass(frozen=True)
class IssueInfo:
    number: int
    title: str
    body: str
    state: str
    locked: bool
    labels: tuple[str, ...]
    is_pull: bool
    author: str
    html_url: str
    created_at: str


@dataclass(frozen=True)
class PullInfo:
    number: int
    title: str
    body: str
    state: str
    draft: bool
    merged: bool
    head_ref: str
    head_sha: str
    base_ref: str
    labels: tuple[str, ...]
    author: str
    html_url: str
    node_id: str
    requested_reviewers: tuple[str, ...]
    created_at: str
    auto_merge: bool


@dataclass(frozen=True)
class ReviewInfo:
    id: int
    user: str
    user_type: str
    state: str
    commit_id: str
    body: str


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="seconds")
    return str(value or "")


def _is_secondary_rate_limit(status: int | None, data: Any, headers: dict[str, str]) -> bool:
    if status not in (403, 429):
        return False
    if status == 429:
        return True
    message = str(data.get("message", "")) if isinstance(data, dict) else str(data)
    lowered = {k.lower(): v for k, v in headers.items()}
    return (
        "rate limit" in message.lower()
        or "retry-after" in lowered
        or lowered.get("x-ratelimit-remaining") == "0"
    )


def _retry_after(headers: dict[str, str]) -> float | None:
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    raw = lowered.get("retry-after")
    if raw is None:
        if lowered.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in lowered:
            try:
                return max(0.0, float(lowered["x-ratelimit-reset"]) - time.time())
            except ValueError:
                return None
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None


class GitHubClient:
    """One repository, through PyGithub, with mapped errors, retries and no duplicates.

    Args:
        repository: ``owner/name``.
        token: a GitHub token (``GITHUB_TOKEN``, an App installation token or a PAT).
        api_url: the REST base URL (``https://api.github.com``; GitHub Enterprise Server:
            ``https://HOST/api/v3``).
        retry: the retry policy.
        throttle: PyGithub's pacing between requests and writes (keep on in production).
        sleep: the sleep function (tests pass a recorder).

    Raises:
        MissingExtraError: PyGithub (the ``agent`` extra) is not installed.
    """

    def __init__(
        self,
        repository: str,
        token: str | None,
        *,
        api_url: str = DEFAULT_API_URL,
        retry: RetryPolicy | None = None,
        throttle: bool = True,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        try:
            import github
        except ImportError as exc:  # pragma: no cover - the dev install has it
            raise MissingExtraError("the GitHub integration", "agent") from exc
        self.repository = repository
        self.api_url = api_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.waits: list[float] = []
        auth = github.Auth.Token(token) if token else None
        self._gh = github.Github(
            auth=auth,
            base_url=self.api_url,
            timeout=self.retry.timeout_s,
            retry=None,
            seconds_between_requests=0.25 if throttle else None,
            seconds_between_writes=1.0 if throttle else None,
            lazy=True,
        )
        self._repo_obj: Repository | None = None

    # -- the retry / mapping core ----------------------------------------------------------

    def _map(self, what: str, exc: BaseException) -> GitHubApiError:
        import github
        import requests

        if isinstance(exc, github.GithubException):
            status = exc.status
            headers = dict(exc.headers or {})
            data = exc.data
            message = data.get("message", "") if isinstance(data, dict) else str(data or "")
            errors = data.get("errors") if isinstance(data, dict) else None
            if errors:
                details = "; ".join(
                    str(e.get("message") or e.get("code") or e) if isinstance(e, dict) else str(e)
                    for e in errors
                )
                message = f"{message} ({details})"
            text = f"GitHub {what}: HTTP {status}: {message or 'no message'}"
            retry_after = _retry_after(headers)
            if _is_secondary_rate_limit(status, data, headers) or isinstance(
                exc, github.RateLimitExceededException
            ):
                return GitHubRateLimited(text, status=status, retry_after=retry_after)
            if status == 404:
                return GitHubNotFound(text, status=status)
            if status in (401, 403):
                return GitHubPermissionDenied(text, status=status)
            return GitHubApiError(text, status=status, retry_after=retry_after)
        if isinstance(exc, requests.Timeout):
            return GitHubApiError(
                f"GitHub {what}: timed out after {self.retry.timeout_s}s", status=None
            )
        if isinstance(exc, requests.RequestException):
            return GitHubApiError(f"GitHub {what}: {type(exc).__name__}: {exc}", status=None)
        return GitHubApiError(f"GitHub {what}: {type(exc).__name__}: {exc}", status=None)

    @staticmethod
    def _retryable(err: GitHubApiError) -> bool:
        if isinstance(err, GitHubRateLimited):
            return True
        return err.status is None or err.status >= 500

    def _call(
        self,
        what: str,
        fn: Callable[[], T],
        *,
        recover: Callable[[], T | None] | None = None,
    ) -> T:
        """Run ``fn`` with retries; ``recover`` (for non-idempotent writes) looks for the result
        of an attempt whose reply was lost, before any retry."""
        import github
        import requests

        last: GitHubApiError | None = None
        for attempt in range(1, self.retry.attempts + 1):
            if last is not None and recover is not None:
                if last.status is None:
                    # A timed-out write may still land: give it the time the request had
                    # before looking it up, or the retry duplicates it.
                    self.sleep(min(float(self.retry.timeout_s), self.retry.max_wait_s))
                found = self._quiet(recover)
                if found is not None:
                    log.info("%s: a previous attempt had succeeded; not repeating it", what)
                    return found
            try:
                return fn()
            except (github.GithubException, requests.RequestException) as exc:
                err = self._map(what, exc)
                if not self._retryable(err) or attempt == self.retry.attempts:
                    raise err from exc
                wait = (
                    err.retry_after
                    if err.retry_after is not None
                    else self.retry.backoff_s * 2 ** (attempt - 1)
                )
                if wait > self.retry.max_wait_s:
                    raise GitHubRateLimited(
                        f"{err} (asked to wait {wait:.0f}s, more than the "
                        f"{self.retry.max_wait_s:.0f}s allowed)",
                        status=err.status,
                        retry_after=wait,
                    ) from exc
                log.warning(
                    "%s (attempt %d/%d); retrying in %.2fs", err, attempt, self.retry.attempts, wait
                )
                self.waits.append(wait)
                self.sleep(wait)
                last = err
        raise AssertionError("unreachable")  # pragma: no cover

    def _quiet(self, fn: Callable[[], T | None]) -> T | None:
        import github
        import requests

        try:
            return fn()
        except (github.GithubException, requests.RequestException):
            return None

    @property
    def _repo(self) -> Repository:
        if self._repo_obj is None:
            self._repo_obj = self._gh.get_repo(self.repository)
        return self._repo_obj

    def _raw(self, method: str, url: str, payload: dict[str, Any] | None = None) -> Any:
        _headers, data = self._gh.requester.requestJsonAndCheck(method, url, input=payload)
        return data

    # -- identity and permissions ----------------------------------------------------------

    def whoami(self) -> str | None:
        """The token's login, or ``None`` when the token cannot read ``/user`` (App tokens)."""
        try:
            return self._call("GET /user", lambda: str(self._gh.get_user().login))
        except GitHubPermissionDenied:
            return None

    def user_type(self, login: str) -> str:
        """``User``, ``Bot``, ``Organization`` (``Unknown`` for no such account); a login
        ending in ``[bot]`` is a ``Bot``."""
        if login.endswith("[bot]"):
            return "Bot"
        try:
            return self._call(
                f"GET /users/{login}",
                lambda: str(self._raw("GET", f"/users/{login}").get("type", "User")),
            )
        except GitHubNotFound:
            return "Unknown"  # no such account: its permission is "none" anyway

    def permission(self, login: str) -> str:
        """The role of ``login`` on the repository: ``admin``, ``maintain``, ``write``,
        ``triage``, ``read`` or ``none`` (``role_name`` when GitHub gives it, else the legacy
        permission)."""

        def get() -> str:
            data = self._raw("GET", f"/repos/{self.repository}/collaborators/{login}/permission")
            return str(data.get("role_name") or data.get("permission") or "none")

        try:
            return self._call(f"GET permission of {login}", get)
        except GitHubNotFound:
            return "none"

    # -- issues, labels, comments ----------------------------------------------------------

    def _issue_info(self, raw: Any) -> IssueInfo:
        return IssueInfo(
            number=int(raw.number),
            title=str(raw.title or ""),
            body=str(raw.body or ""),
            state=str(raw.state),
            locked=bool(raw.locked),
            labels=tuple(label.name for label in raw.labels),
            is_pull=raw.pull_request is not None,
            author=str(raw.user.login) if raw.user else "",
            html_url=str(raw.html_url),
            created_at=_iso(raw.created_at),
        )

    def issue(self, number: int) -> IssueInfo:
        return self._call(
            f"GET issue #{number}", lambda: self._issue_info(self._repo.get_issue(number))
        )

    def issues_with_label(self, label: str) -> list[IssueInfo]:
        """Open issues (not PRs) carrying ``label``, oldest first."""

        def get() -> list[IssueInfo]:
            found = self._repo.get_issues(
                state="open", labels=[label], sort="created", direction="asc"
            )
            return [i for i in (self._issue_info(x) for x in found) if not i.is_pull]

        return self._call(f"GET issues labelled {label}", get)

    def labeller(self, number: int, label: str) -> str | None:
        """Who last added ``label`` to issue ``number``, from the issue's events (``None``: no
        such event). Dispatch inputs never say this: ``github-actions[bot]`` is shared by
        every workflow in the repository, so any of them could name anyone.

        Raises:
            GitHubError: the API failed after retries.
        """

        def get() -> str | None:
            who: str | None = None
            for ev in self._repo.get_issue(number).get_events():
                name = ev.label.name if ev.event == "labeled" and ev.label else None
                if name == label and ev.actor is not None:
                    who = str(ev.actor.login)
            return who

        return self._call(f"GET events of #{number}", get)

    def add_labels(self, number: int, *labels: str) -> None:
        if labels:
            self._call(
                f"POST labels on #{number}",
                lambda: self._repo.get_issue(number).add_to_labels(*labels),
            )

    def remove_label(self, number: int, label: str) -> bool:
        """Remove ``label``; ``False`` when it was not there (not an error)."""
        try:
            self._call(
                f"DELETE label {label} on #{number}",
                lambda: self._repo.get_issue(number).remove_from_labels(label),
            )
        except GitHubNotFound:
            return False
        return True

    def comments(self, number: int) -> list[tuple[int, str, str]]:
        """``(id, author login, body)`` of every comment on issue/PR ``number``, oldest first."""

        def get() -> list[tuple[int, str, str]]:
            return [
                (int(c.id), str(c.user.login) if c.user else "", str(c.body or ""))
                for c in self._repo.get_issue(number).get_comments()
            ]

        return self._call(f"GET comments of #{number}", get)

    def comment(self, number: int, body: str, *, marker: str | None = None) -> int:
        """Post a comment; returns its id. With ``marker`` (a string the body contains), a
        comment already holding it is not posted twice (a retried write whose reply was lost,
        or a re-run of the same step)."""

        def find() -> int | None:
            if marker is None:
                return None
            for cid, _user, text in self.comments(number):
                if marker in text:
                    return cid
            return None

        if marker is not None:
            existing = find()
            if existing is not None:
                return existing
        return self._call(
            f"POST comment on #{number}",
            lambda: int(self._repo.get_issue(number).create_comment(body).id),
            recover=find if marker is not None else None,
        )

    def edit_comment(self, number: int, comment_id: int, body: str) -> None:
        """Replace the body of comment ``comment_id`` on issue/PR ``number`` (idempotent)."""

        def edit() -> None:
            self._repo.get_issue(number).get_comment(comment_id).edit(body)

        self._call(f"PATCH comment {comment_id} on #{number}", edit)

    def set_issue_state(self, number: int, state: str) -> None:
        self._call(f"PATCH issue #{number}", lambda: self._repo.get_issue(number).edit(state=state))

    # -- pull requests ---------------------------------------------------------------------

    def _pull_info(self, raw: Any) -> PullInfo:
        return PullInfo(
            number=int(raw.number),
            title=str(raw.title or ""),
            body=str(raw.body or ""),
            state=str(raw.state),
            draft=bool(raw.draft),
            merged=bool(raw.merged),
            head_ref=str(raw.head.ref),
            head_sha=str(raw.head.sha),
            base_ref=str(raw.base.ref),
            labels=tuple(label.name for label in raw.labels),
            author=str(raw.user.login) if raw.user else "",
            html_url=str(raw.html_url),
            node_id=str(raw.node_id),
            requested_reviewers=tuple(u.login for u in raw.requested_reviewers),
            created_at=_iso(raw.created_at),
            auto_merge=raw.raw_data.get("auto_merge") is not None,
        )

    def pull(self, number: int) -> PullInfo:
        return self._call(f"GET PR #{number}", lambda: self._pull_info(self._repo.get_pull(number)))

    def pulls_from(self, branch: str, *, state: str = "open") -> list[PullInfo]:
        """PRs whose head is ``branch`` of this repository."""
        owner = self.repository.split("/")[0]

        def get() -> list[PullInfo]:
            return [
                self._pull_info(p)
                for p in self._repo.get_pulls(state=state, head=f"{owner}:{branch}")
            ]

        return self._call(f"GET PRs from {branch}", get)

    def pulls(self, *, state: str = "open") -> list[PullInfo]:
        def get() -> list[PullInfo]:
            return [
                self._pull_info(p)
                for p in self._repo.get_pulls(state=state, sort="created", direction="desc")
            ]

        return self._call(f"GET PRs ({state})", get)

    def create_pull(
        self, *, title: str, body: str, head: str, base: str, draft: bool
    ) -> tuple[PullInfo, bool]:
        """Open a PR from ``head`` — or return the open one that already exists.

        Returns ``(pull, created)``. Never opens a second PR for the same head: an existing
        open PR is looked up before the first try and after every failed one, and GitHub's 422
        "already exists" answer resolves to it.
        """

        def find() -> PullInfo | None:
            open_ = self.pulls_from(head)
            return open_[0] if open_ else None

        existing = find()
        if existing is not None:
            return existing, False
        try:
            pull = self._call(
                f"POST PR from {head}",
                lambda: self._pull_info(
                    self._repo.create_pull(
                        base=base, head=head, title=title, body=body, draft=draft
                    )
                ),
                recover=find,
            )
        except GitHubApiError as err:
            if err.status == 422 and "already exists" in str(err):
                again = find()
                if again is not None:
                    return again, False
            raise
        # A PR found by ``recover`` was created by an attempt whose reply was lost: still
        # "created" by this call.
        return pull, True

    def update_pull(
        self,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> PullInfo:
        fields: dict[str, Any] = {}
        if title is not None:
            fields["title"] = title
        if body is not None:
            fields["body"] = body
        if state is not None:
            fields["state"] = state

        def patch() -> PullInfo:
            pr = self._repo.get_pull(number)
            pr.edit(**fields)
            return self._pull_info(self._repo.get_pull(number))

        return self._call(f"PATCH PR #{number}", patch)

    def request_reviewers(self, number: int, logins: Iterable[str]) -> None:
        wanted = [u for u in logins if u]
        if wanted:
            self._call(
                f"POST reviewers on #{number}",
                lambda: self._repo.get_pull(number).create_review_request(reviewers=wanted),
            )

    def reviews(self, number: int) -> list[ReviewInfo]:
        def get() -> list[ReviewInfo]:
            return [
                ReviewInfo(
                    id=int(r.id),
                    user=str(r.user.login) if r.user else "",
                    user_type=str(r.user.type) if r.user else "User",
                    state=str(r.state),
                    commit_id=str(r.commit_id),
                    body=str(r.body or ""),
                )
                for r in self._repo.get_pull(number).get_reviews()
            ]

        return self._call(f"GET reviews of #{number}", get)

    def pulls_created_since(self, since: datetime, head_prefix: str) -> int:
        """How many PRs from ``head_prefix*`` branches were opened after ``since``."""

        def count() -> int:
            n = 0
            for pr in self._repo.get_pulls(state="all", sort="created", direction="desc"):
                created = pr.created_at
                if created is not None and created.tzinfo is None:
                    created = created.replace(tzinfo=UTC)
                if created is not None and created < since:
                    break
                if str(pr.head.ref).startswith(head_prefix):
                    n += 1
            return n

        return self._call("GET recent PRs", count)

    # -- merge queue, auto-merge, drafts (GraphQL) -----------------------------------------

    def branch_rules(self, branch: str) -> list[dict[str, Any]]:
        """The rules that apply to ``branch`` (rulesets), ``[]`` when none or unreadable."""
        try:
            data = self._call(
                f"GET rules of {branch}",
                lambda: self._raw("GET", f"/repos/{self.repository}/rules/branches/{branch}"),
            )
        except (GitHubNotFound, GitHubPermissionDenied):
            return []
        return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []

    def requires_merge_queue(self, branch: str) -> bool:
        return any(r.get("type") == "merge_queue" for r in self.branch_rules(branch))

    def _mutation(self, name: str, inp: dict[str, Any], output: str) -> dict[str, Any]:
        def send() -> dict[str, Any]:
            _h, data = self._gh.requester.graphql_named_mutation(name, inp, output)
            return dict(data)

        try:
            return self._call(f"GraphQL {name}", send)
        except GitHubApiError:
            raise
        except Exception as exc:  # PyGithub raises GithubException subclasses for GraphQL errors
            raise GitHubApiError(f"GitHub GraphQL {name}: {exc}") from exc

    def enable_auto_merge(self, pull: PullInfo, *, method: str = "SQUASH") -> None:
        """GitHub's auto-merge: GitHub merges once branch protection is satisfied."""
        self._mutation(
            "enablePullRequestAutoMerge",
            {
                "pullRequestId": pull.node_id,
                "mergeMethod": method,
                "expectedHeadOid": pull.head_sha,
            },
            "clientMutationId",
        )

    def enqueue(self, pull: PullInfo) -> None:
        """Add the PR to the base branch's merge queue (the queue merges, not Chimera)."""
        self._mutation(
            "enqueuePullRequest",
            {"pullRequestId": pull.node_id, "expectedHeadOid": pull.head_sha},
            "clientMutationId",
        )

    def mark_ready(self, pull: PullInfo) -> None:
        self._mutation(
            "markPullRequestReadyForReview",
            {"pullRequestId": pull.node_id},
            "clientMutationId pullRequest { isDraft }",
        )

    def in_merge_queue(self, pull: PullInfo) -> bool:
        """Whether the PR sits in a merge queue (Chimera never pushes to a queued branch)."""
        query = (
            "query($id: ID!) { node(id: $id) { ... on PullRequest { mergeQueueEntry { id } } } }"
        )

        def ask() -> bool:
            _h, data = self._gh.requester.graphql_query(query, {"id": pull.node_id})
            node = (data.get("data") or {}).get("node") or {}
            return node.get("mergeQueueEntry") is not None

        try:
            return self._call("GraphQL mergeQueueEntry", ask)
        except GitHubApiError:
            raise
        except Exception as exc:
            raise GitHubApiError(f"GitHub GraphQL mergeQueueEntry: {exc}") from exc

    # -- workflows and artifacts -----------------------------------------------------------

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> None:
        """``workflow_dispatch`` of ``workflow`` (file name or id) on ``ref``.

        Not retried blindly: a dispatch whose reply was lost (a 5xx or a timeout) may still
        have started a run, and a second dispatch would start the issue twice. Only rate
        limits — requests GitHub refused before acting — are retried; anything else is raised
        for the caller to report (the queue gives the issue its place back).
        """
        url = f"/repos/{self.repository}/actions/workflows/{workflow}/dispatches"
        import github
        import requests

        for attempt in range(1, self.retry.attempts + 1):
            try:
                self._raw("POST", url, {"ref": ref, "inputs": inputs})
                return
            except (github.GithubException, requests.RequestException) as exc:
                err = self._map(f"POST dispatch {workflow}", exc)
                if not isinstance(err, GitHubRateLimited) or attempt == self.retry.attempts:
                    raise err from exc
                wait = err.retry_after if err.retry_after is not None else self.retry.backoff_s
                if wait > self.retry.max_wait_s:
                    raise err from exc
                self.waits.append(wait)
                self.sleep(wait)

    def workflow_run(self, run_id: int) -> tuple[str, str | None] | None:
        """``(status, conclusion)`` of workflow run ``run_id`` (``status``: ``queued``,
        ``in_progress``, ``completed``...); ``None`` when GitHub has no such run (deleted).

        Raises:
            GitHubError: the API failed after retries.
        """
        url = f"/repos/{self.repository}/actions/runs/{int(run_id)}"

        def get() -> tuple[str, str | None] | None:
            data = self._raw("GET", url)
            conclusion = data.get("conclusion")
            return str(data.get("status") or ""), str(conclusion) if conclusion else None

        try:
            return self._call(f"GET workflow run {run_id}", get)
        except GitHubNotFound:
            return None

    def cancel_workflow_run(self, run_id: int) -> bool:
        """Ask GitHub to cancel workflow run ``run_id`` (asynchronous: it may still run for a
        while); ``False`` when it is already finished or gone.

        Raises:
            GitHubError: the API failed after retries.
        """
        url = f"/repos/{self.repository}/actions/runs/{int(run_id)}/cancel"
        try:
            self._call(f"POST cancel workflow run {run_id}", lambda: self._raw("POST", url))
        except GitHubNotFound:
            return False
        except GitHubApiError as exc:
            if exc.status == 409:
                return False
            raise
        return True

    def download_artifact(self, run_id: int, name: str, dest: Path) -> Path:
        """Download artifact ``name`` of workflow run ``run_id`` and unzip it into ``dest``.

        Raises:
            GitHubNotFound: the run has no such artifact (expired or never uploaded).
        """
        listing = self._call(
            f"GET artifacts of run {run_id}",
            lambda: self._raw(
                "GET", f"/repos/{self.repository}/actions/runs/{run_id}/artifacts?name={name}"
            ),
        )
        found = [a for a in listing.get("artifacts", []) if a.get("name") == name]
        if not found or found[0].get("expired"):
            raise GitHubNotFound(
                f"workflow run {run_id} has no artifact {name!r} (expired or never uploaded)",
                status=404,
            )
        art_id = int(found[0]["id"])
        data = self._call(
            f"GET artifact {art_id}",
            lambda: self._blob(f"/repos/{self.repository}/actions/artifacts/{art_id}/zip"),
        )
        dest.mkdir(parents=True, exist_ok=True)
        root = dest.resolve()
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for member in zf.infolist():
                target = (dest / member.filename).resolve()
                if not target.is_relative_to(root):
                    raise GitHubError(
                        f"artifact {name!r} holds a path outside its folder: {member.filename}"
                    )
            zf.extractall(dest)
        return dest

    def _blob(self, path: str) -> bytes:
        """GET ``path`` as bytes with the client's token, following GitHub's redirect."""
        import github
        import requests

        headers = {"Accept": "application/vnd.github+json"}
        auth = self._gh.requester.auth
        if auth is not None:
            headers["Authorization"] = f"{auth.token_type} {auth.token}"
        resp = requests.get(
            self.api_url + path,
            headers=headers,
            timeout=self.retry.timeout_s,
            allow_redirects=False,
        )
        if resp.status_code in (301, 302, 303, 307) and "location" in resp.headers:
            resp = requests.get(resp.headers["location"], timeout=self.retry.timeout_s)
        if resp.status_code >= 400:
            try:
                payload: Any = resp.json()
            except ValueError:
                payload = {"message": resp.text[:200]}
            raise github.GithubException(resp.status_code, payload, dict(resp.headers))
        return bytes(resp.content)

    # -- the trust chain: base commits, the Spec verdict on the head, CI start -------------

    def branch_sha(self, branch: str) -> str:
        """The commit at the tip of ``branch`` (40 hex digits)."""

        def get() -> str:
            data = self._raw("GET", f"/repos/{self.repository}/branches/{branch}")
            return str(data["commit"]["sha"])

        return self._call(f"GET branch {branch}", get)

    def spec_verdict(self, sha: str, *, passed: bool, title: str, summary: str) -> str:
        """Show the Spec verdict on commit ``sha``: a check run named ``Chimera Spec`` (an App
        or ``GITHUB_TOKEN``), else — a personal token gets GitHub's 403 for check runs — a
        commit status with the context ``chimera/spec``. Returns ``"check_run"`` or
        ``"status"``.

        Raises:
            GitHubError: both writes failed (after retries).
        """
        check = {
            "name": "Chimera Spec",
            "head_sha": sha,
            "status": "completed",
            "conclusion": "success" if passed else "failure",
            "output": {"title": title[:250], "summary": summary[:60000]},
        }
        try:
            self._call(
                f"POST check run on {sha[:12]}",
                lambda: self._raw("POST", f"/repos/{self.repository}/check-runs", check),
            )
            return "check_run"
        except GitHubPermissionDenied:
            status = {
                "state": "success" if passed else "failure",
                "context": "chimera/spec",
                "description": title[:140],
            }
            self._call(
                f"POST status on {sha[:12]}",
                lambda: self._raw("POST", f"/repos/{self.repository}/statuses/{sha}", status),
            )
            return "status"
