"""``@chimera`` commands: what a comment means, from its payload alone."""

from __future__ import annotations

from typing import Any

import pytest

from chimera.github.gate.commands import Command, parse_command
from chimera.github.gate.events import Act, decide
from chimera.github.trust.settings import ActionSettings

SETTINGS = ActionSettings(identities=("chimera-app[bot]", "github-actions[bot]"))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("@chimera run", Command("run", "", "run")),
        ("  @Chimera RETRY please", Command("retry", "", "RETRY")),
        ("LGTM\n@chimera stop", Command("stop", "", "stop")),
        ("@chimera status\n@chimera stop", Command("status", "", "status")),
        ("@chimera approve 1a2b3c4d extra", Command("approve", "1a2b3c4d", "approve")),
        ("@chimera approve", Command("approve", "", "approve")),
        ("@chimera fix use sum()\nand keep add", Command("fix", "use sum()\nand keep add", "fix")),
        ("@chimera: fix x", Command("fix", "x", "fix")),
        ("@chimera frobnicate", Command("unknown", "", "frobnicate")),
        ("@chimera", Command("unknown", "", "")),
        ("@chimera[bot] run", Command("run", "", "run")),
    ],
)
def test_a_command_is_the_first_line_starting_with_the_handle(body: str, expected: Command) -> None:
    assert parse_command(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "",
        "thanks @chimera run",  # not at the start of a line
        "> @chimera run",  # quoting an earlier command repeats nothing
        "```\n@chimera run\n```",  # nor does a code block
        "~~~~\n```\n@chimera stop\n~~~~",
        "@chimerabot run",  # another account's handle
    ],
)
def test_quotes_code_and_mentions_inside_text_are_not_commands(body: str) -> None:
    assert parse_command(body) is None


@pytest.mark.parametrize(
    "body",
    [
        "<!-- @chimera run -->",
        "<!--\n@chimera run\n-->",
        "Thanks!\n<!--\n\n@chimera stop\n\n-->",
        "<!-- one --><!--\n@chimera approve abcdef1\n-->",
        "looks fine <!-- hidden\n@chimera run",  # unterminated: hides the rest, as on GitHub
        "<!-- a -->\n<!--\r\n@chimera fix everything\r\n-->",
    ],
)
def test_a_command_inside_an_html_comment_is_not_a_command(body: str) -> None:
    """Only what GitHub shows counts: a command a person cannot see is never obeyed."""
    assert parse_command(body) is None
    d = decide("issue_comment", comment(body, pull="approve" in body or "fix" in body), SETTINGS)
    assert d.action is Act.IGNORE and d.command is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("<!-- note -->\n@chimera run", Command("run", "", "run")),
        ("<!-- a --> @chimera status", Command("status", "", "status")),
        ("<!--\nx\n-->@chimera stop", Command("stop", "", "stop")),
        # A comment opener shown inside a code block hides nothing.
        ("```\n<!--\n```\n@chimera run", Command("run", "", "run")),
        ("@chimera fix a <!-- b --> c\n<!--\nd\n-->\ne", Command("fix", "a  c\n\n\n\ne", "fix")),
    ],
)
def test_visible_commands_next_to_html_comments_still_count(body: str, expected: Command) -> None:
    assert parse_command(body) == expected


def comment(
    body: str,
    *,
    by: str = "alice",
    kind: str = "User",
    action: str = "created",
    pull: bool = False,
    number: int = 4,
) -> dict[str, Any]:
    issue: dict[str, Any] = {"number": number, "state": "open", "locked": False}
    if pull:
        issue["pull_request"] = {"url": f"https://api.example/repos/octo/app/pulls/{number}"}
    user = {"login": by, "type": kind}
    return {
        "action": action,
        "issue": issue,
        "comment": {"id": 9, "body": body, "user": user},
        "sender": user,
        "repository": {"full_name": "octo/app", "default_branch": "main"},
    }


def test_run_on_an_issue_is_the_label_with_the_commenters_permission_to_check() -> None:
    d = decide("issue_comment", comment("@chimera run"), SETTINGS)
    assert (d.action, d.issue, d.pull, d.actor, d.command) == (Act.RUN, 4, None, "alice", "run")
    assert {c.name for c in d.checks} >= {"permission", "not_bot", "queue_slot"}


def test_an_edited_or_deleted_comment_is_never_a_command() -> None:
    for action in ("edited", "deleted"):
        d = decide("issue_comment", comment("@chimera run", action=action), SETTINGS)
        assert d.action is Act.IGNORE and not d.explain and d.command is None


def test_bots_and_chimera_itself_get_no_reply() -> None:
    for by, kind in (("helper[bot]", "Bot"), ("renovate", "Bot"), ("chimera-app[bot]", "Bot")):
        d = decide("issue_comment", comment("@chimera run", by=by, kind=kind), SETTINGS)
        assert d.action is Act.IGNORE and not d.explain, by


def test_approve_needs_a_sha_of_seven_or_more_hex_digits_on_a_pull_request() -> None:
    ok = decide("issue_comment", comment("@chimera approve ABCDEF1", pull=True), SETTINGS)
    assert (ok.action, ok.review_commit, ok.pull, ok.issue) == (Act.RESUME, "abcdef1", 4, None)
    checks = {c.name for c in ok.checks}
    assert checks == {"permission", "chimera_pr", "not_triggerer", "head_commit"}
    for bad in ("@chimera approve abc123", "@chimera approve", "@chimera approve zzzzzzz"):
        d = decide("issue_comment", comment(bad, pull=True), SETTINGS)
        assert d.action is Act.IGNORE and d.explain and "7 to 40 hex" in d.reason
    on_issue = decide("issue_comment", comment("@chimera approve abcdef1"), SETTINGS)
    assert on_issue.action is Act.IGNORE and on_issue.explain


def test_fix_carries_the_rest_of_the_comment_as_feedback_on_a_pull_request_only() -> None:
    body = "@chimera fix keep add()\nand <!-- x --> sum()"
    d = decide("issue_comment", comment(body, pull=True), SETTINGS)
    # Only what the comment shows is feedback: its hidden HTML comment is not carried.
    assert d.action is Act.RERUN and d.feedback == "keep add()\nand  sum()"
    empty = decide("issue_comment", comment("@chimera fix", pull=True), SETTINGS)
    assert empty.action is Act.IGNORE and empty.explain
    run_on_pr = decide("issue_comment", comment("@chimera run", pull=True), SETTINGS)
    assert run_on_pr.action is Act.IGNORE and "fix" in run_on_pr.reason


def test_stop_and_status_and_unknown_verbs_are_the_command_jobs() -> None:
    stop = decide("issue_comment", comment("@chimera stop"), SETTINGS)
    status = decide("issue_comment", comment("@chimera status", pull=True), SETTINGS)
    unknown = decide("issue_comment", comment("@chimera deploy"), SETTINGS)
    assert (stop.action, stop.command) == (Act.CANCEL, "stop")
    assert (status.action, status.pull) == (Act.STATUS, 4)
    assert unknown.command == "unknown" and unknown.explain and "`deploy`" in unknown.reason
