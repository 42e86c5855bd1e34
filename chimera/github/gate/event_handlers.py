"""The rules of :func:`chimera.github.gate.events.decide`, one per event it acts on: an issue
labelled or unlabelled, a review submitted, a pull request closed, a workflow dispatch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chimera.github.gate.decision import (
    Act,
    ApiCheck,
    Decision,
    as_int,
    dig,
    dispatch_issue,
    is_bot,
    login_of,
    run_checks,
    scheduled_task,
)
from chimera.github.trust.settings import SCHEDULE_LABEL, ActionSettings


def issue_labeled(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    label = dig(payload, "label", "name")
    number = as_int(dig(payload, "issue", "number"))
    sender = base["sender"]
    base = base | {"issue": number, "actor": sender}
    if label == SCHEDULE_LABEL and number is not None:
        return _schedule_labeled(payload, number, settings, base)
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
    if is_bot(payload.get("sender")) and sender not in settings.allowed_bots:
        return Decision(
            Act.IGNORE,
            f"{sender} is a bot and is not in allowed-bots; a person "
            "with write access must add the label",
            explain=True,
            **base,
        )
    issue = payload.get("issue") or {}
    if dig(issue, "pull_request") is not None:
        return Decision(
            Act.IGNORE,
            f"#{number} is a pull request; Chimera works from issues "
            "(open an issue describing the change and label it)",
            explain=True,
            **base,
        )
    if dig(issue, "state") == "closed":
        return Decision(
            Act.IGNORE,
            f"#{number} is closed; reopen it and add the label again",
            explain=True,
            **base,
        )
    if dig(issue, "locked") is True:
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
    payload: Mapping[str, Any], number: int, settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    # The tick files a job's issue with this label: that label event is the scheduled run's
    # start (the tick dispatches only for an issue it filed earlier). A person adding the
    # label is told why it starts nothing (schedules are reviewed code).
    sender = base["sender"]
    if settings.is_self(sender):
        job = scheduled_task(dig(payload, "issue", "body"))
        if job is None:
            return Decision(
                Act.IGNORE,
                f"Chimera labelled #{number} {SCHEDULE_LABEL!r}, but it is no scheduled task's "
                "issue (a schedule's report, or not filed by the tick): it starts no run",
                **base,
            )
        return Decision(
            Act.RUN,
            f"Chimera's tick filed #{number} for schedule {job!r} (a scheduled run)",
            checks=(
                ApiCheck(
                    "schedule_label", f"#{number}", f"Chimera itself added {SCHEDULE_LABEL!r}"
                ),
                *run_checks(str(sender), number)[1:],
            ),
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


def issue_unlabeled(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    label = dig(payload, "label", "name")
    number = as_int(dig(payload, "issue", "number"))
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
    if is_bot(payload.get("sender")) and sender not in settings.allowed_bots:
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


def review_submitted(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    pr = payload.get("pull_request") or {}
    review = payload.get("review") or {}
    head_ref = str(dig(pr, "head", "ref") or "")
    number = as_int(dig(pr, "number"))
    issue = settings.issue_of_branch(head_ref)
    reviewer = login_of(review.get("user")) or base["sender"]
    state = str(review.get("state") or "").lower()
    base = base | {
        "pull": number,
        "issue": issue,
        "actor": reviewer,
        "head_sha": dig(pr, "head", "sha"),
        "review_commit": review.get("commit_id"),
        "review_id": as_int(review.get("id")),
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
    if is_bot(review.get("user")) and reviewer not in settings.allowed_bots:
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


def pull_closed(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    pr = payload.get("pull_request") or {}
    number = as_int(dig(pr, "number"))
    head_ref = str(dig(pr, "head", "ref") or "")
    issue = settings.issue_of_branch(head_ref)
    base = base | {"pull": number, "issue": issue, "actor": base["sender"]}
    if issue is None:
        return Decision(
            Act.DRAIN, f"PR #{number} closed (not Chimera's): a queue slot may be free", **base
        )
    if dig(pr, "merged") is True:
        return Decision(Act.DRAIN, f"Chimera PR #{number} was merged: its slot is free", **base)
    if settings.is_self(base["sender"]):
        return Decision(Act.DRAIN, f"Chimera closed its own PR #{number}; its slot is free", **base)
    return Decision(
        Act.CANCEL,
        f"{base['sender']} closed Chimera PR #{number} without merging: work for #{issue} is "
        "cancelled",
        **base,
    )


def dispatch_event(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    inputs = payload.get("inputs") or {}
    number = dispatch_issue(inputs)
    sender = base["sender"]
    if number is None:
        return Decision(Act.DRAIN, f"manual dispatch by {sender}: drain the ChangeQueue", **base)
    if settings.is_self(sender):
        labeller = dig(inputs, "labeller")
        if not isinstance(labeller, str) or not labeller.strip():
            return Decision(
                Act.IGNORE,
                f"a queue dispatch for #{number} carries no labeller; "
                "nobody's permission can count",
                explain=True,
                issue=number,
                from_queue=True,
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
