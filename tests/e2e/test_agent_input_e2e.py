"""The Action's ``agent`` input on the GitHub fake: decide validates the profile at the base
commit it hands on (one line on the issue, the slot given back, when it is invalid or
missing), and the agent job runs with it and records its path and hash in the run state."""

from __future__ import annotations

import hashlib
import json
import subprocess
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conftest import World

GOOD = """\
profile: careful
instructions: Never special-case an input.
tools: [read_file, write_file, edit_file, list_dir, search]
solver: {max_attempts: 2}
"""
BAD = """\
profile: careful
tools: [read_file, run_comand]
solver: {max_attempts: 2}
"""
GIT = ["git", "-c", "user.name=m", "-c", "user.email=m@example.invalid"]


def commit(world: World, files: dict[str, str]) -> None:
    """A maintainer's commit on main, pushed to the remote."""
    clone = world.clone()
    for rel, text in files.items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
    subprocess.run([*GIT, "add", "-A"], cwd=clone, check=True)
    subprocess.run([*GIT, "commit", "-qm", "profile"], cwd=clone, check=True)
    subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=clone, check=True)


def model(world: World) -> None:
    world.script_calc(world.total_calc)


def decide(world: World, run: int) -> dict[str, Any]:
    return world.job(
        "decide", "issues", world.labeled(), run=run, token=world.workflow_token(world.decide_perms)
    )


def test_an_invalid_profile_is_refused_at_decide_in_one_line(world: World) -> None:
    commit(world, {"agents/careful.yaml": BAD})
    world.env["CHIMERA_AGENT_PROFILE"] = "agents/careful.yaml"
    world.add_total_issue(labels=("chimera",))
    gate = decide(world, 41)
    assert gate["proceed"] == "false" and gate["status"] == "refused"
    (comment,) = world.comments(1)
    line = next(x for x in comment.splitlines() if "agent profile" in x)
    assert "the agent profile is invalid: agents/careful.yaml:2:" in line
    assert "unknown tool 'run_comand'" in line
    assert "chimera:running" not in world.repo.issues[1]["labels"]  # the slot is given back


def test_a_missing_profile_is_refused_at_decide(world: World) -> None:
    world.env["CHIMERA_AGENT_PROFILE"] = "agents/nowhere.yaml"
    world.add_total_issue(labels=("chimera",))
    gate = decide(world, 42)
    assert gate["proceed"] == "false"
    (comment,) = world.comments(1)
    assert "agents/nowhere.yaml (the agent input) is not in commit" in comment


def test_a_valid_profile_runs_and_is_recorded_in_the_run_state(world: World) -> None:
    commit(world, {"agents/careful.yaml": GOOD})
    world.env["CHIMERA_AGENT_PROFILE"] = "agents/careful.yaml"
    model(world)
    world.add_total_issue(labels=("chimera",))
    jobs = world.pipeline("issues", world.labeled(), run=43)
    assert jobs["decide"]["proceed"] == "true"
    assert jobs["publish"]["status"] == "pr_opened"
    state = json.loads((world.tmp / "artifacts-43" / "run" / "state.json").read_text())
    digest = hashlib.sha256(GOOD.encode()).hexdigest()
    assert state["extra"]["agent_profile"] == {"path": "agents/careful.yaml", "sha256": digest}
    audit = (world.tmp / "artifacts-43" / "run" / "audit.jsonl").read_text().splitlines()
    profiles = [json.loads(x)["fields"] for x in audit if '"meta.profile"' in x]
    assert [p["profile"] for p in profiles] == ["careful"]
    assert "run_command" not in profiles[0]["tools"]
