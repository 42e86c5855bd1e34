"""The one exception tree of Chimera.

Every error Chimera raises on purpose derives from :class:`ChimeraError`; errors of the
libraries it drives (LiteLLM, PyGithub, git) are mapped onto this tree at the boundary with
``raise ... from exc`` so callers never need to import a third-party exception type::

    ChimeraError
    ├── UsageError              bad command-line or option value (CLI exit 2)
    ├── ConfigError             invalid ``[tool.chimera]`` / ``chimera.toml``
    │   └── FileProblems            a YAML file of Chimera's own formats: every problem found
    ├── MissingExtraError       a feature needs an optional extra that is not installed
    ├── SpecError               a Spec failed validation; carries every SpecProblem found
    │   └── CrewError           a crew file failed validation (same problems, same shape)
    ├── PluginError             a plugin failed to load or registered something invalid
    ├── CheckError              a requirement could not be evaluated (status ``error``)
    │   ├── PatternTimeout      a regular expression exceeded its time limit
    │   ├── FileTooLarge        a selected file is over the engine's size limit
    │   └── NotARegularFile     a selected path is a FIFO, device or socket
    ├── RunnerError             a subprocess could not be started
    ├── SandboxError            the sandbox refused or failed to set up a command
    ├── ToolError               a tool call was refused or failed (fed back to the model)
    │   └── PathEscapeError     a path leaves the workspace or touches .git/ / .chimera/
    ├── ConnectorError          a connector (MCP server, OpenAPI document) cannot start or load
    ├── InternalError           an operation Chimera runs for itself failed (CLI exit 3)
    ├── WorkspaceError          snapshot / restore of a working tree failed
    │   └── WorkspaceGitError       a git command of the snapshot store failed (also Internal)
    ├── AuditError              the audit log cannot be written, or does not verify
    ├── GovernanceError         a governance component was misused or misconfigured
    │   ├── QuarantineError     a quarantined model's extraction did not fit its schema
    │   └── CronError           a cron expression does not parse
    ├── BudgetExceeded          a call was refused before sending: it would cross a budget
    ├── ProviderError           a model provider failed (mapped from LiteLLM)
    │   ├── AuthenticationError    missing or rejected credentials
    │   ├── RateLimitError         the provider asked us to slow down
    │   ├── ProviderTimeout        the call timed out
    │   ├── ContextWindowExceeded  the prompt does not fit the model's window
    │   ├── BadRequestError        the provider rejected the request
    │   ├── ToolTurnRefused        tool schemas given to a backend that only judges answers
    │   ├── FusionError            fusion produced no answer (``calls`` itemises the spend)
    │   │   ├── FusionToolsRefused   tool schemas given to fusion (also a ToolTurnRefused)
    │   │   ├── QuorumLost           fewer panel members answered than the quorum
    │   │   └── JudgeOutputInvalid   the judge's analysis stayed invalid after a repair
    │   ├── CascadeExhausted       no cascade tier's answer passed its gates
    │   └── StructuredOutputError  a model's JSON stayed invalid after one repair round
    ├── HandoffError            a file handed between jobs or processes is missing, invalid
    │                           or of an unknown version (the run report, the agent request)
    ├── UnsafePathError         a path built from untrusted parts leaves its root, or a link or
    │                           special file sits where a file from another job was expected
    ├── JournalError            an op journal branch (memory, schedules) cannot be read/written
    │   └── JournalConflict         another writer landed first (re-read, try again)
    └── GitHubError             the GitHub API failed (mapped from PyGithub)
        └── GitHubApiError          an HTTP call failed (``status``, ``retry_after``)
            ├── GitHubRateLimited       still rate-limited after the retries allowed
            ├── GitHubNotFound          HTTP 404
            └── GitHubPermissionDenied  HTTP 401/403 (not a rate limit)

Later subsystems add their subclasses here, so the tree stays drawn in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


class ChimeraError(Exception):
    """Base class of every error Chimera raises on purpose."""


class UsageError(ChimeraError):
    """A command-line argument or option value is invalid."""


class ConfigError(ChimeraError):
    """The configuration is invalid; the message reads ``file: key: message``."""


class FileProblems(ConfigError):
    """A YAML file of one of Chimera's own formats (a scripted model, a benchmark chain, a task
    family, an A/B registration) failed validation.

    ``problems`` holds every problem found in the one pass (``file:line:col: message`` each,
    in file order); the message is the first, with ``(and N more)``. The CLI prints each
    problem on its own line.
    """

    def __init__(self, problems: list[SpecProblem]) -> None:
        self.problems = list(problems)
        first = str(self.problems[0]) if self.problems else "invalid file"
        more = len(self.problems) - 1
        super().__init__(first + (f" (and {more} more)" if more > 0 else ""))


class MissingExtraError(ChimeraError):
    """A feature needs an optional dependency group (extra) that is not installed."""

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(
            f"{feature} needs the '{extra}' extra: pip install 'pytest-chimera[{extra}]'"
        )
        self.feature = feature
        self.extra = extra


@dataclass(frozen=True, slots=True)
class SpecProblem:
    """One validation problem in a spec file.

    ``line`` and ``col`` are 1-based; ``0`` means the problem concerns the file as a whole.
    """

    file: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.col}: {self.message}"
        return f"{self.file}: {self.message}"


class SpecError(ChimeraError):
    """A Spec failed validation.

    ``problems`` holds every problem found in the single validation pass, in file order.
    """

    def __init__(self, problems: list[SpecProblem]) -> None:
        self.problems = list(problems)
        first = str(self.problems[0]) if self.problems else "invalid spec"
        more = len(self.problems) - 1
        super().__init__(first + (f" (and {more} more)" if more > 0 else ""))


class CrewError(SpecError):
    """A crew file (``.chimera.d/crews/*.yaml``) failed validation; ``problems`` holds every
    problem found in the one pass, ``file:line:col`` each."""


class ProfileError(SpecError):
    """An agent profile (``--agent PROFILE.yaml``, a designer's candidate) failed validation;
    ``problems`` holds every problem found in the one pass, ``file:line:col`` each."""


class PluginError(ChimeraError):
    """A plugin could not be loaded, or registered something invalid (a kind name taken twice)."""


class CheckError(ChimeraError):
    """A requirement could not be evaluated; its status becomes ``error``."""


class PatternTimeout(CheckError):
    """A regular expression ran past its time limit (catastrophic backtracking)."""


class FileTooLarge(CheckError):
    """A file is over the check engine's size limit; ``size`` is in bytes."""

    def __init__(self, size: int) -> None:
        super().__init__(f"file of {size} bytes is over the size limit")
        self.size = size


class NotARegularFile(CheckError):
    """A path selected for reading is not a regular file (a FIFO, a device, a socket)."""


class RunnerError(ChimeraError):
    """A subprocess could not be started (missing executable, bad cwd)."""


class SandboxError(ChimeraError):
    """The sandbox could not be set up, or refused a command."""


class ToolError(ChimeraError):
    """A tool call failed or was refused; the message is fed back to the model."""


class PathEscapeError(ToolError):
    """A path leaves the workspace, or touches ``.git/`` or ``.chimera/``."""


class ConnectorError(ChimeraError):
    """A connector could not start or be read (an MCP server, an OpenAPI document); one line."""


class InternalError(ChimeraError):
    """An operation Chimera runs for itself failed — not bad input or configuration: a git
    command on its private snapshot index, say. The CLI reports it in one line (the tool's
    whole message) and exits 3, like any internal error."""


class WorkspaceError(ChimeraError):
    """A workspace snapshot or restore failed."""


class WorkspaceGitError(WorkspaceError, InternalError):
    """A git command the WorkspaceGuard runs on its own store or index failed; the message
    holds git's whole error output on one line."""


class AuditError(ChimeraError):
    """The audit log could not be written, or does not verify."""


class GovernanceError(ChimeraError):
    """A governance component (kernel, taint layer, validators, judge) was misused."""


class QuarantineError(GovernanceError):
    """A quarantined model's reply did not fit the extraction schema (it is never passed on)."""


class CronError(GovernanceError):
    """A cron expression does not parse; the message names the field."""


class BudgetExceeded(ChimeraError):
    """A model call was refused before it was sent because it would cross a budget.

    Attributes:
        limit: the ceiling that refused it: ``"tokens"`` or ``"usd"`` (a USD ceiling also
            refuses a call whose cost is unknown when no token ceiling bounds it).
    """

    def __init__(self, message: str, *, limit: Literal["tokens", "usd"] = "tokens") -> None:
        super().__init__(message)
        self.limit: Literal["tokens", "usd"] = limit


class ProviderError(ChimeraError):
    """A model provider failed; subclasses name the kind of failure."""


class AuthenticationError(ProviderError):
    """Credentials are missing or were rejected."""


class RateLimitError(ProviderError):
    """The provider rate-limited the call."""


class ProviderTimeout(ProviderError):
    """The provider call timed out."""


class ContextWindowExceeded(ProviderError):
    """The prompt does not fit in the model's context window."""


class BadRequestError(ProviderError):
    """The provider rejected the request as malformed."""


class HandoffError(ChimeraError):
    """A file one job or process hands another (the Action's run report, the agent child's
    request) is missing, unreadable, of an unknown version, or does not match its model. The
    message is one line naming the file and the first problem."""


class UnsafePathError(ChimeraError):
    """A path built from untrusted parts (a run id from a marker, a name in an artifact)
    would leave its root, or a link or special file sits where a regular file from another
    job was expected (:mod:`chimera.confine`). The message is one line naming the value."""


class JournalError(ChimeraError):
    """An op journal branch (the memory branch store, the scheduler's tick journal) cannot
    be read or written."""


class JournalConflict(JournalError):
    """Another writer moved the journal branch since it was read: this tick's claim lost the
    race; re-read the journal and plan again (so no job runs twice)."""


class GitHubError(ChimeraError):
    """The GitHub API failed (mapped from PyGithub)."""


class GitHubApiError(GitHubError):
    """An HTTP call to the GitHub API failed.

    ``status`` is the HTTP status (``None`` for a timeout or a connection error);
    ``retry_after`` the seconds GitHub asked to wait, when it said.
    """

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class GitHubRateLimited(GitHubApiError):
    """GitHub kept rate-limiting (primary or secondary limit) after the retries allowed."""


class GitHubNotFound(GitHubApiError):
    """The object does not exist, or the token may not see it (HTTP 404)."""


class GitHubPermissionDenied(GitHubApiError):
    """The token lacks the permission for the call (HTTP 401/403 other than a rate limit)."""


class FusionError(ProviderError):
    """Fusion could not produce an answer.

    ``calls`` holds the itemised calls made before it stopped (they were paid for), as
    :class:`chimera.fusion.accounting.CallRecord` objects.
    """

    def __init__(self, message: str, *, calls: tuple[object, ...] = ()) -> None:
        super().__init__(message)
        self.calls = calls


class ToolTurnRefused(ProviderError):
    """Tool schemas were given to a backend that fuses or gates answers and calls no tools.

    Route tool-calling turns to a single model (``RoutedBackend`` does).
    """


class FusionToolsRefused(FusionError, ToolTurnRefused):
    """Tool schemas were passed to fusion; fusion does not call tools (route them to one model)."""


class QuorumLost(FusionError):
    """Fewer panel members answered than the configured quorum."""


class JudgeOutputInvalid(FusionError):
    """The judge's structured analysis was still invalid after one repair round."""


class CascadeExhausted(ProviderError):
    """No tier of a cascade produced an answer that passed its gates.

    ``calls`` holds every hop tried (each was paid for).
    """

    def __init__(self, message: str, *, calls: tuple[object, ...] = ()) -> None:
        super().__init__(message)
        self.calls = calls


class StructuredOutputError(ProviderError):
    """A model's structured (JSON) output was still invalid after one repair round.

    ``calls`` holds the calls made (each was paid for).
    """

    def __init__(self, message: str, *, calls: tuple[object, ...] = ()) -> None:
        super().__init__(message)
        self.calls = calls
