"""The PyGithub boundary: every GitHub call Chimera makes goes through :class:`GitHubClient`.

Responsibilities:

* **Error mapping.** Every PyGithub exception and every transport error (``requests``
  timeouts, refused connections) leaves the client as a :mod:`chimera.errors` GitHub error,
  raised with ``raise ... from exc``: :class:`~chimera.errors.GitHubNotFound` (404),
  :class:`~chimera.errors.GitHubPermissionDenied` (401/403 that are not rate limits),
  :class:`~chimera.errors.GitHubRateLimited` (still limited after the retries),
  :class:`~chimera.errors.GitHubApiError` (anything else; ``status`` and ``retry_after``).
  The mapping and the retry loop live in one place, :mod:`chimera.github.client.core`.
* **Retries** for HTTP 5xx, secondary rate limits (403/429 with ``Retry-After`` or GitHub's
  "secondary rate limit" message) and timeouts, with the wait GitHub asks for (capped), else
  exponential backoff. PyGithub's own urllib3 retry is switched off so that this is the one
  place that decides — it would also re-send POSTs blindly.
* **No duplicates.** A write that is not idempotent (open a PR, post a comment) is retried
  only after looking for what a lost reply may already have created (a PR from the same head,
  a comment carrying the same marker); GitHub's own 422 "a pull request already exists" is
  answered with the existing PR.

Shapes returned are small frozen dataclasses (:class:`IssueInfo`, :class:`PullInfo`,
:class:`ReviewInfo`, in :mod:`chimera.github.client.shapes`), so callers never hold PyGithub
objects. Secondary-rate-limit etiquette (GitHub's "Best practices": serial requests, about a
second between writes) is PyGithub's throttle, on by default and switched off by tests.

The endpoints are grouped by what they touch, one mixin per sibling module:
:mod:`~chimera.github.client.issues` (identity, issues, labels, comments),
:mod:`~chimera.github.client.pulls` (pull requests, reviews),
:mod:`~chimera.github.client.merge` (rulesets, merge queue, auto-merge: GraphQL),
:mod:`~chimera.github.client.actions` (workflow dispatches, runs, artifacts) and
:mod:`~chimera.github.client.commits` (branch tips, the Spec verdict).
"""

from __future__ import annotations

from chimera.github.client.actions import ActionsMixin
from chimera.github.client.commits import CommitsMixin
from chimera.github.client.core import DEFAULT_API_URL, RetryPolicy
from chimera.github.client.issues import IssuesMixin
from chimera.github.client.merge import MergeMixin
from chimera.github.client.pulls import PullsMixin
from chimera.github.client.shapes import IssueInfo, PullInfo, ReviewInfo

__all__ = [
    "DEFAULT_API_URL",
    "GitHubClient",
    "IssueInfo",
    "PullInfo",
    "RetryPolicy",
    "ReviewInfo",
]


class GitHubClient(IssuesMixin, PullsMixin, MergeMixin, ActionsMixin, CommitsMixin):
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
        MissingExtraError: PyGithub (the ``github`` extra) is not installed.
    """
