"""The API checks behind a :class:`~chimera.github.gate.events.Decision`: who may start, approve or
re-run Chimera work, and whether the issue or PR is in a state to act on.

:func:`resolve` performs the checks a decision lists and returns a :class:`Resolution` — the
decision itself when every check passes, else the same event turned into an ``ignore`` whose
reason a person can act on ("alice has the read role; the label needs write, maintain or
admin"). Rules (DESIGN.md steps 1 and 5):

* starting a run (the label, a dispatch) needs the ``write``, ``maintain`` or ``admin`` role,
  asked through the API — never inferred from ``author_association``;
* bots count only when allow-listed;
* an approval counts when the reviewer has a write role, is not a bot, is not the person who
  started the run (unless ``allow-self-approval``) and approved the PR's *current* head commit
  — a push after an approval makes it stale; it resumes a paused run, or else starts CI
  (:attr:`~chimera.github.gate.events.Act.START_CI`);
* a PR is a Chimera PR only when it comes from ``chimera/issue-<n>``, was opened by one of
  Chimera's identities and carries the ``chimera:pr`` marker.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from chimera.errors import HandoffError
from chimera.github.client.client import GitHubClient, IssueInfo, PullInfo
from chimera.github.gate.decision import WRITE_ROLES, Act, Decision
from chimera.github.gate.starter import queued_starter
from chimera.github.trust.carriers import PrMarker, parse_carrier
from chimera.github.trust.settings import SCHEDULE_LABEL, ActionSettings
from chimera.github.trust.summary import parse_marker

__all__ = ["Resolution", "chimera_pull", "has_write", "pr_marker", "resolve"]

log = logging.getLogger(__name__)


def has_write(role: str) -> bool:
    return role in WRITE_ROLES


@dataclass(frozen=True)
class Resolution:
    """A decision after its API checks, with what the checks fetched."""

    decision: Decision
    issue: IssueInfo | None = None
    pull: PullInfo | None = None
    marker: PrMarker | None = None

    @property
    def proceed(self) -> bool:
        return self.decision.action is not Act.IGNORE


def pr_marker(pull: PullInfo, settings: ActionSettings) -> PrMarker | None:
    """The ``chimera:pr`` marker of ``pull``, parsed once with each field's grammar; ``None``
    when the PR is not by Chimera's identity or carries no marker in its trailer.

    Raises:
        HandoffError: the marker is there but a field fails its grammar (one line).
    """
    data = parse_marker(pull.body, "pr") if settings.is_self(pull.author) else None
    if data is None:
        return None
    return parse_carrier(data, PrMarker, f"PR #{pull.number}'s chimera:pr marker")


def chimera_pull(
    client: GitHubClient, settings: ActionSettings, issue: int
) -> tuple[PullInfo | None, PrMarker | None]:
    """The open Chimera PR for ``issue`` and its marker (``(None, None)`` when there is none;
    ``(pull, None)`` when its marker is missing or invalid: it carries no state to act on)."""
    for pull in client.pulls_from(settings.branch(issue)):
        try:
            return pull, pr_marker(pull, settings)
        except HandoffError as exc:
            log.warning("%s; the PR is treated as carrying no Chimera state", exc)
            return pull, None
    return None, None


def _actor_refusal(
    client: GitHubClient, settings: ActionSettings, actor: str, what: str
) -> str | None:
    if actor not in settings.allowed_bots and client.user_type(actor) == "Bot":
        return f"{actor} is a bot and is not in allowed-bots; {what}"
    role = client.permission(actor)
    if not has_write(role):
        return (
            f"{actor} has the {role!r} role on this repository; {what} needs the write, "
            "maintain or admin role"
        )
    return None


def resolve(decision: Decision, client: GitHubClient, settings: ActionSettings) -> Resolution:
    """Perform ``decision.checks`` through ``client``.

    Raises:
        GitHubError: the API failed (after retries); the caller reports it.
    """
    if decision.action is Act.RUN:
        return _resolve_run(decision, client, settings)
    if decision.action is Act.RESUME:
        return _resolve_review(decision, client, settings, approval=True)
    if decision.action is Act.RERUN:
        return _resolve_review(decision, client, settings, approval=False)
    if decision.action is Act.CANCEL and decision.issue is not None:
        pull, marker = chimera_pull(client, settings, decision.issue)
        return Resolution(decision, pull=pull, marker=marker)
    return Resolution(decision)


def _resolve_run(decision: Decision, client: GitHubClient, settings: ActionSettings) -> Resolution:
    assert decision.issue is not None and decision.actor is not None
    if settings.is_self(decision.actor):
        # Chimera as the actor is a scheduled run (the tick's filing label, its dispatch, or
        # the drain's for a queued one): its own chimera:schedule label is what counts.
        return _resolve_scheduled(decision, client, settings)
    by_command = False
    if decision.from_queue:
        # Who queued the issue (a label, or an `@chimera run` comment) comes from the issue's
        # record, never the dispatch's input: every workflow's GITHUB_TOKEN is
        # github-actions[bot], so any could send one.
        starter = queued_starter(client, decision.issue, settings.label, settings.identities)
        if starter is None:
            return Resolution(
                decision.ignore(
                    f"no person's {settings.label!r} label or `@chimera run` is on "
                    f"#{decision.issue}'s record, so nobody's permission can count for this "
                    "dispatch"
                )
            )
        by_command = starter.via == "command"
        decision = replace(decision, actor=starter.login)
    assert decision.issue is not None and decision.actor is not None
    what = "starting Chimera" if not decision.from_queue else "the queued run (its labeller)"
    refusal = _actor_refusal(client, settings, decision.actor, what)
    if refusal is not None:
        return Resolution(decision.ignore(refusal))
    return _resolve_issue(decision, client, settings, settings.label, label_required=not by_command)


def _resolve_scheduled(
    decision: Decision, client: GitHubClient, settings: ActionSettings
) -> Resolution:
    """A run Chimera started itself: a scheduled run. No person's role counts here;
    what counts is that Chimera's own identity added ``chimera:schedule`` (the tick, acting
    for a schedule reviewed on the default branch). A person's label is refused."""
    assert decision.issue is not None
    labeller = client.labeller(decision.issue, SCHEDULE_LABEL)
    if labeller is None or not settings.is_self(labeller):
        who = f"was added by {labeller}" if labeller else "is not on its record"
        return Resolution(
            decision.ignore(
                f"#{decision.issue}'s {SCHEDULE_LABEL!r} label {who}, not by Chimera's own "
                "identity; only the tick starts scheduled runs"
            )
        )
    return _resolve_issue(decision, client, settings, SCHEDULE_LABEL)


def _resolve_issue(
    decision: Decision,
    client: GitHubClient,
    settings: ActionSettings,
    trigger: str,
    *,
    label_required: bool = True,
) -> Resolution:
    assert decision.issue is not None
    issue = client.issue(decision.issue)
    if issue.is_pull:
        return Resolution(
            decision.ignore(f"#{issue.number} is a pull request; Chimera works from issues"),
            issue=issue,
        )
    if issue.state != "open":
        return Resolution(
            decision.ignore(f"#{issue.number} is closed; reopen it and add the label again"),
            issue=issue,
        )
    if issue.locked:
        return Resolution(
            decision.ignore(f"#{issue.number} is locked; unlock it and add the label again"),
            issue=issue,
        )
    # A queued `@chimera run` has no label to re-check: its comment is its trigger.
    needs_label = decision.event == "issues" or (decision.from_queue and label_required)
    if needs_label and trigger not in issue.labels:
        # The label was removed before this run started, or this is "Re-run all jobs" of an
        # old run whose trigger is gone (a run removes it when it ends): not admitted again.
        return Resolution(
            decision.ignore(
                f"the {trigger!r} label is no longer on #{issue.number} (removed since "
                "the event, or this is a re-run of a finished run); add it again to start"
            ),
            issue=issue,
        )
    pull, marker = chimera_pull(client, settings, decision.issue)
    if pull is not None:
        if marker is not None and marker.awaiting:
            return Resolution(
                decision.ignore(
                    f"PR #{pull.number} holds a paused run awaiting approval; approve its head "
                    "commit to resume it, or close it to start over"
                ),
                issue=issue,
                pull=pull,
                marker=marker,
            )
        if client.in_merge_queue(pull):
            return Resolution(
                decision.ignore(
                    f"PR #{pull.number} is in the merge queue; Chimera never pushes to a queued "
                    "branch (remove it from the queue to run again)"
                ),
                issue=issue,
                pull=pull,
                marker=marker,
            )
    return Resolution(decision, issue=issue, pull=pull, marker=marker)


def _resolve_review(
    decision: Decision, client: GitHubClient, settings: ActionSettings, *, approval: bool
) -> Resolution:
    assert decision.pull is not None and decision.actor is not None
    what = "an approval" if approval else "a change request"
    pull = client.pull(decision.pull)
    if pull.state != "open":
        return Resolution(decision.ignore(f"PR #{pull.number} is {pull.state}"), pull=pull)
    if decision.issue is None:
        # A PR comment's payload names no branch: the issue comes from the PR's head ref.
        issue = settings.issue_of_branch(pull.head_ref)
        if issue is None:
            return Resolution(
                decision.ignore(f"PR #{pull.number} is not a Chimera PR ({pull.head_ref!r})"),
                pull=pull,
            )
        decision = replace(decision, issue=issue, head_sha=pull.head_sha)
    try:
        marker = pr_marker(pull, settings)
    except HandoffError as exc:
        return Resolution(
            decision.ignore(f"{exc}; nothing acts on it (close the PR and start over)"),
            pull=pull,
        )
    if marker is None:
        return Resolution(
            decision.ignore(
                f"PR #{pull.number} carries no Chimera state (not opened by Chimera's identity "
                f"{', '.join(settings.identities)}, or its marker was removed)"
            ),
            pull=pull,
        )
    refusal = _actor_refusal(client, settings, decision.actor or "", what)
    if refusal is not None:
        return Resolution(decision.ignore(refusal), pull=pull, marker=marker)
    if approval:
        if decision.actor == marker.started_by and not settings.allow_self_approval:
            return Resolution(
                decision.ignore(
                    f"{decision.actor} triggered this run and cannot approve it; another person "
                    "with write access must (or set allow-self-approval)"
                ),
                pull=pull,
                marker=marker,
            )
        # A comment's ``approve <sha>`` may be abbreviated (7+ digits); a review's is whole.
        if decision.review_commit and not pull.head_sha.startswith(decision.review_commit):
            return Resolution(
                decision.ignore(
                    f"the approval is of {decision.review_commit[:12]} but the head is now "
                    f"{pull.head_sha[:12]} (a later push made it stale); approve the current "
                    "head commit"
                ),
                pull=pull,
                marker=marker,
            )
        # Markers written before "paused" existed: a held PR was always a paused run.
        if not marker.resumes:
            start = replace(
                decision,
                action=Act.START_CI,
                reason=(
                    f"{decision.actor} approved the head commit of PR #{pull.number}: CI starts "
                    "on it (the PR is closed and reopened by Chimera's App)"
                ),
            )
            return Resolution(start, pull=pull, marker=marker)
    elif client.in_merge_queue(pull):
        return Resolution(
            decision.ignore(
                f"PR #{pull.number} is in the merge queue; Chimera never pushes to a queued branch"
            ),
            pull=pull,
            marker=marker,
        )
    return Resolution(decision, pull=pull, marker=marker)
