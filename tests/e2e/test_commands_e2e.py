"""``@chimera`` commands end to end on the GitHub fake: comments posted through PyGithub, the
``issue_comment`` payload built from the fake's state (GitHub's shapes), and the real jobs —
decide → agent → verify → publish for the commands that start work, the command job for
``stop`` and ``status`` — with the tokens the example workflows give them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from chimera.github.trust.summary import parse_marker
from chimera.testing.github_fake import add_workflow_run, comment_event

if TYPE_CHECKING:
    from conftest import World

COMMAND_PERMS = {"issues": "write", "pull-requests": "read", "actions": "write"}
REVIEW_DECIDE_PERMS = {"contents": "read", "issues": "write", "pull-requests": "write"}


def model(world: World, content: str, *, expect: list[str] | None = None) -> None:
    world.script_calc(content, name=f"model-{len(expect or [])}", expect=expect)


def say(world: World, number: int, login: str, body: str) -> dict[str, Any]:
    """``login`` comments ``body`` on #``number`` through PyGithub; the webhook payload."""
    gh = world.fake.pygithub(world.fake.add_token(login))
    created = gh.get_repo("octo/app").get_issue(number).create_comment(body)
    return comment_event(world.fake, "octo/app", created.id)


def command(world: World, event: dict[str, Any], run: int) -> dict[str, Any]:
    token = world.workflow_token(COMMAND_PERMS)
    return world.job("command", "issue_comment", event, run=run, token=token)


def decide(world: World, event: dict[str, Any], run: int) -> dict[str, Any]:
    token = world.workflow_token(world.decide_perms)
    return world.job("decide", "issue_comment", event, run=run, token=token)


def chimera_comments(world: World, number: int) -> list[str]:
    return [
        c["body"] for c in world.repo.issue_comments(number) if c["user"] == "github-actions[bot]"
    ]


def new_issue(world: World) -> int:
    issue = world.add_total_issue()
    return int(issue["number"])


def test_run_by_comment_opens_a_pr_and_says_it_is_working_with_the_run_link(
    world: World,
) -> None:
    model(world, world.total_calc)
    number = new_issue(world)
    event = say(world, number, "alice", "Looks clear.\n@chimera run")
    jobs = world.pipeline("issue_comment", event, run=21)
    assert jobs["decide"]["proceed"] == "true" and jobs["decide"]["started-by"] == "alice"
    assert jobs["publish"]["status"] == jobs["publish"]["outcome"] == "pr_opened"
    agent = jobs["agent"]
    state = json.loads(Path(world.tmp / "artifacts-21" / "run" / "state.json").read_text())
    # The step outputs are the run state's own counters.
    assert (agent["outcome"], agent["sandbox"]) == ("done", "strict")
    assert agent["tokens"] == str(state["tokens"])
    assert agent["cost-usd"] == ("" if state["cost_usd"] is None else f"{state['cost_usd']:.4f}")
    (pull,) = world.repo.pulls()
    assert pull["head"] == "chimera/issue-1" or world.repo.head_sha("chimera/issue-1")
    # decide's "working on it" comment (with the run link) became the outcome: one comment.
    calls = world.fake.calls_to("POST", r".*/issues/1/comments$")
    (posted,) = [c for c in calls if c.login == "github-actions[bot]"]
    sent = posted.body if isinstance(posted.body, dict) else json.loads(posted.body)
    progress = sent["body"]
    assert "working on it" in progress and "/actions/runs/21" in progress
    # It is the run's one outcome comment, posted as "running" under the run's key.
    # It is also the run's ChangeQueue slot claim (its token, chimera.github.queue.claims).
    marker = parse_marker(progress, "outcome") or {}
    assert re.fullmatch(r"[0-9a-f]{16}", str(marker.pop("claim", "")))
    assert marker == {"issue": number, "key": "21:1", "kind": "running"}
    (outcome,) = chimera_comments(world, number)
    assert "Pull request opened" in outcome
    assert (parse_marker(outcome, "outcome") or {}).get("kind") == "pr_opened"
    assert world.fake.calls_to("PATCH", r".*/issues/comments/\d+")
    # The command was acknowledged with a reaction on the comment itself.
    assert world.repo.comments[event["comment"]["id"]]["reactions"] == [
        ("github-actions[bot]", "eyes")
    ]
    # The command job saw the same comment and said nothing: `run` is decide's.
    assert command(world, event, 21)["status"] == "ignored"
    assert len(chimera_comments(world, number)) == 1


def test_only_write_access_people_command_others_get_one_refusal_bots_and_edits_nothing(
    world: World,
) -> None:
    number = new_issue(world)
    refused = say(world, number, "mallory", "@chimera run")
    gate = decide(world, refused, 31)
    assert gate["proceed"] == "false" and gate["status"] == "refused"
    assert command(world, refused, 31)["status"] == "ignored"
    stop = say(world, number, "mallory", "@chimera stop")
    assert decide(world, stop, 32)["status"] == "ignored"
    assert command(world, stop, 32)["status"] == "refused"
    replies = chimera_comments(world, number)
    assert len(replies) == 2
    assert all("mallory" in r and "write, maintain or admin role" in r for r in replies)

    bot = say(world, number, "helper[bot]", "@chimera run")
    assert decide(world, bot, 33)["proceed"] == "false"
    assert command(world, bot, 33)["status"] == "ignored"
    # An edit that adds a command to an old comment: nothing (only `created` counts).
    plain = say(world, number, "alice", "Thanks!")
    cid = plain["comment"]["id"]
    gh = world.fake.pygithub(world.fake.add_token("alice"))
    gh.get_repo("octo/app").get_issue(number).get_comment(cid).edit("@chimera run")
    edited = comment_event(world.fake, "octo/app", cid, action="edited", previous_body="Thanks!")
    assert decide(world, edited, 34)["proceed"] == "false"
    assert command(world, edited, 34)["status"] == "ignored"
    assert len(chimera_comments(world, number)) == 2  # nothing for the bot or the edit
    assert not any(c.get("reactions") for c in world.repo.comments.values())  # none taken
    assert world.repo.issues[number]["labels"] == []  # no slot was ever taken


def test_stop_cancels_the_running_workflow_run_and_frees_the_slot(world: World) -> None:
    number = new_issue(world)
    gate = decide(world, say(world, number, "alice", "@chimera run"), 41)
    assert gate["proceed"] == "true"
    assert "chimera:running" in world.repo.issues[number]["labels"]
    add_workflow_run(world.fake, "octo/app", 41)

    status = command(world, say(world, number, "bob", "@chimera status"), 42)
    assert status["status"] == "reported"
    report = chimera_comments(world, number)[-1]
    assert "- running" in report and "/actions/runs/41" in report

    stop_event = say(world, number, "bob", "@chimera stop")
    assert decide(world, stop_event, 43)["status"] == "ignored"  # the command job's verb
    stopped = command(world, stop_event, 43)
    assert stopped["status"] == "stopped" and stopped["cancelled"] == "41"
    # GitHub cancels asynchronously: asked now, the run completes as cancelled shortly after.
    assert world.repo.workflow_runs[41]["cancel_requested"] is True
    assert world.fake.settle_cancels("octo/app") == [41]
    run41 = world.repo.workflow_runs[41]
    assert (run41["status"], run41["conclusion"]) == ("completed", "cancelled")
    assert "chimera:running" not in world.repo.issues[number]["labels"]
    assert "Stopped by `bob`" in chimera_comments(world, number)[-1]
    # Again: the run has completed (GitHub's 409), nothing else is held.
    again = command(world, say(world, number, "bob", "@chimera stop"), 44)
    assert again["status"] == "stopped" and again["cancelled"] == ""
    assert "nothing was running" in chimera_comments(world, number)[-1]
    # The first stop made run 41's comment its "cancelled" outcome: the second has no run
    # left to cancel, and asks GitHub nothing.
    calls = world.fake.calls_to("POST", r".*/actions/runs/41/cancel")
    assert [c.status for c in calls] == [202]


def test_unknown_verb_gets_the_help_once(world: World) -> None:
    number = new_issue(world)
    event = say(world, number, "alice", "@chimera deploy to prod")
    assert decide(world, event, 51)["status"] == "ignored"
    assert command(world, event, 51)["status"] == "explained"
    (reply,) = chimera_comments(world, number)
    assert "`deploy` is not a command" in reply and "@chimera fix" in reply


@pytest.mark.slow
def test_approve_by_sha_and_fix_by_comment_on_the_chimera_pr(world: World) -> None:
    model(world, world.total_calc.replace("sum(xs)", "0"))
    number = new_issue(world)
    world.pipeline("issue_comment", say(world, number, "alice", "@chimera run"), run=61)
    (pull,) = world.repo.pulls()
    pr = int(pull["number"])
    head = world.repo.head_sha("chimera/issue-1")
    assert head is not None

    def review_decide(event: dict[str, Any], run: int) -> dict[str, Any]:
        token = world.workflow_token(REVIEW_DECIDE_PERMS)
        return world.job("decide", "issue_comment", event, run=run, token=token)

    # The trigger cannot approve; a stale or foreign SHA is refused; bob's head[:7] starts CI.
    own = review_decide(say(world, pr, "alice", f"@chimera approve {head[:7]}"), 62)
    assert own["status"] == "refused"
    stale = review_decide(say(world, pr, "bob", "@chimera approve 0000000"), 63)
    assert stale["status"] == "refused"
    ok = review_decide(say(world, pr, "bob", f"@chimera approve {head[:7]}"), 64)
    assert ok["start-ci"] == "true" and ok["pull"] == str(pr)
    refusals = [c for c in chimera_comments(world, pr) if "Not started" in c]
    assert any("triggered this run" in c for c in refusals)
    assert any("head is now" in c for c in refusals)

    feedback = "total() must return the sum, not 0. @alice see #1"
    model(world, world.total_calc, expect=["total() must return the sum"])
    event = say(world, pr, "bob", f"@chimera fix {feedback}")
    jobs = world.pipeline("issue_comment", event, run=65, gate=review_decide(event, 65))
    assert jobs["decide"]["mode"] == "rerun" and jobs["decide"]["head-sha"] == head
    assert jobs["publish"]["status"] == "pr_updated"
    assert jobs["publish"]["pr-number"] == str(pr) and len(world.repo.pulls()) == 1
    state = json.loads(Path(world.tmp / "artifacts-65" / "run" / "state.json").read_text())
    assert "total() must return the sum" in state["task"] and state["tainted"]


WEBHOOKS = Path(__file__).resolve().parents[1] / "data" / "github" / "webhooks"


def review_event(review: dict[str, Any], pr: int, head: str) -> dict[str, Any]:
    """The real ``pull_request_review.submitted`` payload, pointed at ``review`` on ``pr``."""
    data: dict[str, Any] = json.loads((WEBHOOKS / "pull_request_review.submitted.json").read_text())
    data["repository"] |= {"full_name": "octo/app", "name": "app", "default_branch": "main"}
    data["review"] |= {
        "id": review["id"],
        "state": "changes_requested",
        "body": review["body"],
        "commit_id": head,
        "user": data["review"]["user"] | {"login": review["user"]["login"]},
    }
    data["sender"] |= {"login": review["user"]["login"]}
    data["pull_request"]["number"] = pr
    data["pull_request"]["head"] |= {"ref": "chimera/issue-1", "sha": head}
    return data


@pytest.mark.slow
def test_request_changes_with_inline_comments_reruns_with_file_and_line(world: World) -> None:
    model(world, world.total_calc.replace("sum(xs)", "0"))
    number = new_issue(world)
    world.pipeline("issue_comment", say(world, number, "alice", "@chimera run"), run=71)
    (pull,) = world.repo.pulls()
    pr = int(pull["number"])
    head = world.repo.head_sha("chimera/issue-1")
    assert head is not None

    gh = world.fake.pygithub(world.fake.add_token("bob"))
    review = (
        gh.get_repo("octo/app")
        .get_pull(pr)
        .create_review(
            body="Please add a mean() too.",
            event="REQUEST_CHANGES",
            comments=[{"path": "calc.py", "line": 5, "body": "`total` returns 0 @alice"}],
        )
    )
    # The inline comment reached the model with its file and line (fenced, tainted).
    model(world, world.total_calc, expect=["calc.py:5", "mean()"])
    event = review_event(review.raw_data, pr, head)
    jobs = world.pipeline("pull_request_review", event, run=72)
    assert jobs["decide"]["mode"] == "rerun"
    assert jobs["verify"]["verdict"] == "passed"
    assert jobs["publish"]["status"] == "pr_updated" and len(world.repo.pulls()) == 1
    state = json.loads(Path(world.tmp / "artifacts-72" / "run" / "state.json").read_text())
    task = state["task"]
    assert "calc.py:5" in task and "@\u2060alice" in task and state["tainted"]
    patch = Path(world.tmp / "artifacts-72" / "patch.diff").read_text()
    # The whole change against the default branch (a fresh attempt from the base).
    assert "+def total(xs):" in patch and "+    return sum(xs)" in patch


def test_stop_in_flight_cancels_a_comment_started_run_and_it_never_publishes(
    world: World,
) -> None:
    model(world, world.total_calc)
    number = new_issue(world)
    run = world.fake.add_workflow_run("octo/app", 71)  # in progress

    def stop() -> None:
        stopped = command(world, say(world, number, "bob", "@chimera stop"), 72)
        assert stopped["status"] == "stopped" and stopped["cancelled"] == "71"
        assert run.get("cancel_requested") is True  # asked through the Actions API

    # The cancel is asynchronous: the run goes on until publish, which re-checks.
    event = say(world, number, "alice", "@chimera run")
    jobs = world.pipeline("issue_comment", event, run=71, after_decide=stop)
    assert jobs["publish"]["status"] == "cancelled"
    assert world.repo.pulls() == [] and world.repo.head_sha("chimera/issue-1") is None
    mine = chimera_comments(world, number)
    (outcome,) = [c for c in mine if (parse_marker(c, "outcome") or {}).get("key") == "71:1"]
    assert (parse_marker(outcome, "outcome") or {}).get("kind") == "cancelled"
    assert "`@chimera stop` stopped the run" in outcome
    assert "chimera:running" not in world.repo.issues[number]["labels"]
    assert world.fake.settle_cancels("octo/app") == [71]
