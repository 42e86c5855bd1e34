"""Iterating on review, end to end on the GitHub fake: an issue becomes a PR, a person asks for
changes, and the second run builds on the PR's head — its goal judged against decide's base,
the review reaching the model as fenced data — and adds a commit to the same PR."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.testing.github_fake import comment_event

if TYPE_CHECKING:
    from conftest import World

WEBHOOKS = Path(__file__).resolve().parents[1] / "data" / "github" / "webhooks"


def model(world: World, name: str, content: str, *, expect: list[str] | None = None) -> None:
    world.script_calc(content, name=f"model-{name}", expect=expect)


def git(world: World, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(world.remote), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


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


def test_changes_requested_iterates_on_the_pr_head_and_adds_a_commit(world: World) -> None:
    base = git(world, "rev-parse", "main")
    model(world, "first", world.total_calc.replace("sum(xs)", "0"))
    issue = world.add_total_issue()
    gh = world.fake.pygithub(world.fake.add_token("alice"))
    said = gh.get_repo("octo/app").get_issue(int(issue["number"])).create_comment("@chimera run")
    first = world.pipeline("issue_comment", comment_event(world.fake, "octo/app", said.id), run=81)
    assert first["publish"]["status"] == "pr_opened"
    (pull,) = world.repo.pulls()
    pr = int(pull["number"])
    head = git(world, "rev-parse", "chimera/issue-1")

    feedback = "total() must return the sum of the list, not 0."
    review = (
        world.fake.pygithub(world.fake.add_token("bob"))
        .get_repo("octo/app")
        .get_pull(pr)
        .create_review(body=feedback, event="REQUEST_CHANGES")
    )
    # The review text reaches the model fenced as data, with the earlier run's outcome.
    model(
        world,
        "second",
        world.total_calc,
        expect=[
            f"Feedback:\n\n```text\n{feedback}\n```",
            "How the earlier attempts on this pull request ended",
            "gh-1-81",
        ],
    )
    jobs = world.pipeline("pull_request_review", review_event(review.raw_data, pr, head), run=82)
    gate, agent = jobs["decide"], jobs["agent"]
    assert gate["mode"] == "rerun" and gate["head-sha"] == head and gate["base-sha"] == base
    assert agent["status"] == "done", agent
    assert jobs["verify"]["verdict"] == "passed"
    assert jobs["publish"]["status"] == "pr_updated"
    assert jobs["publish"]["pr-number"] == str(pr) and len(world.repo.pulls()) == 1

    # The same PR, now two commits: the second sits on the first (nothing force-pushed away).
    new_head = git(world, "rev-parse", "chimera/issue-1")
    assert git(world, "rev-list", "--count", f"{base}..{new_head}") == "2"
    assert git(world, "rev-parse", f"{new_head}^") == head
    assert "return sum(xs)" in git(world, "show", f"{new_head}:calc.py")

    # The run started from the PR's head and judged its goal against decide's base.
    state = json.loads((world.tmp / "artifacts-82" / "run" / "state.json").read_text())
    assert state["extra"]["basis_commit"] == base
    assert "total-defined" in state["base_red"] and state["acceptance_ids"] == ["total-defined"]
    assert state["tainted"] and state["iterations"] >= 1
    # The patch is cumulative against the base: the earlier round's work counts.
    patch = (world.tmp / "artifacts-82" / "patch.diff").read_text()
    assert "+def total(xs):" in patch and "+    return sum(xs)" in patch
    assert "task-gh-1-82" not in patch  # the acceptance file of round one is carried, not doubled
    # No edit to the acceptance: nothing was adopted, and the outcome says nothing of it.
    assert not any("edited acceptance" in c for c in world.comments(1))


def test_a_rerun_builds_on_decides_head_when_a_person_pushed_after_decide(world: World) -> None:
    model(world, "first", world.total_calc.replace("sum(xs)", "0"))
    issue = world.add_total_issue()
    gh = world.fake.pygithub(world.fake.add_token("alice"))
    said = gh.get_repo("octo/app").get_issue(int(issue["number"])).create_comment("@chimera run")
    first = world.pipeline("issue_comment", comment_event(world.fake, "octo/app", said.id), run=83)
    assert first["publish"]["status"] == "pr_opened"
    pr = int(world.repo.pulls()[0]["number"])
    head = git(world, "rev-parse", "chimera/issue-1")
    review = (
        world.fake.pygithub(world.fake.add_token("bob"))
        .get_repo("octo/app")
        .get_pull(pr)
        .create_review(body="total() must sum.", event="REQUEST_CHANGES")
    )
    model(world, "second", world.total_calc)

    def person_pushes() -> None:
        checkout = world.clone(world.fake.add_token("alice"))
        who = ["git", "-c", "user.name=alice", "-c", "user.email=a@e.invalid"]
        subprocess.run([*who, "checkout", "-q", "chimera/issue-1"], cwd=checkout, check=True)
        (checkout / "NOTES.md").write_text("alice's note\n")
        for cmd in (
            ["add", "NOTES.md"],
            ["commit", "-qm", "note"],
            ["push", "-q", "origin", "HEAD"],
        ):
            subprocess.run([*who, *cmd], cwd=checkout, check=True, capture_output=True)

    event = review_event(review.raw_data, pr, head)
    jobs = world.pipeline("pull_request_review", event, run=84, after_decide=person_pushes)
    assert jobs["decide"]["head-sha"] == head
    # The agent iterated on the commit decide saw (the one the workflow checks out), not on
    # the newer head the API reports by then; publish refuses to overwrite the person's push.
    outcome = json.loads((world.tmp / "artifacts-84" / "outcome.json").read_text())
    assert outcome["branch_head"] == head
    assert "NOTES.md" not in (world.tmp / "artifacts-84" / "patch.diff").read_text()
    assert jobs["publish"]["status"] == "blocked"
    assert git(world, "rev-parse", "chimera/issue-1") != head


def _first_round(world: World, *, run: int) -> tuple[Any, dict[str, Any], str]:
    """An `@chimera run` by alice whose first round opens a PR with a wrong total(); returns
    alice's repository handle, the PR and the branch head."""
    model(world, "first", world.total_calc.replace("sum(xs)", "0"))
    issue = world.add_total_issue()
    alice = world.fake.pygithub(world.fake.add_token("alice")).get_repo("octo/app")
    said = alice.get_issue(int(issue["number"])).create_comment("@chimera run")
    first = world.pipeline("issue_comment", comment_event(world.fake, "octo/app", said.id), run=run)
    assert first["publish"]["status"] == "pr_opened"
    (pull,) = world.repo.pulls()
    return alice, pull, git(world, "rev-parse", "chimera/issue-1")


def _request_changes(world: World, pr: int) -> Any:
    """bob requests changes on the PR; the second round's model writes the right total()."""
    review = (
        world.fake.pygithub(world.fake.add_token("bob"))
        .get_repo("octo/app")
        .get_pull(pr)
        .create_review(body="Sum the list.", event="REQUEST_CHANGES")
    )
    model(world, "second", world.total_calc)
    return review


def test_a_rerun_adopts_the_issues_edited_acceptance_and_says_so(world: World) -> None:
    from chimera.github.trust.basecommit import sha256_text
    from chimera.github.trust.summary import parse_marker

    alice, pull, head = _first_round(world, run=83)
    pr = int(pull["number"])
    before = (parse_marker(pull["body"], "pr") or {}).get("acceptance_sha256")

    # The goal is tightened on the issue after the PR opened; a write-access review re-runs.
    tightened = world.total_task.replace(
        "  - id: total-defined\n    defines: {path: calc.py, symbol: total, kind: function}\n",
        "  - id: total-sums\n    contains: {path: calc.py, pattern: 'sum\\(xs\\)'}\n",
    )
    assert tightened != world.total_task
    alice.get_issue(1).edit(body=tightened)
    review = _request_changes(world, pr)
    jobs = world.pipeline("pull_request_review", review_event(review.raw_data, pr, head), run=84)
    gate = jobs["decide"]
    assert gate["mode"] == "rerun" and gate["acceptance-sha256"] != before
    assert "total-sums" in gate["acceptance"]
    # Said where a maintainer looks (decide's job summary), not only in an output.
    summary = (world.tmp / "summary-84.md").read_text(encoding="utf-8")
    assert "adopted the issue's edited acceptance" in summary
    assert jobs["publish"]["status"] == "pr_updated"
    # The PR marker now records the adopted goal, so a later refresh judges against it.
    marker = parse_marker(world.repo.pulls()[0]["body"], "pr") or {}
    assert marker["acceptance_sha256"] == gate["acceptance-sha256"] != before
    assert sha256_text(gate["acceptance"]) == gate["acceptance-sha256"]
    # The run's one outcome comment (decide's "Started", edited by publish) still says so:
    # publish re-derived it from the PR marker's digest against decide's.
    said = "This re-run adopted the issue's edited acceptance: its goal was rebuilt from"
    (outcome,) = [c for c in world.comments(1) if "Chimera: Pull request updated" in c]
    assert said in outcome and f"(`{str(before)[:16]}`)" in outcome
    # A re-run of publish in the same workflow run finds its own marker and still says so.
    token = world.workflow_token(world.publish_perms)
    again = world.job(
        "publish", "pull_request_review", review_event(review.raw_data, pr, head), run=84,
        token=token, root=world.clone(token),
        artifacts=world.tmp / "artifacts-84", GITHUB_RUN_ATTEMPT="1",
        CHIMERA_AGENT_ARTIFACT=jobs["agent"]["artifact"], **world.decided_env(gate),
        **world.verified_env(jobs["verify"]),
    )  # fmt: skip
    assert again["status"] == "pr_updated"
    (outcome,) = [c for c in world.comments(1) if "Chimera: Pull request updated" in c]
    assert said in outcome


def test_an_edited_acceptance_that_keeps_an_id_replaces_the_earlier_rounds_file(
    world: World,
) -> None:
    """An edit that keeps a first-round id and adds one: the first round's acceptance file on
    the branch gives way to the edited block (it used to clash as a duplicate id)."""
    alice, pull, head = _first_round(world, run=85)
    pr = int(pull["number"])
    kept = "  - id: total-defined\n    defines: {path: calc.py, symbol: total, kind: function}\n"
    assert kept in world.total_task
    widened = world.total_task.replace(
        kept, kept + "  - id: total-sums\n    contains: {path: calc.py, pattern: 'sum\\(xs\\)'}\n"
    )
    alice.get_issue(1).edit(body=widened)
    review = _request_changes(world, pr)
    jobs = world.pipeline("pull_request_review", review_event(review.raw_data, pr, head), run=86)
    assert jobs["decide"]["mode"] == "rerun"
    assert jobs["publish"]["status"] == "pr_updated", jobs["publish"]
    files = git(world, "ls-tree", "--name-only", "chimera/issue-1", "specs/").split()
    acceptance = [f for f in files if "task-" in f]
    assert len(acceptance) == 1, files
    text = git(world, "show", f"chimera/issue-1:{acceptance[0]}")
    assert "total-defined" in text and "total-sums" in text
