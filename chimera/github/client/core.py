"""The core of :class:`~chimera.github.client.client.GitHubClient`: the PyGithub session, the one
error mapping and the one retry loop every call goes through.

* **Error mapping** (:meth:`ClientCore._map`). Every PyGithub exception and every transport
  error (``requests`` timeouts, refused connections) becomes a :mod:`chimera.errors` GitHub
  error, raised with ``raise ... from exc``: :class:`~chimera.errors.GitHubNotFound` (404),
  :class:`~chimera.errors.GitHubPermissionDenied` (401/403 that are not rate limits),
  :class:`~chimera.errors.GitHubRateLimited` (still limited after the retries),
  :class:`~chimera.errors.GitHubApiError` (anything else; ``status`` and ``retry_after``).
* **Retries** (:meth:`ClientCore._call`) for HTTP 5xx, secondary rate limits (403/429 with
  ``Retry-After`` or GitHub's "secondary rate limit" message) and timeouts, with the wait
  GitHub asks for (capped), else exponential backoff. PyGithub's own urllib3 retry is switched
  off so that this is the one place that decides — it would also re-send POSTs blindly.

The endpoint groups are mixins over this class (``client_issues``, ``client_pulls``,
``client_merge``, ``client_actions``, ``client_commits``); they call GitHub only through
:meth:`ClientCore._call`, :meth:`ClientCore._graphql` and :meth:`ClientCore._raw`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from chimera.errors import (
    GitHubApiError,
    GitHubNotFound,
    GitHubPermissionDenied,
    GitHubRateLimited,
    MissingExtraError,
)

if TYPE_CHECKING:
    from github.Repository import Repository

__all__ = ["DEFAULT_API_URL", "ClientCore", "RetryPolicy"]

log = logging.getLogger("chimera.github.client.client")
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


class ClientCore:
    """The session, error mapping and retries shared by every endpoint mixin; construct
    :class:`~chimera.github.client.client.GitHubClient`, not this (its docstring lists the
    arguments).

    Raises:
        MissingExtraError: PyGithub (the ``github`` extra) is not installed.
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
            raise MissingExtraError("the GitHub integration", "github") from exc
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

    def _graphql(self, name: str, fn: Callable[[], T]) -> T:
        """Run the GraphQL request ``fn`` through :meth:`_call`; a GraphQL error PyGithub raises
        outside its REST exception tree becomes a :class:`~chimera.errors.GitHubApiError`."""
        try:
            return self._call(f"GraphQL {name}", fn)
        except GitHubApiError:
            raise
        except Exception as exc:  # PyGithub raises GithubException subclasses for GraphQL errors
            raise GitHubApiError(f"GitHub GraphQL {name}: {exc}") from exc
