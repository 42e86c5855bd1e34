"""Exactly one true outcome per run, under faults, re-runs and races (issue "one outcome").

Each test is one row of the issue's table: the real jobs (decide → agent → verify → publish,
tests/e2e/conftest.py) on the GitHub fake with the fault injected. Each asserts no duplicate
PR, no lost issue, and exactly one outcome comment per run stating the final truth.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from chimera.github.trust.summary import parse_marker
from chimera.testing.github_fake import FakeFault
from chimera.testing.github_fake.routing import HttpError

if TYPE_CHECKING:
    from conftest import World


def setup(world: World, *, labels: tuple[str, ...] = ("chimera",)) -> None:
    world.script_calc(world.total_calc)
    world.add_total_issue(labels=labels)


def outcomes(world: World, issue: int = 1) -> list[tuple[str, str]]:
    """``(kind, key)`` of every outcome comment on ``issue``, oldest first."""
    found = []
    for body in world.comments(issue):
        marker = parse_marker(body, "outcome")
        if marker is not None:
            found.append((str(marker.get("kind", "?")), str(marker["key"])))
    return found


def publish_again(world: World, jobs: dict[str, dict[str, Any]], run: int, attempt: int) -> Any:
    """ "Re-run failed jobs": the publish job again, same run, same artifact, a new attempt."""
    token = world.workflow_token(world.publish_perms)
    return world.job(
        "publish",
        "issues",
        world.labeled(1, "alice"),
        run=run,
        token=token,
        root=world.clone(token),
        artifacts=world.tmp / f"artifacts-{run}",
        CHIMERA_AGENT_AUDIT_HEAD=str(jobs["agent"].get("audit-head", "")),
        CHIMERA_AGENT_ARTIFACT=str(jobs["agent"]["artifact"]),
        GITHUB_RUN_ATTEMPT=str(attempt),
        **world.decided_env(jobs["decide"]),
        **world.verified_env(jobs["verify"]),
    )


def one_open_pr(world: World) -> dict[str, Any]:
    (pull,) = world.repo.pulls()
    assert pull["state"] == "open" and pull["head"] == "chimera/issue-1"
    return pull


def test_pulls_post_failing_after_the_push_says_so_frees_the_slot_and_a_rerun_edits_it(
    world: World,
) -> None:
    setup(world)
    world.fake.inject(FakeFault("POST", r"/pulls$", status=500, times=4))
    jobs = world.pipeline("issues", world.labeled(1, "alice"), run=21)
    assert jobs["publish"]["rc"] != 0 and world.repo.pulls() == []
    assert outcomes(world) == [("crashed", "21:1")]
    labels = set(world.repo.issues[1]["labels"])
    assert "chimera:running" not in labels and "chimera:failed" in labels
    again = publish_again(world, jobs, 21, attempt=2)
    assert again["status"] == "pr_opened"
    one_open_pr(world)
    assert outcomes(world) == [("pr_opened", "21:1")]  # the same comment, edited in place
    assert set(world.repo.issues[1]["labels"]) == {"chimera:pr-open"}


def test_the_outcome_write_failing_after_the_pr_exists_is_reported_and_a_rerun_says_opened(
    world: World,
) -> None:
    setup(world)

    def comments_fail() -> None:  # decide's "Started" comment is there; its edit fails
        world.fake.inject(FakeFault("PATCH", r"/issues/comments/\d+$", status=500, times=4))

    jobs = world.pipeline("issues", world.labeled(1, "alice"), run=22, after_decide=comments_fail)
    assert jobs["publish"]["rc"] != 0
    one_open_pr(world)
    assert outcomes(world) == [("crashed", "22:1")]
    again = publish_again(world, jobs, 22, attempt=2)
    assert again["status"] == "pr_opened"  # this run opened it; the re-run does not say "updated"
    one_open_pr(world)
    assert outcomes(world) == [("pr_opened", "22:1")]


def test_a_long_secondary_rate_limit_is_edited_to_the_outcome_by_the_rerun(world: World) -> None:
    setup(world)
    world.fake.inject(
        FakeFault("POST", r"/pulls$", status=403, secondary_rate_limit=True, retry_after=600)
    )
    jobs = world.pipeline("issues", world.labeled(1, "alice"), run=23)
    assert jobs["publish"]["rc"] != 0 and world.repo.pulls() == []
    assert outcomes(world) == [("rate_limited", "23:1")]
    again = publish_again(world, jobs, 23, attempt=2)
    assert again["status"] == "pr_opened"
    one_open_pr(world)
    (body,) = world.comments(1)
    assert outcomes(world) == [("pr_opened", "23:1")] and "Rate-limited" not in body


def test_a_comment_post_that_times_out_but_lands_late_is_not_posted_twice(world: World) -> None:
    setup(world)
    # The client gives up after 2 s (CHIMERA_GITHUB_TIMEOUT); the comment lands at 3 s.
    world.fake.inject(FakeFault("POST", r"/issues/1/comments$", status=None, delay=3.0))
    jobs = world.pipeline("issues", world.labeled(1, "alice"), run=24)
    assert jobs["publish"]["status"] == "pr_opened"
    time.sleep(1.5)  # past the late landing, had publish not waited for it
    one_open_pr(world)
    assert outcomes(world) == [("pr_opened", "24:1")]
    assert len(world.fake.calls_to("POST", r"/issues/1/comments$")) == 1


def test_api_500s_in_decide_leave_one_comment_that_the_rerun_edits(world: World) -> None:
    setup(world)
    world.fake.inject(FakeFault("GET", r"/collaborators/alice/permission$", status=500, times=4))
    token = world.workflow_token(world.decide_perms)
    gate = world.job("decide", "issues", world.labeled(1, "alice"), run=25, token=token)
    assert gate["rc"] != 0 and gate.get("proceed") != "true"
    assert outcomes(world) == [("crashed", "25:1")]
    retry = world.job(
        "decide",
        "issues",
        world.labeled(1, "alice"),
        run=25,
        token=world.workflow_token(world.decide_perms),
        GITHUB_RUN_ATTEMPT="2",
    )
    assert retry["proceed"] == "true"
    jobs = world.pipeline("issues", world.labeled(1, "alice"), run=25, gate=retry)
    assert jobs["publish"]["status"] == "pr_opened"
    one_open_pr(world)
    assert outcomes(world) == [("pr_opened", "25:1")]


def test_a_label_removed_before_the_pending_run_starts_is_refused(world: World) -> None:
    setup(world, labels=())  # labelled, then unlabelled while the run was pending
    gate = world.job(
        "decide",
        "issues",
        world.labeled(1, "alice"),
        run=26,
        token=world.workflow_token(world.decide_perms),
    )
    assert gate["proceed"] == "false" and gate["status"] == "refused"
    assert outcomes(world) == [("refused", "26:1")]
    assert "no longer on #1" in world.comments(1)[0]
    assert "chimera:running" not in world.repo.issues[1]["labels"]


def test_rerun_all_jobs_of_an_old_successful_run_is_refused_and_keeps_its_outcome(
    world: World,
) -> None:
    setup(world)
    jobs = world.pipeline("issues", world.labeled(1, "alice"), run=27)
    assert jobs["publish"]["status"] == "pr_opened"
    for _ in range(2):  # the re-run, and a retry of that re-run's decide
        gate = world.job(
            "decide",
            "issues",
            world.labeled(1, "alice"),
            run=27,
            token=world.workflow_token(world.decide_perms),
            GITHUB_RUN_ATTEMPT="2",
        )
        assert gate["proceed"] == "false"
    one_open_pr(world)
    assert outcomes(world) == [("pr_opened", "27:1"), ("refused", "27:1:attempt-2")]


def _dispatch(issue_number: str) -> dict[str, Any]:
    return {
        "inputs": {"issue-number": issue_number},
        "ref": "refs/heads/main",
        "sender": {"login": "alice", "type": "User"},
        "repository": {"full_name": "octo/app", "default_branch": "main"},
    }


def test_dispatch_issue_number_accepts_hash_and_refuses_junk_in_one_line(world: World) -> None:
    setup(world, labels=())
    gate = world.job(
        "decide",
        "workflow_dispatch",
        _dispatch("#1"),
        run=28,
        token=world.workflow_token(world.decide_perms),
    )
    assert gate["proceed"] == "true" and gate["issue"] == "1"
    for junk in ("7abc", "-1", "1 2"):
        bad = world.job(
            "decide",
            "workflow_dispatch",
            _dispatch(junk),
            run=29,
            token=world.workflow_token(world.decide_perms),
        )
        assert bad["rc"] != 0 and "proceed" not in bad
    summary = (world.tmp / "summary-29.md").read_text().splitlines()
    assert len(summary) == 3 and all("is not an issue number" in line for line in summary)
    assert "'7abc'" in summary[0]
    assert world.repo.dispatches == [] and outcomes(world) == [("running", "28:1")]


def test_a_labeled_payload_without_a_sender_is_ignored_with_a_reason(world: World) -> None:
    setup(world)
    gate = world.job(
        "decide",
        "issues",
        world.labeled(1, None),
        run=30,
        token=world.workflow_token(world.decide_perms),
    )
    assert gate["rc"] == 0 and gate["proceed"] == "false" and gate["decision"] == "ignore"
    assert world.comments(1) == [] and world.repo.pulls() == []


def _schedule() -> dict[str, Any]:
    return {"schedule": "*/15 * * * *", "repository": {"full_name": "octo/app"}}


def test_a_run_cancelled_in_the_ui_frees_its_slot_and_a_lost_dispatch_is_sent_again(
    world: World,
) -> None:
    world.env["CHIMERA_MAX_OPEN_PRS"] = "1"
    setup(world)
    world.add_total_issue("two", labels=("chimera",))
    token = world.workflow_token(world.decide_perms)
    first = world.job("decide", "issues", world.labeled(1, "alice"), run=41, token=token)
    assert first["proceed"] == "true" and outcomes(world) == [("running", "41:1")]
    run = world.repo.workflow_runs[41]
    second = world.job("decide", "issues", world.labeled(2, "alice"), run=42, token=token)
    assert second["status"] == "queued"
    drained = world.job("drain", "schedule", _schedule(), run=43, token=world.app_token)
    assert drained["started"] == "" and world.repo.dispatches == []  # run 41 still holds it
    run.update(status="completed", conclusion="cancelled")  # cancelled in the UI
    drained = world.job("drain", "schedule", _schedule(), run=44, token=world.app_token)
    assert drained["started"] == "2"
    assert outcomes(world, 1) == [("crashed", "41:1")]  # the running comment, edited once
    assert "completed: cancelled" in world.comments(1)[0]
    assert "chimera:running" not in world.repo.issues[1]["labels"]
    # The dispatch is lost: no run ever starts for #2. Past the grace period, a drain gives
    # #2 its place back and dispatches it again.
    again = world.job("drain", "schedule", _schedule(), run=45, token=world.app_token)
    assert again["started"] == "" and len(world.repo.dispatches) == 1  # within the grace
    for comment in world.repo.issue_comments(2):
        comment["body"] = re.sub(
            r'"dispatched":"[^"]+"', '"dispatched":"2020-01-01T00:00:00+00:00"', comment["body"]
        )
    again = world.job("drain", "schedule", _schedule(), run=46, token=world.app_token)
    assert again["started"] == "2"
    assert [d["inputs"]["issue-number"] for d in world.repo.dispatches] == ["2", "2"]
    assert sum("Queued" in c for c in world.comments(2)) == 1


def _unlabeled(world: World, issue: int, sender: str) -> dict[str, Any]:
    return world.labeled(issue, sender) | {"action": "unlabeled"}


def test_removing_the_label_in_flight_cancels_the_run_and_it_never_publishes(
    world: World,
) -> None:
    setup(world)
    run = world.fake.add_workflow_run("octo/app", 51)  # in progress

    def remove_label() -> None:
        world.repo.issues[1]["labels"].remove("chimera")
        drained = world.job(
            "drain", "issues", _unlabeled(world, 1, "bob"), run=52, token=world.app_token
        )
        assert drained["rc"] == 0
        assert run.get("cancel_requested") is True  # asked through the Actions API

    # The cancel is asynchronous: the run goes on until publish, which re-checks.
    jobs = world.pipeline("issues", world.labeled(1, "alice"), run=51, after_decide=remove_label)
    assert jobs["publish"]["status"] == "cancelled"
    assert world.repo.pulls() == [] and world.repo.head_sha("chimera/issue-1") is None
    assert outcomes(world) == [("cancelled", "51:1")]
    assert "`bob` removed the label" in world.comments(1)[0]
    assert "chimera:running" not in world.repo.issues[1]["labels"]
    assert world.fake.settle_cancels("octo/app") == [51]


def test_closing_the_issue_in_flight_publishes_nothing(world: World) -> None:
    setup(world)

    def close() -> None:
        world.repo.issues[1]["state"] = "closed"

    jobs = world.pipeline("issues", world.labeled(1, "alice"), run=53, after_decide=close)
    assert jobs["publish"]["status"] == "cancelled"
    assert world.repo.pulls() == [] and world.repo.head_sha("chimera/issue-1") is None
    assert outcomes(world) == [("cancelled", "53:1")]
    assert "#1 was closed" in world.comments(1)[0]


def test_a_dispatch_naming_a_labeller_runs_as_whoever_labelled_per_the_issue_events(
    world: World,
) -> None:
    setup(world, labels=())  # nobody labelled #1
    world.add_total_issue("two", user="mallory", labels=("chimera",), labelled_by="alice")
    token = world.workflow_token(world.decide_perms)
    forged = _dispatch("1") | {"sender": {"login": "github-actions[bot]", "type": "Bot"}}
    forged["inputs"]["labeller"] = "bob"  # any workflow's GITHUB_TOKEN could send this
    gate = world.job("decide", "workflow_dispatch", forged, run=61, token=token)
    assert gate["proceed"] == "false" and gate["status"] == "refused"
    assert "nobody's permission can count" in world.comments(1)[0]
    named = _dispatch("2") | {"sender": {"login": "github-actions[bot]", "type": "Bot"}}
    named["inputs"]["labeller"] = "bob"
    gate = world.job("decide", "workflow_dispatch", named, run=62, token=token)
    assert gate["proceed"] == "true" and gate["started-by"] == "alice"  # not bob


def test_rerunning_the_agent_job_uploads_its_own_artifact_and_publish_ships_that_one(
    world: World,
) -> None:
    setup(world)
    token = world.workflow_token(world.decide_perms)
    gate = world.job("decide", "issues", world.labeled(1, "alice"), run=71, token=token)
    decided = world.decided_env(gate)
    first = world.agent("issues", world.labeled(1, "alice"), run=71, decided=decided)
    assert re.fullmatch(r"chimera-run-attempt-1-[0-9a-f]{16}", first["artifact"])
    # "Re-run jobs": the agent job again in the same workflow run, now writing a second total().
    second_total = world.total_calc.replace("return sum(xs)", "return sum(xs, 0)")
    model = Path(world.model.removeprefix("scripted:"))
    model.write_text(model.read_text().replace("sum(xs)", "sum(xs, 0)"))
    assert world.fake.rerun("octo/app", 71) == 2
    with pytest.raises(HttpError) as clash:  # what one fixed name did: upload-artifact's 409
        world.upload(71, first["artifact"], world.tmp / "agent-71-attempt-1")
    assert clash.value.status == 409
    again = world.agent("issues", world.labeled(1, "alice"), run=71, decided=decided)
    assert re.fullmatch(r"chimera-run-attempt-2-[0-9a-f]{16}", again["artifact"])
    names = [a["name"] for a in world.repo.artifacts[71]]
    assert names == [first["artifact"], again["artifact"]]
    jobs = world.verify_publish(
        "issues", world.labeled(1, "alice"), run=71, name=again["artifact"], decided=decided,
        audit_head=str(again.get("audit-head", "")),
    )  # fmt: skip
    assert jobs["publish"]["status"] == "pr_opened"
    pull = one_open_pr(world)
    head = world.repo.head_sha("chimera/issue-1")
    shipped = subprocess.run(
        ["git", "--git-dir", str(world.remote), "show", f"{head}:calc.py"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert shipped == second_total  # attempt 2's patch, not attempt 1's
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["artifact"] == again["artifact"]  # what resumes get
    assert outcomes(world) == [("pr_opened", "71:1")]
