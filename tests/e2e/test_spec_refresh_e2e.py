"""The Spec check kept fresh, end to end on the GitHub fake: a person pushes to a Chimera PR's
branch, and the refresh workflow's jobs — decide (mode refresh), verify (the strict sandbox,
no secrets), spec-check (``checks: write``, re-deriving) — post the "Chimera Spec" check run
on the new head, one line per requirement, annotations at the requirement's YAML line."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

from chimera.testing.github_fake import comment_event, pull_request_event

if TYPE_CHECKING:
    from conftest import World

REFRESH_DECIDE = {"issues": "read", "pull-requests": "read"}
SPEC_CHECK = {"contents": "read", "checks": "write"}


def model(world: World) -> None:
    world.script_calc(world.total_calc)


def open_pr(world: World) -> int:
    model(world)
    issue = world.add_total_issue()
    gh = world.fake.pygithub(world.fake.add_token("alice"))
    said = gh.get_repo("octo/app").get_issue(int(issue["number"])).create_comment("@chimera run")
    jobs = world.pipeline("issue_comment", comment_event(world.fake, "octo/app", said.id), run=91)
    assert jobs["publish"]["status"] == "pr_opened"
    (pull,) = world.repo.pulls()
    return int(pull["number"])


def push(world: World, login: str, content: str) -> str:
    """``login`` pushes a commit changing calc.py to chimera/issue-1 (over the fake's git)."""
    checkout = world.clone(world.fake.add_token(login))
    git = ["git", "-c", f"user.name={login}", "-c", "user.email=p@e.invalid"]
    subprocess.run([*git, "checkout", "-q", "chimera/issue-1"], cwd=checkout, check=True)
    (checkout / "calc.py").write_text(content)
    for cmd in (["commit", "-qam", "a person's change"], ["push", "-q", "origin", "HEAD"]):
        subprocess.run([*git, *cmd], cwd=checkout, check=True, capture_output=True)
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True)
    return out.stdout.strip()


def refresh(
    world: World, pr: int, run: int, *, results: str | None = None
) -> dict[str, dict[str, Any]]:
    """The refresh workflow's three jobs, each with its own token and checkout."""
    event = pull_request_event(world.fake, "octo/app", pr, sender="alice")
    name = "pull_request_target"
    gate = world.job("refresh", name, event, run=run, token=world.workflow_token(REFRESH_DECIDE))
    jobs: dict[str, dict[str, Any]] = {"decide": gate}
    if gate["proceed"] != "true":
        return jobs
    decided = world.decided_env(gate)
    empty = world.tmp / f"no-artifact-{run}"
    jobs["verify"] = world.job(
        "verify", name, event, run=run, token="", root=world.clone(), artifacts=empty, **decided
    )
    said = jobs["verify"]["results"] if results is None else results
    verified = world.verified_env(jobs["verify"]) | {"CHIMERA_VERIFIED_RESULTS": said}
    jobs["spec-check"] = world.job(
        "spec-check",
        name,
        event,
        run=run,
        token=world.workflow_token(SPEC_CHECK),
        root=world.clone(),
        artifacts=empty,
        **decided,
        **verified,
    )
    return jobs


def spec_runs(world: World, sha: str) -> list[dict[str, Any]]:
    return [c for c in world.repo.checks_for(sha) if c["name"] == "Chimera Spec"]


def test_a_push_to_the_chimera_pr_refreshes_the_spec_check_on_the_new_head(world: World) -> None:
    pr = open_pr(world)
    base = world.repo.pulls()[0]
    broken = push(world, "alice", "def add(a, b):\n    return a + b\n")  # total() removed
    jobs = refresh(world, pr, 92)
    gate = jobs["decide"]
    assert gate["proceed"] == "true" and gate["mode"] == "refresh"
    assert gate["head-sha"] == broken and gate["pull"] == str(pr)
    assert jobs["verify"]["verdict"] == "failed"
    assert json.loads(jobs["verify"]["results"])["total-defined"] == "failed"
    assert jobs["spec-check"]["status"] == "failure"
    (run,) = spec_runs(world, broken)
    assert run["conclusion"] == "failure" and run["app"] == "github-actions"
    summary = run["output"]["summary"].splitlines()
    assert any(line.startswith("- `keeps-add` passed at `specs/") for line in summary)
    assert any(line.startswith("- `total-defined` failed at `specs/") for line in summary)
    # The annotation sits at the requirement's own line in the acceptance file on the head.
    (note,) = [a for a in run["annotations"] if a["title"].startswith("total-defined")]
    path = note["path"]
    assert path.startswith("specs/task-gh-1-") and path.endswith(".yaml")
    shown = subprocess.run(
        ["git", "--git-dir", str(world.remote), "show", f"{broken}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert "id: total-defined" in shown[note["start_line"] - 1]
    assert base["number"] == pr and len(world.repo.pulls()) == 1

    # The next push puts total() back: a fresh, green check on that head.
    fixed = push(world, "bob", world.total_calc)
    jobs = refresh(world, pr, 93)
    assert jobs["spec-check"]["status"] == "success"
    (green,) = spec_runs(world, fixed)
    assert green["conclusion"] == "success" and spec_runs(world, broken) == [run]


def test_verify_outputs_that_do_not_match_the_head_are_refused_and_other_branches_ignored(
    world: World,
) -> None:
    pr = open_pr(world)
    push(world, "alice", "def add(a, b):\n    return a + b\n")
    jobs = refresh(world, pr, 94)
    head = jobs["decide"]["head-sha"]
    # A compromised verify claims everything passed, for a change it did not judge.
    event = pull_request_event(world.fake, "octo/app", pr, sender="alice")
    forged = dict(jobs["verify"]) | {
        "verdict": "passed",
        "patch_sha256": "0" * 64,
        "results": json.dumps({"total-defined": "passed", "keeps-add": "passed"}),
    }
    out = world.job(
        "spec-check",
        "pull_request_target",
        event,
        run=95,
        token=world.workflow_token(SPEC_CHECK),
        root=world.clone(),
        artifacts=world.tmp / "none",
        **world.decided_env(jobs["decide"]),
        **world.verified_env(forged),
    )
    assert out["status"] == "failure"
    latest = spec_runs(world, head)[-1]
    assert latest["conclusion"] == "failure"
    assert "verify's outputs refused" in latest["output"]["title"]
    assert "total-defined" not in latest["output"]["summary"]
    assert any("another change" in a["message"] for a in latest["annotations"])

    # A branch that is not Chimera's is not refreshed (and nothing is read for it).
    event["pull_request"]["head"]["ref"] = "feature/x"
    gate = world.job(
        "refresh", "pull_request_target", event, run=96, token=world.workflow_token(REFRESH_DECIDE)
    )
    assert gate["proceed"] == "false" and gate["status"] == "not a Chimera branch"


def test_an_acceptance_edited_after_the_pr_opened_is_not_adopted_by_the_refresh(
    world: World,
) -> None:
    pr = open_pr(world)
    # The issue's author (no write access needed) relaxes the goal after the PR opened, then
    # a push removes total(): judged against the relaxed goal, the check would go green.
    gh = world.fake.pygithub(world.fake.add_token("alice"))
    issue = gh.get_repo("octo/app").get_issue(1)
    relaxed = world.total_task.replace("symbol: total", "symbol: add")
    issue.edit(body=relaxed)
    broken = push(world, "alice", "def add(a, b):\n    return a + b\n")
    jobs = refresh(world, pr, 97)
    gate = jobs["decide"]
    assert gate["proceed"] == "false" and "verify" not in jobs
    assert gate["status"] == (
        "the issue's acceptance changed since the run started; re-run to adopt it"
    )
    assert spec_runs(world, broken) == []
    # The refusal is said where a maintainer looks (the job summary), not only in an output.
    said = (world.tmp / "summary-97.md").read_text(encoding="utf-8")
    assert "Chimera Spec not refreshed" in said and "re-run to adopt it" in said

    # The original acceptance back (same digest as the run's): the refresh judges again.
    issue.edit(body=world.total_task)
    jobs = refresh(world, pr, 98)
    assert jobs["decide"]["proceed"] == "true" and jobs["spec-check"]["status"] == "failure"
    (run,) = spec_runs(world, broken)
    lines = run["output"]["summary"].splitlines()
    assert any(line.startswith("- `total-defined` failed at `specs/") for line in lines)


def test_a_result_for_a_requirement_the_spec_does_not_declare_fails_the_refresh_check(
    world: World,
) -> None:
    pr = open_pr(world)
    fixed = push(world, "alice", world.total_calc + "\n")
    honest = refresh(world, pr, 99)
    assert honest["spec-check"]["status"] == "success"
    # Verify's results are claims: an id the Spec does not declare is refused (publish's rule),
    # even when every declared one passed and the hashes match this head.
    claims = json.loads(honest["verify"]["results"]) | {"forged-green": "passed"}
    jobs = refresh(world, pr, 100, results=json.dumps(claims))
    assert jobs["spec-check"]["status"] == "failure"
    latest = spec_runs(world, fixed)[-1]
    assert latest["conclusion"] == "failure"
    assert "verify's outputs refused" in latest["output"]["title"]
    said = "verify reported requirements the Spec does not declare: forged-green"
    assert any(said in a["message"] for a in latest["annotations"])
    assert "- `forged-green`" not in latest["output"]["summary"]
