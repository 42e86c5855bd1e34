"""Real runs for the trajectory tests: ``chimera run`` / ``chimera solve`` with scripted models
on a small git project in temporary folders, built once per session."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from chimera.cli import main

SPEC = """\
requirements:
  - id: total-defined
    title: calc.py defines total()
    owner: ['calc.py']
    defines: {path: calc.py, symbol: total, kind: function}
  - id: keeps-add
    title: calc.py keeps add()
    defines: {path: calc.py, symbol: add, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
GOOD = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"
TOKEN = "ghp_" + "Q7" * 18
"""A GitHub-token-shaped string a bad attempt writes (the export must redact it)."""

PLAN: dict[str, object] = {"purpose": "plan", "text": "1. Read calc.py. 2. Add total() to it."}
READ: dict[str, object] = {
    "purpose": "act",
    "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
}


def write(path: str, content: str, **extra: object) -> dict[str, object]:
    call = {"name": "write_file", "arguments": {"path": path, "content": content}}
    return {"purpose": "act", "tool_calls": [call], **extra}


def say(text: str, purpose: str = "act") -> dict[str, object]:
    return {"purpose": purpose, "text": text}


BAD_THEN_GOOD = [
    PLAN,
    READ,
    write("calc_total.py", f"TOKEN = '{TOKEN}'\n\n\ndef total(xs):\n    return sum(xs)\n"),
    say("Added total() in calc_total.py."),  # governance blocked the write: no diff, no review
    write("calc.py", GOOD, expect=["Attempts already tried and REVERTED"]),
    say("Moved total() into calc.py."),
    say("APPROVE", "review"),
]
GOOD_FIRST = [PLAN, READ, write("calc.py", GOOD), say("Added total()."), say("APPROVE", "review")]
TAMPERS = [
    PLAN,
    write("calc.py", GOOD),
    write("specs/reqs.yaml", SPEC.replace("keeps add()", "may drop add()")),
    say("Added total() and relaxed the spec."),
    say("APPROVE", "review"),
]


@dataclass(frozen=True)
class Runs:
    tmp: Path
    token: str
    """The GitHub-token-shaped string run ``a`` tried to write."""
    a: Path
    """``chimera run --run-id a``: attempt 1 fails (its write of a token is blocked), attempt 2
    passes."""
    b: Path
    """``chimera run --run-id b`` on a copy: attempt 1 passes, its prompt equal to a's first."""
    tainted: Path
    """``chimera solve --untrusted``: attempt 1 passes; the run is tainted."""
    refused: Path
    """``chimera run --run-id d --no-guard``: the attempt passes, then edits the spec, so the
    orchestrator refuses the card."""


def project(root: Path) -> Path:
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "reqs.yaml").write_text(SPEC)
    (root / "calc.py").write_text(CALC)
    (root / ".gitignore").write_text(".chimera/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    return root


def script(path: Path, turns: list[dict[str, object]]) -> str:
    path.write_text(yaml.safe_dump({"model": "scripted", "turns": turns}, sort_keys=False))
    return f"scripted:{path}"


def run(root: Path, run_id: str, model: str, *extra: str) -> Path:
    args = ["--root", str(root), "--quiet", "--model", model, "--run-id", run_id, *extra]
    code = main(["run", *args])
    assert code in (0, 1), code
    return root / ".chimera" / "runs" / run_id


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    tmp = tmp_path_factory.mktemp("trajectories")
    a = run(project(tmp / "pa"), "a", script(tmp / "a.yaml", BAD_THEN_GOOD))
    b = run(project(tmp / "pb"), "b", script(tmp / "b.yaml", GOOD_FIRST))
    refused = run(project(tmp / "pd"), "d", script(tmp / "d.yaml", TAMPERS), "--no-guard")
    root = project(tmp / "pc")
    model = script(tmp / "c.yaml", GOOD_FIRST)
    task = ["Add total() to calc.py", "--verify", str(root / "specs"), "--root", str(root)]
    code = main(["solve", *task, "--model", model, "--untrusted", "--quiet"])
    assert code == 0
    (tainted,) = (root / ".chimera" / "runs").iterdir()
    return Runs(tmp, TOKEN, a, b, tainted, refused)
