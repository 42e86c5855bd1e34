"""Jobs that run (or ran) model-written code fetch nothing: a workflow that checked out too
little gets one line naming the missing commit and the fix (``fetch-depth: 0``), and the
checkout is left as it was — never filled in from the remote behind the workflow's back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from chimera.testing.github_fake import comment_event, pull_request_event

if TYPE_CHECKING:
    from conftest import World


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def shallow(world: World, branch: str) -> Path:
    """What ``actions/checkout`` leaves without ``fetch-depth: 0``: ``branch``'s tip alone
    (its remote still reachable, as a checkout's ``origin`` is)."""
    world.clones += 1
    dest = world.tmp / f"shallow-{world.clones}"
    url = f"file://{world.remote}"
    cmd = ["git", "clone", "-q", "--depth", "1", "--single-branch", "-b", branch, url, str(dest)]
    subprocess.run(cmd, check=True, capture_output=True)
    return dest


def has(root: Path, sha: str) -> bool:
    return git(root, "cat-file", "-e", f"{sha}^{{commit}}").returncode == 0


def open_pr(world: World) -> tuple[int, str, str]:
    """An issue run to a Chimera PR; returns (PR, base, head)."""
    world.script_calc(world.total_calc.replace("sum(xs)", "0"))
    issue = world.add_total_issue()
    gh = world.fake.pygithub(world.fake.add_token("alice"))
    said = gh.get_repo("octo/app").get_issue(int(issue["number"])).create_comment("@chimera run")
    jobs = world.pipeline("issue_comment", comment_event(world.fake, "octo/app", said.id), run=71)
    assert jobs["publish"]["status"] == "pr_opened"
    base = jobs["decide"]["base-sha"]
    head = git(world.remote, "rev-parse", "chimera/issue-1").stdout.strip()
    return int(world.repo.pulls()[0]["number"]), base, head


def test_a_rerun_agent_without_the_base_commit_says_so_and_fetches_nothing(
    world: World,
) -> None:
    pr, base, head = open_pr(world)
    review = (
        world.fake.pygithub(world.fake.add_token("bob"))
        .get_repo("octo/app")
        .get_pull(pr)
        .create_review(body="total() must sum.", event="REQUEST_CHANGES")
    )
    event = json.loads(json.dumps(review.raw_data))
    payload = {
        "action": "submitted",
        "review": event | {"state": "changes_requested", "commit_id": head},
        "pull_request": {"number": pr, "head": {"ref": "chimera/issue-1", "sha": head}},
        "sender": {"login": "bob", "type": "User"},
        "repository": {"full_name": "octo/app", "default_branch": "main"},
    }
    gate = world.job(
        "decide", "pull_request_review", payload, run=72, token=world.workflow_token(
            world.decide_perms
        ),
    )  # fmt: skip
    assert gate["mode"] == "rerun" and gate["base-sha"] == base and gate["head-sha"] == head
    root = shallow(world, "chimera/issue-1")
    assert not has(root, base)
    folder = world.tmp / "agent-72"
    out = world.job(
        "agent", "pull_request_review", payload, run=72, token=world.workflow_token(
            world.agent_perms
        ), root=root, artifacts=folder, separate_process=True, GITHUB_RUN_ATTEMPT="1",
        CHIMERA_AGENT_ARTIFACT=world.artifact_name(72), **world.decided_env(gate),
    )  # fmt: skip
    outcome = json.loads((folder / "outcome.json").read_text())
    assert out["status"] == "crashed" and outcome["kind"] == "crashed"
    detail = outcome["detail"]
    assert detail == (
        f"the re-run's base commit {base[:12]} is not in the checkout; check out with "
        "fetch-depth: 0 (actions/checkout), Chimera fetches nothing here"
    )
    assert not has(root, base)  # nothing was fetched


def test_refresh_verify_and_spec_check_without_the_head_say_so_and_fetch_nothing(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, base, _ = open_pr(world)
    checkout = world.clone(world.fake.add_token("alice"))
    who = ["git", "-c", "user.name=alice", "-c", "user.email=a@e.invalid"]
    subprocess.run([*who, "checkout", "-q", "chimera/issue-1"], cwd=checkout, check=True)
    (checkout / "NOTES.md").write_text("note\n")
    for cmd in (["add", "NOTES.md"], ["commit", "-qm", "note"], ["push", "-q", "origin", "HEAD"]):
        subprocess.run([*who, *cmd], cwd=checkout, check=True, capture_output=True)
    pushed = git(checkout, "rev-parse", "HEAD").stdout.strip()

    event = pull_request_event(world.fake, "octo/app", pr, sender="alice")
    name = "pull_request_target"
    perms = {"issues": "read", "pull-requests": "read"}
    gate = world.job("refresh", name, event, run=73, token=world.workflow_token(perms))
    assert gate["proceed"] == "true" and gate["head-sha"] == pushed
    decided = world.decided_env(gate)
    empty = world.tmp / "no-artifact-73"
    root = shallow(world, "main")  # the base alone: the PR's head is not in it
    assert has(root, base) and not has(root, pushed)
    verify = world.job(
        "verify", name, event, run=73, token="", root=root, artifacts=empty, **decided
    )
    missing = (
        f"the PR's head {pushed[:12]} is not in the checkout; check out with fetch-depth: 0 "
        "(actions/checkout), Chimera fetches nothing here"
    )
    assert verify["rc"] != 0 and "verdict" not in verify
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"chimera: error: {missing}"
    assert not has(root, pushed)

    fake_verified = {"base_sha": base, "patch_sha256": "0" * 64, "spec_digest": "0" * 64}
    check = world.job(
        "spec-check", name, event, run=73, token=world.workflow_token(
            {"contents": "read", "checks": "write"}
        ), root=root, artifacts=empty, **decided,
        **world.verified_env(fake_verified | {"verdict": "passed", "results": "{}"}),
    )  # fmt: skip
    assert check["status"] == "failure"
    (run,) = [c for c in world.repo.checks_for(pushed) if c["name"] == "Chimera Spec"]
    assert [a["message"] for a in run["annotations"]] == [missing]
    assert not has(root, pushed)
