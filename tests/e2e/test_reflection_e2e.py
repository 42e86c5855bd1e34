"""End to end: after a finished ``chimera solve`` the Reflector and the Curator propose
playbook and skill deltas, recorded provisional and tainted and never applied; a person's
``chimera playbook accept`` applies one; ``--no-learning`` turns it off.

With scripted models this measures the bookkeeping only (what is recorded, where, with which
state and trust, and what is left untouched), never whether a lesson is any good: the
Reflector's and proposer's answers are scripted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from chimera.evolution.playbook import Playbook
from chimera.evolution.proposals import ProposalLedger
from chimera.evolution.skills import LearnedSkill, SkillStore

SPEC = """\
requirements:
  - id: total-defined
    owner: ['calc.py']
    defines: {path: calc.py, symbol: total, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
GOOD = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"
BOOK = "## Strategies\n[str-00001] helpful=1 harmful=0 :: Define total in calc.py next to add.\n"
INSIGHT = "Check the requirement's owner file before editing anything else."
REFLECTION = {
    "tags": [
        {"id": "str-00001", "tag": "helpful"},
        {"id": "str-00099", "tag": "helpful"},  # never shown: dropped
    ],
    "insights": [{"section": "Strategies", "text": INSIGHT}],
}
SKILL = {
    "name": "list-totals",
    "description": "Add an aggregate function over a list next to the related helpers.",
    "when_to_use": "A requirement asks for a total or sum over a list.",
    "body": "Define the function in the module that owns the requirement; use the builtin sum.",
}


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "reqs.yaml").write_text(SPEC)
    (root / "calc.py").write_text(CALC)
    (root / ".gitignore").write_text(".chimera/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=root, check=True)
    (root / ".chimera").mkdir()
    (root / ".chimera" / "playbook.md").write_text(BOOK)
    return root


def _script(tmp_path: Path, name: str, *, reflect: bool = True, shown: bool = True) -> Path:
    write = {"name": "write_file", "arguments": {"path": "calc.py", "content": GOOD}}
    plan: dict[str, Any] = {"purpose": "plan", "text": "1. Add total() to calc.py."}
    if shown:
        plan["expect"] = ["str-00001"]
    turns: list[dict[str, Any]] = [
        plan,
        {"purpose": "act", "tool_calls": [write]},
        {"purpose": "act", "text": "Added total()."},
        {"purpose": "review", "text": "APPROVE"},
    ]
    if reflect:
        turns += [
            # The Reflector sees the bullet it was shown and the accepted diff.
            {"purpose": "summarize", "text": json.dumps(REFLECTION),
             "expect": ["str-00001", "def total"]},
            {"purpose": "summarize", "text": json.dumps(SKILL)},
        ]  # fmt: skip
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"model": "demo", "turns": turns}, sort_keys=False))
    return path


def _chimera(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CHIMERA_MODEL"}
    return subprocess.run(
        [sys.executable, "-c", "from chimera.cli import main; raise SystemExit(main())", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def _solve(root: Path, script: Path, *flags: str) -> dict[str, Any]:
    proc = _chimera(
        root, "solve", "Add total() to calc.py", "--verify", "specs",
        "--model", f"scripted:{script}", *flags,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    runs = sorted((root / ".chimera" / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
    summary: dict[str, Any] = json.loads((runs[-1] / "summary.json").read_text())
    summary["_dir"] = str(runs[-1])
    return summary


def test_a_solve_records_provisional_tainted_proposals_and_applies_none(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    summary = _solve(root, _script(tmp_path, "s"))
    assert summary["outcome"] == "solved"
    reflection = summary["reflection"]
    assert "skipped" not in reflection, reflection
    assert any("str-00099" in d for d in reflection["dropped"])
    ledger = ProposalLedger.at(root)
    pending = ledger.pending()
    assert sorted(p.kind for p in pending) == ["bullet", "counter", "skill"]
    assert [p.id for p in pending] == reflection["proposed"]
    assert all(p.state == "provisional" and not p.trusted for p in pending)
    raw = [json.loads(x) for x in ledger.path.read_text().splitlines()]
    assert all(r["state"] == "provisional" and r["trusted"] is False for r in raw)
    (counter,) = [p for p in pending if p.kind == "counter"]
    assert (counter.bullet_id, counter.op) == ("str-00001", "helpful")
    (skill,) = [p for p in pending if p.kind == "skill"]
    parsed = LearnedSkill.from_markdown(skill.skill)
    assert parsed.name == "list-totals" and not parsed.trusted
    # Nothing applied: the playbook is byte-identical and no skill was minted.
    assert (root / ".chimera" / "playbook.md").read_text() == BOOK
    assert SkillStore(root / ".chimera" / "skills").all() == []
    # The run folder carries the Action's document (skills and bullets; no counters).
    doc = json.loads((Path(summary["_dir"]) / "learning.json").read_text())
    assert doc["bullets"] == [{"section": "Strategies", "text": INSIGHT}]
    assert len(doc["skills"]) == 1 and "counter" not in json.dumps(doc)

    # A person applies the bullet and the counter (deltas only) and mints the skill.
    for p in pending:
        proc = _chimera(root, "playbook", "accept", p.id, "--by", "maintainer")
        assert proc.returncode == 0, proc.stderr
    book = Playbook.parse((root / ".chimera" / "playbook.md").read_text())
    lines = book.format().splitlines()
    assert lines[1] == "[str-00001] helpful=2 harmful=0 :: Define total in calc.py next to add."
    assert lines[2].endswith(f":: {INSIGHT}")
    minted = SkillStore(root / ".chimera" / "skills").get("list-totals")
    assert minted is not None and minted.state.value == "provisional" and not minted.trusted
    assert ledger.pending() == []
    again = _chimera(root, "playbook", "accept", pending[0].id)
    assert again.returncode == 2 and "was decided already" in again.stderr
    listed = _chimera(root, "playbook", "proposals")
    assert listed.returncode == 0 and "no pending proposals" in listed.stdout


def test_no_learning_reflects_on_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    # Without the Reflector's turns: a reflection call would exhaust the script's file.
    (root / ".chimera" / "playbook.md").unlink()
    summary = _solve(root, _script(tmp_path, "off", reflect=False, shown=False), "--no-learning")
    assert summary["outcome"] == "solved" and "reflection" not in summary
    assert not ProposalLedger.at(root).path.exists()
    assert not (Path(summary["_dir"]) / "learning.json").exists()


def test_a_reflection_the_model_cannot_give_is_skipped_and_the_run_stands(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path)
    summary = _solve(root, _script(tmp_path, "short", reflect=False))
    assert summary["outcome"] == "solved"
    assert "script exhausted" in summary["reflection"]["skipped"]
    assert ProposalLedger.at(root).pending() == []


def test_no_reflection_makes_exactly_the_scripted_turns_and_keeps_learning(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path)
    # Exactly the run's four turns: one reflection call would find the script exhausted and
    # leave a "reflection" entry (the test above); the plan must still show the bullet.
    summary = _solve(root, _script(tmp_path, "exact", reflect=False), "--no-reflection")
    assert summary["outcome"] == "solved" and "reflection" not in summary
    assert summary["usage"]["calls"] == 4
    run_dir = Path(summary["_dir"])
    requests = [
        line for line in (run_dir / "transcript.jsonl").read_text().splitlines()
        if json.loads(line)["kind"] == "request"
    ]  # fmt: skip
    assert len(requests) == 4
    # Memory and learning are untouched: the bullet was shown, the attempt remembered.
    assert summary["learning"]["bullets"] == ["str-00001"]
    assert len(summary["memory"]["remembered"]) == 1
    assert not ProposalLedger.at(root).path.exists()
    assert not (run_dir / "learning.json").exists()
    assert not (run_dir / "reflection.json").exists()
