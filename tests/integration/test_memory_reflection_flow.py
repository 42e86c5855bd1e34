"""The product path supersedes: a finished ``chimera solve`` reflects on its run, and the fact
it learned (``pytest -n 4``) replaces the remembered one (``pytest -n 2``) through the
model-decided UPDATE, with the old text in the item's history; an ``--untrusted`` run's same
fact becomes a proposal a person accepts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.cli import main
from chimera.memory.items import PROPOSED_UPDATE, Candidate, Tier
from chimera.memory.part import open_local

SPEC = """\
requirements:
  - id: total-defined
    owner: ['calc.py']
    defines: {path: calc.py, symbol: total, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
GOOD = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"
OLD, NEW = "Tests run with pytest -n 2.", "Tests run with pytest -n 4."


def repo(root: Path) -> Path:
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "reqs.yaml").write_text(SPEC)
    (root / "calc.py").write_text(CALC)
    (root / ".gitignore").write_text(".chimera/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    return root


def script(path: Path, target: str) -> str:
    write = {"name": "write_file", "arguments": {"path": "calc.py", "content": GOOD}}
    decision = {"op": "UPDATE", "target_id": target, "text": NEW, "reason": "new worker count"}
    turns: list[dict[str, Any]] = [
        {"purpose": "plan", "text": "1. Add total() to calc.py."},
        {"purpose": "act", "tool_calls": [write]},
        {"purpose": "act", "text": "Added total()."},
        {"purpose": "review", "text": "APPROVE"},
        # The memory reflection: extraction sees the run's record, then one decision.
        {"purpose": "memory", "text": json.dumps({"facts": [NEW]}),
         "expect": ["attempt 1 passed on: Add total()"]},
        {"purpose": "memory", "text": json.dumps(decision), "expect": [OLD, NEW]},
    ]  # fmt: skip
    path.write_text(yaml.safe_dump({"model": "m", "turns": turns}, sort_keys=False))
    return f"scripted:{path}"


def solve(root: Path, model: str, *flags: str) -> dict[str, Any]:
    argv = ["solve", "Add total() to calc.py", "--verify", str(root / "specs"), "--root",
            str(root), "--model", model, "--quiet", *flags]  # fmt: skip
    assert main(argv) == 0
    (run,) = (root / ".chimera" / "runs").iterdir()
    summary: dict[str, Any] = json.loads((run / "summary.json").read_text())
    return summary


def seed(root: Path) -> str:
    manager = open_local(root)
    item = manager.remember(Candidate(OLD, Tier.SEMANTIC, source_run="alice")).item_id
    manager.store.close()
    return item


@pytest.mark.slow
def test_solve_reflects_and_a_changed_fact_supersedes_the_old_one(tmp_path: Path) -> None:
    root = repo(tmp_path / "repo")
    target = seed(root)
    summary = solve(root, script(tmp_path / "s.yaml", target))
    reflection = summary["memory"]["reflection"]
    assert reflection["facts"] == 1 and "skipped" not in reflection
    assert reflection["ops"] == [{"op": "UPDATE", "id": target, "target": target,
                                  "proposal": False}]  # fmt: skip
    manager = open_local(root)
    semantic = manager.store.items([Tier.SEMANTIC])
    assert [i.text for i in semantic] == [NEW]  # one live fact: the old one was replaced
    history = manager.store.history(target)
    assert [h["op"] for h in history] == ["add", "update"] and history[-1]["old_text"] == OLD
    assert [i.text for i in manager.recall("pytest -n workers")] == [NEW]


@pytest.mark.slow
def test_an_untrusted_solve_proposes_the_supersession_to_a_person(tmp_path: Path) -> None:
    root = repo(tmp_path / "repo")
    target = seed(root)
    summary = solve(root, script(tmp_path / "s.yaml", target), "--untrusted")
    (op,) = summary["memory"]["reflection"]["ops"]
    assert op["proposal"] is True and op["target"] == target
    manager = open_local(root)
    kept = manager.store.get(target)
    assert kept is not None and kept.text == OLD and not kept.tainted
    (proposal,) = manager.proposals()
    assert proposal.kind == PROPOSED_UPDATE and proposal.text == NEW and proposal.tainted
    # A person accepts it: the trusted fact changes, its history keeps the old text.
    assert main(["memory", "accept", proposal.id, "--root", str(root), "--by", "alice"]) == 0
    manager = open_local(root)
    after = manager.store.get(target)
    assert after is not None and after.text == NEW and not after.tainted
    assert manager.proposals() == []
