"""Decide what a GitHub event means for Chimera — from the payload alone, offline.

:func:`decide` maps ``(GITHUB_EVENT_NAME, payload, settings)`` to a :class:`Decision`: ``run``
(a new run for an issue), ``resume`` (a paused run after an approval), ``rerun`` (the same
branch again, with a review's text as tainted feedback), ``cancel`` (queued or paused work
for an issue), ``drain`` (start the next queued issue) or ``ignore`` — always with a reason,
and with the API checks that must still pass before anything happens (the labeller's
permission, the issue's state, the PR's head commit ...). ``chimera action --dry-run`` prints
exactly this. :mod:`chimera.github.permissions` then performs those checks.

Rules (DESIGN.md "Flow of one autonomous change", steps 1 and 5):

* Events caused by Chimera's own identity (its label removals, its pushes, its reviews) never
  trigger, cancel or re-run anything by themselves; a ``workflow_dispatch`` sent by Chimera
  (the queue) carries the original labeller, whose permission is what counts.
* A labeller or reviewer that is a bot is refused unless allow-listed.
* Only PRs from Chimera's branches (``chimera/issue-<n>``) are Chimera PRs.

The payload fields read are untrusted: they are used as data (compared, looked up), never
interpolated into a shell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from chimera.errors import UsageError
from chimera.github.settings import SCHEDULE_LABEL, ActionSettings

__all__ = ["Act", "ApiCheck", "Decision", "decide", "run_checks"]

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
    """A check that needs the API (performed by :mod:`chimera.github.permissions`).

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
    # The ``@chimera`` verb of an ``issue_comment`` (chimera.github.commands); None otherwise.
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


def _get(data: Mapping[str, Any] | None, *keys: str) -> Any:
    cur: Any = data
    for key in keys:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def _login(user: Any) -> str | None:
    login = _get(user, "login")
    return str(login) if isinstance(login, str) and login else None


def _is_bot(user: Any) -> bool:
    login = _login(user) or ""
    return _get(user, "type") == "Bot" or login.endswith("[bot]")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def decide(event: str, payload: Mapping[str, Any], settings: ActionSettings) -> Decision:
    """Decide from the event name and payload alone (no network).

    Args:
        event: ``GITHUB_EVENT_NAME``.
        payload: the parsed ``GITHUB_EVENT_PATH`` file.
        settings: the Action's settings.

    Returns:
        The decision, with the API checks still to make.
    """
    action = payload.get("action") if isinstance(payload.get("action"), str) else None
    sender = _login(payload.get("sender"))
    repo = _get(payload, "repository", "full_name")
    base: dict[str, Any] = {
        "event": event,
        "event_action": action,
        "repository": str(repo) if isinstance(repo, str) else None,
        "sender": sender,
    }
    if sender is None and event in _PERSON_EVENTS:
        # A deleted account ("ghost") or a GitHub-internal event: nobody's permission can
        # count, so nothing starts or is cancelled.
        what = f"{event}.{action}" if action else event
        return Decision(
            Act.IGNORE,
            f"the {what} payload names no sender; nobody's permission can count",
            **base,
        )
    if event == "issues" and action == "labeled":
        return _issue_labeled(payload, settings, base)
    if event == "issues" and action == "unlabeled":
        return _issue_unlabeled(payload, settings, base)
    if event == "pull_request_review" and action == "submitted":
        return _review_submitted(payload, settings, base)
    if event in ("pull_request", "pull_request_target") and action == "closed":
        return _pull_closed(payload, settings, base)
    if event == "workflow_dispatch":
        return _dispatch(payload, settings, base)
    if event == "issue_comment":
        from chimera.github.commands import comment_decision

        return comment_decision(payload, settings, base)
    if event == "schedule":
        return Decision(Act.DRAIN, "scheduled drain of the ChangeQueue", **base)
    what = f"{event}.{action}" if action else event
    return Decision(Act.IGNORE, f"{what} is not an event Chimera acts on", **base)


_PERSON_EVENTS = frozenset(
    {"issues", "pull_request_review", "pull_request", "pull_request_target", "workflow_dispatch"}
)
_ISSUE_INPUT = re.compile(r"#?(?P<n>[1-9][0-9]{0,9})")


def dispatch_issue(inputs: Any) -> int | None:
    """The ``issue-number`` input of a ``workflow_dispatch``: ``7`` or ``#7``; ``None`` when
    empty (a drain).

    Raises:
        UsageError: anything else (one line; there is no issue to comment on).
    """
    raw = _get(inputs, "issue-number") if isinstance(inputs, Mapping) else None
    if raw is None and isinstance(inputs, Mapping):
        raw = _get(inputs, "issue_number")
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


def _issue_labeled(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    label = _get(payload, "label", "name")
    number = _int(_get(payload, "issue", "number"))
    sender = base["sender"]
    base = base | {"issue": number, "actor": sender}
    if label == SCHEDULE_LABEL and number is not None:
        return _schedule_labeled(sender, number, settings, base)
    if label != settings.label:
        return Decision(
            Act.IGNORE, f"label {label!r} is not the trigger label {settings.label!r}", **base
        )
    if number is None:
        return Decision(Act.IGNORE, "the payload names no issue", **base)
    if settings.is_self(sender):
        return Decision(
            Act.IGNORE,
            f"the label was added by Chimera itself ({sender}); Chimera never triggers itself",
            **base,
        )
    if _is_bot(payload.get("sender")) and sender not in settings.allowed_bots:
        return Decision(
            Act.IGNORE,
            f"{sender} is a bot and is not in allowed-bots; a person "
            "with write access must add the label",
            explain=True,
            **base,
        )
    issue = payload.get("issue") or {}
    if _get(issue, "pull_request") is not None:
        return Decision(
            Act.IGNORE,
            f"#{number} is a pull request; Chimera works from issues "
            "(open an issue describing the change and label it)",
            explain=True,
            **base,
        )
    if _get(issue, "state") == "closed":
        return Decision(
            Act.IGNORE,
            f"#{number} is closed; reopen it and add the label again",
            explain=True,
            **base,
        )
    if _get(issue, "locked") is True:
        return Decision(
            Act.IGNORE,
            f"#{number} is locked; unlock it and add the label again",
            explain=True,
            **base,
        )
    assert sender is not None
    return Decision(
        Act.RUN,
        f"{sender} added {settings.label!r} to #{number}",
        checks=(
            ApiCheck("not_bot", sender, "the labeller is not a bot"),
            *run_checks(sender, number),
        ),
        **base,
    )


def _schedule_labeled(
    sender: str | None, number: int, settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    # The tick files a job's issue with this label and then dispatches the run itself, so the
    # label starts nothing; a person adding it is told why (schedules are reviewed code).
    if settings.is_self(sender):
        return Decision(
            Act.IGNORE,
            f"Chimera's tick labelled #{number} {SCHEDULE_LABEL!r}; it dispatches the run itself",
            **base,
        )
    return Decision(
        Act.IGNORE,
        f"{sender} added {SCHEDULE_LABEL!r} to #{number}, but only Chimera's tick adds it "
        "(schedules are declared in .chimera.d/schedules/ on the default branch and reviewed "
        f"like code); to start a run, add the {settings.label!r} label instead",
        explain=True,
        **base,
    )


def _issue_unlabeled(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    label = _get(payload, "label", "name")
    number = _int(_get(payload, "issue", "number"))
    sender = base["sender"]
    base = base | {"issue": number, "actor": sender}
    if label != settings.label or number is None:
        return Decision(Act.IGNORE, f"label {label!r} is not the trigger label", **base)
    if settings.is_self(sender):
        return Decision(
            Act.IGNORE,
            f"Chimera ({sender}) removed its own label after a run; nothing is cancelled",
            **base,
        )
    if _is_bot(payload.get("sender")) and sender not in settings.allowed_bots:
        return Decision(
            Act.IGNORE, f"{sender} is a bot; only a person cancels Chimera work", **base
        )
    return Decision(
        Act.CANCEL,
        f"{sender} removed {settings.label!r} from #{number}: queued or paused work for it is "
        "cancelled",
        checks=(ApiCheck("chimera_pr", f"#{number}", "a paused Chimera PR is closed"),),
        **base,
    )


def _review_submitted(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    pr = payload.get("pull_request") or {}
    review = payload.get("review") or {}
    head_ref = str(_get(pr, "head", "ref") or "")
    number = _int(_get(pr, "number"))
    issue = settings.issue_of_branch(head_ref)
    reviewer = _login(review.get("user")) or base["sender"]
    state = str(review.get("state") or "").lower()
    base = base | {
        "pull": number,
        "issue": issue,
        "actor": reviewer,
        "head_sha": _get(pr, "head", "sha"),
        "review_commit": review.get("commit_id"),
        "review_id": _int(review.get("id")),
    }
    if issue is None:
        return Decision(
            Act.IGNORE, f"PR #{number} is not a Chimera PR (branch {head_ref!r})", **base
        )
    if settings.is_self(reviewer):
        return Decision(Act.IGNORE, f"the review is Chimera's own ({reviewer})", **base)
    if state not in ("approved", "changes_requested"):
        return Decision(
            Act.IGNORE, f"a {state or 'blank'} review neither approves nor requests changes", **base
        )
    if _is_bot(review.get("user")) and reviewer not in settings.allowed_bots:
        return Decision(
            Act.IGNORE, f"{reviewer} is a bot; only a person's review counts", explain=True, **base
        )
    assert reviewer is not None
    perm = ApiCheck("permission", reviewer, f"{reviewer} needs the write, maintain or admin role")
    pr_check = ApiCheck("chimera_pr", f"#{number}", "the PR carries Chimera's state marker")
    if state == "approved":
        if base["review_commit"] and base["head_sha"] and base["review_commit"] != base["head_sha"]:
            return Decision(
                Act.IGNORE,
                f"the approval is of {str(base['review_commit'])[:12]}, "
                f"not the head {str(base['head_sha'])[:12]}: approve the current "
                "head commit",
                explain=True,
                **base,
            )
        return Decision(
            Act.RESUME,
            f"{reviewer} approved PR #{number}: the paused run for #{issue} resumes",
            checks=(
                perm,
                pr_check,
                ApiCheck(
                    "not_triggerer",
                    reviewer,
                    "the approver did not trigger the run (unless allow-self-approval)",
                ),
                ApiCheck(
                    "head_commit",
                    f"#{number}",
                    "the approval is of the PR's current head (a later push makes it stale)",
                ),
            ),
            **base,
        )
    body = review.get("body")
    return Decision(
        Act.RERUN,
        f"{reviewer} requested changes on PR #{number}: #{issue} runs again on the same branch "
        "with the review as (tainted) feedback",
        feedback=str(body) if isinstance(body, str) else "",
        checks=(perm, pr_check),
        **base,
    )


def _pull_closed(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    pr = payload.get("pull_request") or {}
    number = _int(_get(pr, "number"))
    head_ref = str(_get(pr, "head", "ref") or "")
    issue = settings.issue_of_branch(head_ref)
    base = base | {"pull": number, "issue": issue, "actor": base["sender"]}
    if issue is None:
        return Decision(
            Act.DRAIN, f"PR #{number} closed (not Chimera's): a queue slot may be free", **base
        )
    if _get(pr, "merged") is True:
        return Decision(Act.DRAIN, f"Chimera PR #{number} was merged: its slot is free", **base)
    if settings.is_self(base["sender"]):
        return Decision(Act.DRAIN, f"Chimera closed its own PR #{number}; its slot is free", **base)
    return Decision(
        Act.CANCEL,
        f"{base['sender']} closed Chimera PR #{number} without merging: work for #{issue} is "
        "cancelled",
        **base,
    )


def _dispatch(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    inputs = payload.get("inputs") or {}
    number = dispatch_issue(inputs)
    sender = base["sender"]
    if number is None:
        return Decision(Act.DRAIN, f"manual dispatch by {sender}: drain the ChangeQueue", **base)
    if settings.is_self(sender):
        labeller = _get(inputs, "labeller")
        if not isinstance(labeller, str) or not labeller.strip():
            return Decision(
                Act.IGNORE,
                f"a queue dispatch for #{number} carries no labeller; "
                "nobody's permission can count",
                explain=True,
                issue=number,
                **base,
            )
        actor = labeller.strip().lstrip("@")
        from_queue = True
    else:
        actor = str(sender)
        from_queue = False
    who: tuple[ApiCheck, ...] = (
        ApiCheck("not_bot", actor, "the person whose permission counts is not a bot"),
        *run_checks(actor, number)[:1],
    )
    if from_queue and settings.is_self(actor):
        # A scheduled run: no person's role counts, the label's author does.
        reason = f"Chimera's tick started #{number} (a scheduled run)"
        who = (
            ApiCheck("schedule_label", f"#{number}", f"Chimera itself added {SCHEDULE_LABEL!r}"),
        )
    elif from_queue:
        reason = f"the ChangeQueue started #{number} for {actor}"
    else:
        reason = f"{actor} dispatched a run for #{number}"
    return Decision(
        Act.RUN,
        reason,
        issue=number,
        actor=actor,
        from_queue=from_queue,
        checks=(*who, *run_checks(actor, number)[1:]),
        **base,
    )
