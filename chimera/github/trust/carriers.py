"""The grammar of every value that crosses into a job from somewhere less trusted, parsed once.

The Action's jobs hand each other values through carriers: the agent job's artifact
(``outcome.json``, the run folder), the PR body's ``chimera:pr`` marker, the issue's
``chimera:queued`` marker, decide's and verify's job outputs. Each value is parsed here once,
into a typed field with a strict grammar, at the boundary where it arrives; a value that
fails is refused with one line saying which field of which carrier and why
(:class:`~chimera.errors.HandoffError`), never carried on as a string that becomes a path, a
ref or an argument later.

=================  ==========================================================================
field              grammar
=================  ==========================================================================
run id             the run store's rule (:func:`chimera.orchestration.state.check_run_id`)
commit             40 lowercase hex digits
sha256             64 lowercase hex digits
workflow run       1 to 20 digits (an int is read as its digits)
artifact name      1 to 200 of ``A-Z a-z 0-9 . _ -``, starting with a letter or digit
login              a GitHub login: 1 to 39 of ``A-Z a-z 0-9 _ -``, starting with a letter or
                   digit, optionally ending ``[bot]``
branch             a branch name by git's rules (``git check-ref-format --branch``): no
                   space, control character, backslash, ``~ ^ : ? * [``, ``..``, ``//``, ``@{``,
                   leading ``-`` or ``/``, part starting with ``.``, trailing ``/``, ``.``
                   or ``.lock``
=================  ==========================================================================

The markers' models are :class:`PrMarker` and :class:`QueuedMarker`; the artifact's outcome
is :class:`chimera.github.trust.artifacts.Outcome`, built from the same field types.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError

from chimera.errors import HandoffError, UsageError
from chimera.github.trust.handoff import describe_validation
from chimera.github.trust.summary import parse_marker
from chimera.orchestration.state import check_run_id

__all__ = [
    "ArtifactName",
    "Branch",
    "Commit",
    "Login",
    "PrMarker",
    "QueuedMarker",
    "RunId",
    "Sha256",
    "WorkflowRun",
    "check",
    "derived_run_id",
    "parse_carrier",
    "queued_marker",
    "run_label",
]

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

_COMMIT = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_WORKFLOW_RUN = re.compile(r"[0-9]{1,20}")
_ARTIFACT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}(?:\[bot\])?")


_REF_FORBIDDEN = frozenset(" ~^:?*[\\\x7f") | frozenset(chr(c) for c in range(32))


def _branch_problem(value: str) -> str | None:
    """Why ``value`` is not a branch name by git's own rules (``git check-ref-format
    --branch``), or ``None``."""
    if not value or len(value) > 255:
        return "1 to 255 characters"
    if any(c in _REF_FORBIDDEN for c in value):
        return "no space, control character, backslash or any of ~ ^ : ? * ["
    if value.startswith(("-", "/")) or value == "@":
        return "no leading '-' or '/', not '@'"
    if ".." in value or "//" in value or "@{" in value:
        return "no '..', '//' or '@{'"
    if value.endswith(("/", ".", ".lock")) or any(
        part.startswith(".") or part.endswith(".lock") for part in value.split("/")
    ):
        return "no part starting with '.' or ending with '.lock', no trailing '/' or '.'"
    return None


def _grammar(pattern: re.Pattern[str], what: str) -> AfterValidator:
    def validate(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"{value[:80]!r} is not {what}")
        return value

    return AfterValidator(validate)


def _run_id(value: str) -> str:
    try:
        return check_run_id(value)
    except UsageError as exc:
        raise ValueError(str(exc)) from exc


def _branch(value: str) -> str:
    problem = _branch_problem(value)
    if problem:
        raise ValueError(f"{value[:80]!r} is not a branch name ({problem})")
    return value


def _digits(value: object) -> object:
    # Older markers wrote the workflow run as a number; its digits are the same value.
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    return value


RunId = Annotated[str, AfterValidator(_run_id)]
Commit = Annotated[str, _grammar(_COMMIT, "a commit (40 lowercase hex digits)")]
Sha256 = Annotated[str, _grammar(_SHA256, "a SHA-256 (64 lowercase hex digits)")]
WorkflowRun = Annotated[
    str, BeforeValidator(_digits), _grammar(_WORKFLOW_RUN, "a workflow run id (digits)")
]
ArtifactName = Annotated[
    str, _grammar(_ARTIFACT, "an artifact name (letters, digits, '.', '_', '-')")
]
Login = Annotated[str, _grammar(_LOGIN, "a GitHub login")]
Branch = Annotated[str, AfterValidator(_branch)]


def check(kind: str, value: str, what: str) -> str:
    """``value`` when it fits the grammar ``kind`` (``run_id``, ``commit``, ``sha256``,
    ``workflow_run``, ``artifact``, ``login``, ``branch``); ``what`` names it in the error.

    Raises:
        HandoffError: one line, ``WHAT: problem``.
    """
    try:
        if kind == "run_id":
            return _run_id(value)
        if kind == "branch":
            return _branch(value)
        pattern, name = _PATTERNS[kind]
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise ValueError(f"{str(value)[:80]!r} is not {name}")
        return value
    except ValueError as exc:
        raise HandoffError(f"{what}: {exc}") from exc


_PATTERNS: Mapping[str, tuple[re.Pattern[str], str]] = {
    "commit": (_COMMIT, "a commit (40 lowercase hex digits)"),
    "sha256": (_SHA256, "a SHA-256 (64 lowercase hex digits)"),
    "workflow_run": (_WORKFLOW_RUN, "a workflow run id (digits)"),
    "artifact": (_ARTIFACT, "an artifact name (letters, digits, '.', '_', '-')"),
    "login": (_LOGIN, "a GitHub login"),
}


def derived_run_id(issue: int, workflow_run: str | None) -> str | None:
    """The run id of the agent job that ran for ``issue`` in ``workflow_run``:
    ``gh-<issue>-<workflow run>`` — what the agent job names its run folder and what publish
    writes into the PR marker, each computing it from its own inputs (never from the other's
    word). ``None`` without a workflow run (a local run names its folder at random).

    Raises:
        HandoffError: ``workflow_run`` is not a workflow run id.
    """
    if not workflow_run:
        return None
    run = check("workflow_run", workflow_run, "the workflow run (GITHUB_RUN_ID)")
    return check("run_id", f"gh-{int(issue)}-{run}", "the derived run id")


def run_label(issue: int, workflow_run: str | None) -> str:
    """The run id publish's stores (memory, learning proposals) file this run under: the
    derived one (:func:`derived_run_id`), or ``gh-<issue>-local`` without a usable workflow
    run (a local run)."""
    try:
        derived = derived_run_id(issue, workflow_run)
    except HandoffError:
        derived = None
    return derived or f"gh-{int(issue)}-local"


class PrMarker(BaseModel):
    """The ``chimera:pr`` marker of a Chimera PR body, as publish writes it and every later
    job reads it (only from a body of Chimera's identity, only from its trailer).

    Attributes:
        issue: the issue the PR closes.
        run_id: the run folder a resume restores: publish derives it
            (:func:`derived_run_id`), never the agent's word.
        workflow_run: the workflow run whose artifact ``artifact`` holds that run folder.
        artifact: the agent attempt's artifact name in ``workflow_run``.
        status: ``awaiting_approval`` (a held draft) or ``ready``.
        paused: an approval resumes the run (``True``) or starts CI (``False``); ``None`` in
            markers older than the field (then ``status`` decides).
        started_by: who started the run (may not approve it).
        risk: ``high`` or ``low``.
        spec_change: the change touches the Spec folder.
        base: the base commit the change is judged from.
        acceptance_sha256: the digest of the acceptance block the run started with.
        head: the head commit publish pushed.
        adopted_from: the digest a re-run replaced (``None``: it replaced none).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    issue: int | None = None
    run_id: RunId | None = None
    workflow_run: WorkflowRun | None = None
    artifact: ArtifactName | None = None
    status: Literal["awaiting_approval", "ready"] | None = None
    paused: bool | None = None
    started_by: Login | None = None
    risk: Literal["high", "low"] | None = None
    spec_change: bool = False
    base: Commit | None = None
    acceptance_sha256: Sha256 | None = None
    head: Commit | None = None
    adopted_from: Sha256 | None = None

    @property
    def awaiting(self) -> bool:
        """The PR is a held draft awaiting a person's approval."""
        return self.status == "awaiting_approval"

    @property
    def resumes(self) -> bool:
        """An approval resumes a paused run (markers older than ``paused``: every held PR)."""
        return self.paused if self.paused is not None else self.awaiting

    def to_marker(self) -> dict[str, Any]:
        """The JSON object the marker holds (fields that are ``None`` left out)."""
        return self.model_dump(mode="json", exclude_none=True)


class QueuedMarker(BaseModel):
    """The ``chimera:queued`` marker of an issue's "Queued" comment.

    Attributes:
        issue: the queued issue.
        labeller: the person whose label (or command) queued it: the drain dispatches the run
            in that person's name, so it is a login or nothing.
        at: when it was queued (ISO 8601; the FIFO order).
        dispatched: when the drain dispatched it (ISO 8601), if it did.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    issue: int
    labeller: Login | Literal[""] = ""
    at: Annotated[str, _grammar(re.compile(r"[0-9T:.+\-Z ]{0,40}"), "a timestamp")] = ""
    dispatched: (
        Annotated[str, _grammar(re.compile(r"[0-9T:.+\-Z ]{1,40}"), "a timestamp")] | None
    ) = None


def queued_marker(body: str, issue: int) -> QueuedMarker | None:
    """The ``chimera:queued`` marker of ``issue`` in a comment ``body`` (its trailer), parsed;
    ``None`` when there is none, it names another issue, or a field fails its grammar (then
    the comment queues nothing: the issue keeps its place by its label and creation time)."""
    data = parse_marker(body, "queued")
    if data is None or data.get("issue") != issue:
        return None
    try:
        return parse_carrier(data, QueuedMarker, f"#{issue}'s chimera:queued marker")
    except HandoffError as exc:
        log.warning("%s; ignored", exc)
        return None


def parse_carrier(data: Mapping[str, Any], model: type[M], what: str) -> M:
    """``data`` parsed as ``model`` (``what`` names the carrier in the error).

    Raises:
        HandoffError: one line, ``WHAT: field: problem``.
    """
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise HandoffError(f"{what}: {describe_validation(exc)}") from exc
