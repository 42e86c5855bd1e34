"""What every job receives and returns: the Actions environment as one typed object, the way to
reach GitHub, the job's result, and the helpers decide, drain and agent share.

``chimera action`` reads argv and the environment into an :class:`ActionContext` and an
:class:`~chimera.github.trust.settings.ActionSettings`, calls one job, and writes the job's
:class:`JobResult` back (step outputs, one JSON line, the job summary). Jobs never read
``os.environ`` for their inputs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.errors import UsageError
from chimera.github.client.client import DEFAULT_API_URL, GitHubClient, RetryPolicy
from chimera.github.conversation.documents import outcome_comment
from chimera.github.conversation.outcome import post_outcome_once
from chimera.github.queue.claims import with_fields
from chimera.github.queue.queue import ChangeQueue, QueueLimits
from chimera.github.trust.summary import artifact_link

if TYPE_CHECKING:
    from chimera.github.trust.settings import ActionSettings

__all__ = ["ActionContext", "GitHubAccess", "JobResult", "make_queue", "post_outcome"]

DEFAULT_SERVER_URL = "https://github.com"


@dataclass(frozen=True)
class GitHubAccess:
    """How to reach the GitHub API; :meth:`connect` builds the client only when a job needs
    it, so a job that decides to do nothing needs no token.

    Attributes:
        token: the API token (``None``: not given).
        api_url: the REST API's base URL (GitHub Enterprise Server: its own).
        retry: the client's retry policy (``None``: the client's default).
        throttle: let PyGithub pace its calls (off in tests).
    """

    token: str | None = None
    api_url: str | None = None
    retry: RetryPolicy | None = None
    throttle: bool = True

    def connect(self, repository: str) -> GitHubClient:
        """A client for ``repository`` (``owner/name``).

        Raises:
            UsageError: no token was given.
            MissingExtraError: PyGithub is not installed.
        """
        if not self.token:
            raise UsageError("no GitHub token: set the github-token input (CHIMERA_GITHUB_TOKEN)")
        return GitHubClient(
            repository,
            self.token,
            api_url=self.api_url or DEFAULT_API_URL,
            retry=self.retry,
            throttle=self.throttle,
        )


@dataclass(frozen=True)
class ActionContext:
    """One job's view of the workflow run.

    Attributes:
        event_name: ``GITHUB_EVENT_NAME``.
        payload: the event's payload (``GITHUB_EVENT_PATH``), a JSON object.
        repository_env: ``GITHUB_REPOSITORY`` (``None``: unset; the payload may name it).
        server_url: ``GITHUB_SERVER_URL`` (links).
        workflow_run: ``GITHUB_RUN_ID`` (``None``: a local run).
        run_attempt: ``GITHUB_RUN_ATTEMPT`` (``None``: unknown; a re-run's own outcome key).
        runner_temp: ``RUNNER_TEMP`` (``None``: the system's temporary folder).
        base_ref: ``CHIMERA_BASE_REF``, the base branch a new run's PR targets.
        dispatch_ref: ``CHIMERA_DISPATCH_REF``, the ref drain dispatches the fix workflow on.
        github: how to reach the API.
    """

    event_name: str
    payload: Mapping[str, Any]
    repository_env: str | None = None
    server_url: str = DEFAULT_SERVER_URL
    workflow_run: str | None = None
    run_attempt: str | None = None
    runner_temp: Path | None = None
    base_ref: str | None = None
    dispatch_ref: str | None = None
    github: GitHubAccess = field(default_factory=GitHubAccess)

    def _repo_field(self, key: str) -> str | None:
        repo = self.payload.get("repository")
        value = repo.get(key) if isinstance(repo, Mapping) else None
        return value if isinstance(value, str) and value else None

    @property
    def repository(self) -> str:
        """``owner/name``: ``GITHUB_REPOSITORY``, else the payload's repository.

        Raises:
            UsageError: neither names one.
        """
        repo = self.repository_env or self._repo_field("full_name") or ""
        if "/" not in repo:
            raise UsageError("GITHUB_REPOSITORY is not set and the payload names no repository")
        return repo

    @property
    def default_branch(self) -> str:
        """The payload repository's default branch (``main`` when it names none)."""
        return self._repo_field("default_branch") or "main"

    def connect(self) -> GitHubClient:
        """A client for :attr:`repository` (see :meth:`GitHubAccess.connect`)."""
        return self.github.connect(self.repository)

    def run_link(self) -> str:
        """The link to this workflow run (its artifacts)."""
        return artifact_link(self.server_url, self.repository, self.workflow_run)


@dataclass(frozen=True)
class JobResult:
    """What a job reports back to the workflow.

    Attributes:
        outputs: step outputs (``$GITHUB_OUTPUT``), each a string.
        record: printed as one JSON line on stdout (the job's log).
        summary: Markdown appended to the job summary (``""``: nothing).
    """

    outputs: Mapping[str, str]
    record: Mapping[str, Any]
    summary: str = ""


def make_queue(client: GitHubClient, settings: ActionSettings) -> ChangeQueue:
    """The ChangeQueue over ``client``'s repository, with the settings' identities and limits."""
    return ChangeQueue(
        client,
        identities=settings.identities,
        branch_prefix=settings.branch_prefix,
        limits=QueueLimits(settings.max_open_prs, settings.max_prs_per_hour),
        across_jobs=not settings.no_app,
    )


def post_outcome(
    ctx: ActionContext,
    client: GitHubClient,
    number: int,
    kind: str,
    detail: str,
    *,
    authors: Collection[str] = (),
    fields: Mapping[str, Any] | None = None,
) -> int:
    """Make ``number`` hold this workflow run's one outcome comment, stating ``kind``
    (:func:`chimera.github.conversation.outcome.post_outcome_once`: found again, edited in place,
    never doubled); returns the comment's id. ``authors``: Chimera's identities; ``fields``: more
    for the trailer marker (a stop's ``{"stop": true}``).

    Raises:
        GitHubError: the API failed after retries.
    """

    def render(key: str) -> str:
        body = outcome_comment(kind, issue=number, key=key, detail=detail, run_link=ctx.run_link())
        return with_fields(body, **fields) if fields else body

    return post_outcome_once(
        client,
        number,
        kind,
        render,
        workflow_run=ctx.workflow_run,
        attempt=ctx.run_attempt,
        authors=authors,
    )
