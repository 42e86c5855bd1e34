"""Decide what a GitHub event means for Chimera — from the payload alone, offline.

:func:`decide` maps ``(GITHUB_EVENT_NAME, payload, settings)`` to a :class:`Decision`: ``run``
(a new run for an issue), ``resume`` (a paused run after an approval), ``rerun`` (the same
branch again, with a review's text as tainted feedback), ``cancel`` (queued or paused work
for an issue), ``drain`` (start the next queued issue) or ``ignore`` — always with a reason,
and with the API checks that must still pass before anything happens (the labeller's
permission, the issue's state, the PR's head commit ...). ``chimera action --dry-run`` prints
exactly this. :mod:`chimera.github.gate.permissions` then performs those checks.

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

from collections.abc import Mapping
from typing import Any

from chimera.github.gate.decision import (
    WRITE_ROLES,
    Act,
    ApiCheck,
    Decision,
    dig,
    dispatch_issue,
    login_of,
    run_checks,
)
from chimera.github.gate.event_handlers import (
    dispatch_event,
    issue_labeled,
    issue_unlabeled,
    pull_closed,
    review_submitted,
)
from chimera.github.trust.settings import ActionSettings

__all__ = [
    "WRITE_ROLES",
    "Act",
    "ApiCheck",
    "Decision",
    "decide",
    "dispatch_issue",
    "run_checks",
]


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
    sender = login_of(payload.get("sender"))
    repo = dig(payload, "repository", "full_name")
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
        return issue_labeled(payload, settings, base)
    if event == "issues" and action == "unlabeled":
        return issue_unlabeled(payload, settings, base)
    if event == "pull_request_review" and action == "submitted":
        return review_submitted(payload, settings, base)
    if event in ("pull_request", "pull_request_target") and action == "closed":
        return pull_closed(payload, settings, base)
    if event == "workflow_dispatch":
        return dispatch_event(payload, settings, base)
    if event == "issue_comment":
        from chimera.github.gate.commands import comment_decision

        return comment_decision(payload, settings, base)
    if event == "schedule":
        return Decision(Act.DRAIN, "scheduled drain of the ChangeQueue", **base)
    what = f"{event}.{action}" if action else event
    return Decision(Act.IGNORE, f"{what} is not an event Chimera acts on", **base)


_PERSON_EVENTS = frozenset(
    {"issues", "pull_request_review", "pull_request", "pull_request_target", "workflow_dispatch"}
)
