"""The fix workflow under act: a labelled issue becomes one pull request with one outcome
comment; a re-run of the finished run adds nothing; and the kept mutation test: the same
scenario on a copy of the workflow with one job output renamed fails."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from act.conftest import ActWorld

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "workflows"
FIX_JOBS = {"decide": "success", "agent": "success", "verify": "success", "publish": "success"}


def remote_file(w: ActWorld, ref: str, path: str) -> str:
    shown = subprocess.run(
        ["git", "--git-dir", str(w.remote), "show", f"{ref}:{path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return shown.stdout if shown.returncode == 0 else f"<{path} not on {ref}>"


def labelled_issue_problems(w: ActWorld, issue: int, run_id: int) -> list[str]:
    """What is wrong with the fake's state after a labelled issue's fix run ``run_id``,
    against "one PR with one outcome comment" ([] when nothing is)."""
    problems = []
    pulls = w.pulls()
    if len(pulls) != 1:
        return [f"{len(pulls)} pull requests, not one"]
    (pull,) = pulls
    branch = f"chimera/issue-{issue}"
    if (pull["head"], pull["base"], pull["state"], pull["draft"]) != (
        branch,
        "main",
        "open",
        False,
    ):
        problems.append(f"PR: {pull['head']} → {pull['base']}, {pull['state']}, {pull['draft']=}")
    if pull["user"] != "github-actions[bot]":
        problems.append(f"PR opened by {pull['user']}, not the workflow's GITHUB_TOKEN")
    if not pull["body"].startswith(f"Closes #{issue}."):
        problems.append("the PR body does not close the issue")
    if remote_file(w, branch, "calc.py") != w.total_calc:
        problems.append("the PR branch does not hold the model's calc.py")
    if w.outcome_markers(issue) != [("pr_opened", f"{run_id}:1")]:
        problems.append(f"outcome comments: {w.outcome_markers(issue)}")
    if len(w.comments(issue)) != 1:
        problems.append(f"{len(w.comments(issue))} comments on the issue")
    if w.labels(issue) != ["chimera:pr-open"]:
        problems.append(f"issue labels {w.labels(issue)}")
    head = w.repo.head_sha(branch)
    checks = [(c["name"], c["conclusion"]) for c in w.repo.check_runs.values()]
    if checks != [("Chimera Spec", "success")] or w.repo.checks_for(head or "") == []:
        problems.append(f"check runs {checks} (head {head})")
    return problems


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_labelled_issue_becomes_one_pr_with_one_outcome_and_a_rerun_adds_nothing(
    act_world: ActWorld,
) -> None:
    w = act_world
    w.script_writes({"calc.py": w.total_calc})
    issue = w.open_issue("Add total()", w.total_task)
    # On GitHub the label starts both workflows listening to `issues: labeled`.
    fix, tick = w.deliver(w.label(issue))
    assert (fix.workflow.name, tick.workflow.name) == ("chimera-fix.yml", "chimera-tick.yml")
    assert fix.jobs == FIX_JOBS, w.explain([fix])
    assert tick.jobs == {"tick": "success"}, w.explain([tick])
    assert w.outputs(fix, "publish")["status"] == "pr_opened"
    assert labelled_issue_problems(w, issue, fix.run_id) == [], w.explain([fix])
    # The model was reached through LiteLLM with the key the secret carries: the four
    # scripted turns, then the run's own reflection calls (the last reply repeats).
    asked = w.stub.completion_requests()
    assert len(asked) >= 4 and {r.headers.get("x-api-key") for r in asked} == {"sk-ant-stub-key"}
    # The run's artifacts (the agent's, publish's audit log) through the REST API.
    rest = w.fake.pygithub(w.token("bob")).get_repo("octo/app")
    listed = [a.name for a in rest.get_workflow_run(fix.run_id).get_artifacts()]
    # Each upload's name ends in a nonce drawn at upload time (a forger cannot name it ahead).
    assert [re.sub(r"-[0-9a-f]{16}$", "-<nonce>", n) for n in listed] == [
        "chimera-run-attempt-1-<nonce>",
        "chimera-run-publish-attempt-1-<nonce>",
    ], listed

    # "Re-run all jobs" of the finished run: its decide refuses, so nothing else runs; the
    # attempt's one outcome says why (never silence), and nothing else changes.
    pull, head = w.pulls()[0], w.repo.head_sha(f"chimera/issue-{issue}")
    comments = w.comments(issue)
    again = w.rerun(fix)
    assert again.jobs == {"decide": "success"}, w.explain([again])
    assert w.outputs(again, "decide")["proceed"] == "false"
    assert [p["number"] for p in w.pulls()] == [pull["number"]]
    assert w.repo.head_sha(f"chimera/issue-{issue}") == head
    assert w.comments(issue)[:1] == comments
    assert w.outcome_markers(issue) == [
        ("pr_opened", f"{fix.run_id}:1"),
        ("refused", f"{fix.run_id}:1:attempt-2"),
    ]
    assert w.labels(issue) == ["chimera:pr-open"]
    assert w.artifact_names(fix.run_id) == listed
    assert len(w.stub.completion_requests()) == len(asked)  # no model call


def rename_output(source: Path, dest: Path, workflow: str, old: str, new: str) -> None:
    """A copy of the workflows with one job output of ``workflow`` renamed (one line)."""
    shutil.copytree(source, dest)
    path = dest / workflow
    text = path.read_text(encoding="utf-8")
    line = f"      {old}: ${{{{ steps.gate.outputs.{old} }}}}\n"
    assert text.count(line) == 1, "the mutation no longer applies: update the test"
    path.write_text(text.replace(line, line.replace(f"{old}:", f"{new}:", 1)), encoding="utf-8")
    changed = [
        (a, b)
        for a, b in zip(text.splitlines(), path.read_text().splitlines(), strict=True)
        if a != b
    ]
    assert len(changed) == 1


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_workflow_copy_with_one_output_renamed_fails_the_labelled_issue_scenario(
    act_world: ActWorld,
) -> None:
    """Kept mutation test: the harness notices a wrong output name, which actionlint and the
    in-process e2e suites do not (the later jobs read ``needs.decide.outputs.proceed``)."""
    w = act_world
    w.workflows = w.tmp / "mutated"
    rename_output(EXAMPLES, w.workflows, "chimera-fix.yml", "proceed", "proceeding")
    w.script_writes({"calc.py": w.total_calc})
    issue = w.open_issue("Add total()", w.total_task)
    (fix,) = w.deliver(w.label(issue), only=["chimera-fix.yml"])
    assert w.outputs(fix, "decide")["proceed"] == "true"  # decide itself admitted the issue
    assert labelled_issue_problems(w, issue, fix.run_id) == ["0 pull requests, not one"]
