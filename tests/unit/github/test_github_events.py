"""decide(): real @octokit/webhooks-examples payloads → run / resume / rerun / cancel / ignore."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chimera.github.gate.events import Act, decide
from chimera.github.trust.settings import ActionSettings

Payload = Callable[[str], dict[str, Any]]
SETTINGS = ActionSettings(label="chimera", identities=("chimera-bot", "github-actions[bot]"))


def labeled(
    webhook: Payload, *, label: str = "chimera", sender: str = "alice", sender_type: str = "User"
) -> dict[str, Any]:
    data = webhook("issues.labeled")
    data["label"]["name"] = label
    data["sender"]["login"] = sender
    data["sender"]["type"] = sender_type
    return data


def review(
    webhook: Payload,
    state: str,
    *,
    reviewer: str = "bob",
    ref: str = "chimera/issue-7",
    reviewer_type: str = "User",
) -> dict[str, Any]:
    """The real ``submitted`` payload with the review's state set (the package has no
    approved/changes_requested example; see tests/data/github/webhooks/SOURCE.md)."""
    data = webhook("pull_request_review.submitted")
    data["review"]["state"] = state
    data["review"]["user"]["login"] = reviewer
    data["review"]["user"]["type"] = reviewer_type
    data["sender"]["login"] = reviewer
    data["pull_request"]["head"]["ref"] = ref
    return data


def test_label_by_a_person_runs_with_the_api_checks_listed(webhook: Payload) -> None:
    d = decide("issues", labeled(webhook), SETTINGS)
    assert d.action is Act.RUN and d.issue == 1 and d.actor == "alice"
    assert [c.name for c in d.checks] == [
        "not_bot",
        "permission",
        "issue_state",
        "chimera_pr",
        "queue_slot",
    ]
    assert d.to_json()["action"] == "run" and d.repository == "Codertocat/Hello-World"


def test_the_real_payload_label_bug_is_not_the_trigger(webhook: Payload) -> None:
    d = decide("issues", webhook("issues.labeled"), SETTINGS)  # label "bug", unchanged payload
    assert d.action is Act.IGNORE and "'bug' is not the trigger label" in d.reason
    assert not d.explain


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda p: p["issue"].__setitem__("pull_request", {"url": "x"}), "is a pull request"),
        (lambda p: p["issue"].__setitem__("state", "closed"), "is closed"),
        (lambda p: p["issue"].__setitem__("locked", True), "is locked"),
    ],
)
def test_pull_requests_closed_and_locked_issues_are_explained(
    webhook: Payload, mutate: Callable[[dict[str, Any]], None], needle: str
) -> None:
    payload = labeled(webhook)
    mutate(payload)
    d = decide("issues", payload, SETTINGS)
    assert d.action is Act.IGNORE and d.explain and needle in d.reason


def test_bots_are_refused_unless_allow_listed(webhook: Payload) -> None:
    d = decide("issues", labeled(webhook, sender="helper[bot]", sender_type="Bot"), SETTINGS)
    assert d.action is Act.IGNORE and d.explain and "is a bot" in d.reason
    allowed = ActionSettings(allowed_bots=("helper[bot]",))
    d2 = decide("issues", labeled(webhook, sender="helper[bot]", sender_type="Bot"), allowed)
    assert d2.action is Act.RUN


def test_chimera_never_triggers_or_cancels_itself(webhook: Payload) -> None:
    d = decide("issues", labeled(webhook, sender="chimera-bot"), SETTINGS)
    assert d.action is Act.IGNORE and "never triggers itself" in d.reason and not d.explain
    removed = webhook("issues.unlabeled")
    removed["label"]["name"] = "chimera"
    removed["sender"]["login"] = "chimera-bot"
    d2 = decide("issues", removed, SETTINGS)
    assert d2.action is Act.IGNORE and "nothing is cancelled" in d2.reason
    removed["sender"]["login"] = "alice"
    d3 = decide("issues", removed, SETTINGS)
    assert d3.action is Act.CANCEL and d3.issue == 1 and d3.actor == "alice"


def test_approval_on_a_chimera_pr_resumes(webhook: Payload) -> None:
    d = decide("pull_request_review", review(webhook, "approved"), SETTINGS)
    assert d.action is Act.RESUME and d.issue == 7 and d.pull == 2 and d.actor == "bob"
    assert {c.name for c in d.checks} == {
        "permission",
        "chimera_pr",
        "not_triggerer",
        "head_commit",
    }
    assert d.review_commit == d.head_sha


def test_approval_of_an_older_commit_is_stale(webhook: Payload) -> None:
    payload = review(webhook, "approved")
    payload["review"]["commit_id"] = "0" * 40
    d = decide("pull_request_review", payload, SETTINGS)
    assert d.action is Act.IGNORE and d.explain and "approve the current head" in d.reason


def test_changes_requested_reruns_with_the_review_as_feedback(webhook: Payload) -> None:
    payload = review(webhook, "changes_requested")
    payload["review"]["body"] = "Please also handle empty lists."
    d = decide("pull_request_review", payload, SETTINGS)
    assert d.action is Act.RERUN and d.feedback == "Please also handle empty lists."


def test_reviews_outside_chimera_prs_bots_and_comments_are_ignored(webhook: Payload) -> None:
    assert (
        decide("pull_request_review", webhook("pull_request_review.submitted"), SETTINGS).action
        is Act.IGNORE
    )  # branch "changes": not Chimera's
    commented = decide("pull_request_review", review(webhook, "commented"), SETTINGS)
    assert commented.action is Act.IGNORE and not commented.explain
    own = decide(
        "pull_request_review", review(webhook, "approved", reviewer="chimera-bot"), SETTINGS
    )
    assert own.action is Act.IGNORE and "Chimera's own" in own.reason
    botty = decide(
        "pull_request_review",
        review(webhook, "approved", reviewer="ci[bot]", reviewer_type="Bot"),
        SETTINGS,
    )
    assert botty.action is Act.IGNORE and "bot" in botty.reason


def test_pull_request_closed(webhook: Payload) -> None:
    payload = webhook("pull_request.closed")
    assert decide("pull_request", payload, SETTINGS).action is Act.DRAIN  # not Chimera's
    payload["pull_request"]["head"]["ref"] = "chimera/issue-5"
    d = decide("pull_request", payload, SETTINGS)
    assert d.action is Act.CANCEL and d.issue == 5 and "without merging" in d.reason
    payload["pull_request"]["merged"] = True
    assert decide("pull_request", payload, SETTINGS).action is Act.DRAIN
    payload["pull_request"]["merged"] = False
    payload["sender"]["login"] = "chimera-bot"
    assert decide("pull_request", payload, SETTINGS).action is Act.DRAIN


def test_dispatch_from_the_queue_carries_the_original_labeller(webhook: Payload) -> None:
    payload = webhook("workflow_dispatch")
    payload["sender"]["login"] = "chimera-bot"
    payload["inputs"] = {"issue-number": "12", "labeller": "alice"}
    d = decide("workflow_dispatch", payload, SETTINGS)
    assert d.action is Act.RUN and d.actor == "alice" and d.from_queue and d.issue == 12
    payload["inputs"] = {"issue-number": "12"}
    d2 = decide("workflow_dispatch", payload, SETTINGS)
    assert d2.action is Act.IGNORE and "carries no labeller" in d2.reason
    assert d2.from_queue  # its slot is given back by decide


def test_manual_dispatch_counts_the_person_who_dispatched(webhook: Payload) -> None:
    payload = webhook("workflow_dispatch")  # sender octocat
    payload["inputs"] = {"issue-number": "3", "labeller": "someone-else"}
    d = decide("workflow_dispatch", payload, SETTINGS)
    assert d.action is Act.RUN and d.actor == "octocat" and not d.from_queue
    payload["inputs"] = {}
    assert decide("workflow_dispatch", payload, SETTINGS).action is Act.DRAIN
    assert decide("schedule", {"schedule": "*/15 * * * *"}, SETTINGS).action is Act.DRAIN
    assert decide("push", {}, SETTINGS).action is Act.IGNORE


def test_settings_from_env_and_bad_values() -> None:
    from chimera.errors import ConfigError

    s = ActionSettings.from_env(
        {
            "CHIMERA_BOT_LOGIN": "my-app[bot], other",
            "CHIMERA_MAX_OPEN_PRS": "1",
            "CHIMERA_AUTO_MERGE": "true",
            "CHIMERA_RISK_REVIEWERS": "@bob,carol",
        }
    )
    assert s.identities == ("my-app[bot]", "other", "github-actions[bot]")
    assert s.max_open_prs == 1 and s.auto_merge and s.risk_reviewers == ("bob", "carol")
    assert s.issue_of_branch("chimera/issue-12") == 12 and s.issue_of_branch("main") is None
    with pytest.raises(ConfigError, match="CHIMERA_MAX_OPEN_PRS"):
        ActionSettings.from_env({"CHIMERA_MAX_OPEN_PRS": "many"})
    with pytest.raises(ConfigError, match="CHIMERA_AUTO_MERGE"):
        ActionSettings.from_env({"CHIMERA_AUTO_MERGE": "perhaps"})
    with pytest.raises(ConfigError, match="CHIMERA_BUDGET_USD"):
        ActionSettings.from_env({"CHIMERA_BUDGET_USD": "-1"})


def test_the_ticks_own_filing_label_on_a_task_issue_is_a_scheduled_run(webhook: Payload) -> None:
    filed = labeled(webhook, label="chimera:schedule", sender="chimera-bot", sender_type="Bot")
    filed["issue"]["body"] = "Do it.\n\n---\n<!-- chimera:schedule-task nightly -->"
    d = decide("issues", filed, SETTINGS)
    assert d.action is Act.RUN and d.actor == "chimera-bot" and "'nightly'" in d.reason
    assert [c.name for c in d.checks] == [
        "schedule_label",
        "issue_state",
        "chimera_pr",
        "queue_slot",
    ]
    # A schedule's report issue (no task marker) starts nothing, and says nothing.
    filed["issue"]["body"] = "Chimera's schedule `spec-green` files this issue."
    quiet = decide("issues", filed, SETTINGS)
    assert quiet.action is Act.IGNORE and not quiet.explain
    # A person's label on a task issue is refused, with why.
    filed["issue"]["body"] = "<!-- chimera:schedule-task nightly -->"
    filed["sender"] |= {"login": "alice", "type": "User"}
    person = decide("issues", filed, SETTINGS)
    assert person.action is Act.IGNORE and person.explain and "only Chimera's tick" in person.reason
