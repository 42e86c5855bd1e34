"""What :func:`chimera.github.gate.events.decide` returns: the act, the reason and the API checks
still to make (:class:`Decision`), and the payload readers the event rules share.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from chimera.errors import UsageError

WRITE_ROLES = ("admin", "maintain", "write")


class Act(StrEnum):
    RUN = "run"
    RESUME = "resume"
    RERUN = "rerun"
    CANCEL = "cancel"
    DRAIN = "drain"
    IGNORE = "ignore"
    # An approval of a PR whose run is not paused: the App token closes and reopens the PR so
    # CI starts on the approved head (the PR was opened with GITHUB_TOKEN: no CI before).
    START_CI = "start_ci"
    # ``@chimera status``: answered by the command mode, changes nothing.
    STATUS = "status"


@dataclass(frozen=True)
class ApiCheck:
    """A check that needs the API (performed by :mod:`chimera.github.gate.permissions`).

    ``name`` is one of ``permission`` (``subject`` needs a write role), ``not_bot`` (the
    account type of ``subject``), ``issue_state`` (open, not locked, not a PR),
    ``chimera_pr`` (an open Chimera PR for the issue and its state marker), ``head_commit``
    (the review was of the PR's current head), ``not_triggerer`` (the approver did not start
    the run), ``queue_slot`` (the ChangeQueue admits the issue now), ``schedule_label`` (Chimera's
    own identity added ``chimera:schedule``: a scheduled run).
    """

    name: str
    subject: str
    detail: str


@dataclass(frozen=True)
class Decision:
    """What to do about one event (see the module docstring).

    Attributes:
        action: the verdict.
        reason: one sentence, for logs, ``--dry-run`` and (``explain``) the issue comment.
        explain: an ``ignore`` a person should hear about (posted on the issue or PR).
        actor: the person whose permission counts (labeller, reviewer, original labeller
            of a queue dispatch).
        feedback: a ``changes_requested`` review's text (tainted: fenced before any prompt).
        review_commit: the commit an approval or review was given on.
        checks: the API checks still to make.
    """

    action: Act
    reason: str
    event: str
    event_action: str | None = None
    repository: str | None = None
    issue: int | None = None
    pull: int | None = None
    actor: str | None = None
    sender: str | None = None
    head_sha: str | None = None
    review_commit: str | None = None
    review_id: int | None = None
    feedback: str | None = None
    explain: bool = False
    from_queue: bool = False
    checks: tuple[ApiCheck, ...] = field(default_factory=tuple)
    # The ``@chimera`` verb of an ``issue_comment`` (chimera.github.gate.commands); None otherwise.
    command: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["action"] = self.action.value
        data["checks"] = [asdict(c) for c in self.checks]
        return data

    def ignore(self, reason: str, *, explain: bool = True) -> Decision:
        """The same event, now ignored with ``reason`` (an API check failed)."""
        return Decision(
            action=Act.IGNORE,
            reason=reason,
            event=self.event,
            event_action=self.event_action,
            repository=self.repository,
            issue=self.issue,
            pull=self.pull,
            actor=self.actor,
            sender=self.sender,
            head_sha=self.head_sha,
            review_commit=self.review_commit,
            review_id=self.review_id,
            explain=explain,
            from_queue=self.from_queue,
            command=self.command,
        )


def dig(data: Mapping[str, Any] | None, *keys: str) -> Any:
    cur: Any = data
    for key in keys:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def login_of(user: Any) -> str | None:
    login = dig(user, "login")
    return str(login) if isinstance(login, str) and login else None


def is_bot(user: Any) -> bool:
    login = login_of(user) or ""
    return dig(user, "type") == "Bot" or login.endswith("[bot]")


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


_TASK_MARK = re.compile(r"<!-- chimera:schedule-task (?P<job>[^\s>]{1,200}) -->")
_ANY_MARK = re.compile(r"<!-- chimera:schedule(?:-task)? (?P<job>[^\s>]{1,200}) -->")


def task_marker(job: str) -> str:
    """The marker the tick adds to the body of the issue it files for schedule ``job``'s
    task (a ``check``'s report issue carries none: it starts no run)."""
    return f"<!-- chimera:schedule-task {job} -->"


def scheduled_task(body: Any) -> str | None:
    """The schedule whose task issue ``body`` is (:func:`task_marker`), or ``None``. Only as
    good as who wrote the body: callers also check that Chimera's identity labelled it."""
    match = _TASK_MARK.search(body) if isinstance(body, str) else None
    return match.group("job") if match is not None else None


def schedule_of(body: Any) -> str:
    """The schedule named by either of the tick's markers in an issue ``body`` (``""``:
    none); for display only (a queue comment), never a decision."""
    match = _ANY_MARK.search(body) if isinstance(body, str) else None
    return match.group("job") if match is not None else ""


_ISSUE_INPUT = re.compile(r"#?(?P<n>[1-9][0-9]{0,9})")


def dispatch_issue(inputs: Any) -> int | None:
    """The ``issue-number`` input of a ``workflow_dispatch``: ``7`` or ``#7``; ``None`` when
    empty (a drain).

    Raises:
        UsageError: anything else (one line; there is no issue to comment on).
    """
    raw = dig(inputs, "issue-number") if isinstance(inputs, Mapping) else None
    if raw is None and isinstance(inputs, Mapping):
        raw = dig(inputs, "issue_number")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    match = _ISSUE_INPUT.fullmatch(str(raw).strip())
    if match is None:
        raise UsageError(
            f"workflow_dispatch input issue-number {str(raw)[:40]!r} is not an issue number "
            "(give 7 or #7, or leave it empty to drain the queue)"
        )
    return int(match.group("n"))


def run_checks(actor: str, issue: int) -> tuple[ApiCheck, ...]:
    return (
        ApiCheck("permission", actor, f"{actor} needs the write, maintain or admin role"),
        ApiCheck("issue_state", f"#{issue}", "the issue is open, unlocked and not a PR"),
        ApiCheck(
            "chimera_pr",
            f"#{issue}",
            "an open Chimera PR for the issue is updated, "
            "not duplicated (and is not touched while paused or in a merge queue)",
        ),
        ApiCheck(
            "queue_slot", f"#{issue}", "the ChangeQueue has a free slot and no older queued issue"
        ),
    )
