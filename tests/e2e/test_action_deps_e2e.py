"""A project with a real dependency, through the Action: the agent job's set-up step of the
reusable workflow (run as the runner would, on the base commit) installs it from a local wheel
with the shipped pip script, and decide → agent → verify → publish on the GitHub fake judge a
change that imports it in the strict sandbox, with no network there."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from chimera.testing.wheels import build_wheel

if TYPE_CHECKING:
    from conftest import World

ROOT = Path(__file__).resolve().parents[2]
TASK = """calc needs answer_plus(x): tinydep's answer plus x.

```chimera
requirements:
  - id: answer-plus
    command: {run: "python -c 'import calc; assert calc.answer_plus(1) == 43'", timeout: 60}
```
"""
NEW_CALC = (
    "import tinydep\n\n\ndef add(a, b):\n    return a + b\n\n\n"
    "def answer_plus(x):\n    return tinydep.answer() + x\n"
)


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "m", "GIT_AUTHOR_EMAIL": "m@example.com"}
    env |= {"GIT_COMMITTER_NAME": "m", "GIT_COMMITTER_EMAIL": "m@example.com"}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return proc.stdout.decode().strip()


def set_up(world: World, deps: Path) -> None:
    """The maintainer's commit (manifest and set-up script), then the agent job's set-up
    step of the reusable workflow, run by bash in a fresh checkout of that commit."""
    wheels = world.tmp / "wheels"
    wheels.mkdir()
    build_wheel(wheels, "tinydep", "1.0", {"tinydep/__init__.py": "def answer():\n    return 42\n"})
    checkout = world.clone()
    (checkout / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0"\ndependencies = ["tinydep>=1"]\n'
    )
    script = checkout / ".github" / "chimera" / "setup.sh"
    script.parent.mkdir(parents=True)
    script.write_text((ROOT / "examples" / "setup" / "pip.sh").read_text())
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "dependencies and the set-up script")
    git(checkout, "push", "-q", "origin", "HEAD:main")
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "chimera.yml").read_text())
    (step,) = [
        s for s in workflow["jobs"]["agent"]["steps"] if s.get("name", "").startswith("Set up")
    ]
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    env |= {"BASE_SHA": git(checkout, "rev-parse", "HEAD"), "DEPS_DIR": str(deps)}
    env["BASE_TREE"] = str(world.tmp / "chimera-base")
    env.pop("VIRTUAL_ENV", None)
    subprocess.run(["bash", "-e", "-c", step["run"]], cwd=checkout, env=env, check=True)


def model(world: World) -> None:
    world.script_calc(NEW_CALC)


def test_a_change_using_a_dependency_is_verified_only_with_the_set_up_folder(
    world: World,
) -> None:
    deps = world.tmp / "chimera-deps"
    set_up(world, deps)
    model(world)
    world.env["CHIMERA_DEPS_DIR"] = str(deps)
    world.fake.add_issue("octo/app", title="answer", body=TASK, user="alice", labels=("chimera",))
    jobs = world.pipeline("issues", world.labeled(1), run=31)
    assert jobs["agent"]["status"] == "done", jobs["agent"]
    assert jobs["verify"]["verdict"] == "passed", jobs["verify"]
    assert jobs["publish"]["status"] == "pr_opened"
    # The same patch, judged by a verify job whose workflow skipped the set-up step: the
    # sandbox has no network and no tinydep, so the goal is not met.
    del world.env["CHIMERA_DEPS_DIR"]
    decided = world.decided_env(jobs["decide"])
    again = world.job(
        "verify", "issues", world.labeled(1), run=31, token="", root=world.clone(),
        artifacts=world.tmp / "artifacts-31", **decided,
    )  # fmt: skip
    assert again["verdict"] == "failed", again
