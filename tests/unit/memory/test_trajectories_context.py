"""A trajectory row's metadata holds the memory, skill and playbook text its plan prompt held
(from the run's hash-chained audit log, redacted like the rest of the export)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.cli import main
from chimera.evolution.skills import LearnedSkill, SkillStore
from chimera.memory.items import Candidate, Tier
from chimera.memory.part import open_local
from chimera.memory.trajectories import TrajectoryCollector

SECRET = "s3cr3t-" + "k" * 24
BOOK = (
    "## Strategies\n[str-00001] helpful=1 harmful=0 :: Define total in calc.py next to add.\n"
    f"[str-00002] helpful=1 harmful=0 :: The staging key is {SECRET}.\n"
)
SPEC = """\
requirements:
  - id: total-defined
    owner: ['calc.py']
    defines: {path: calc.py, symbol: total, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
WRITE = {
    "name": "write_file",
    "arguments": {"path": "calc.py", "content": CALC + "\n\ndef total(xs):\n    return sum(xs)\n"},
}
TURNS = [
    {"purpose": "plan", "text": "1. Add total() to calc.py."},
    {"purpose": "act", "tool_calls": [WRITE]},
    {"purpose": "act", "text": "Added total()."},
    {"purpose": "review", "text": "APPROVE"},
]  # fmt: skip


def project(root: Path) -> Path:
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "reqs.yaml").write_text(SPEC)
    (root / "calc.py").write_text(CALC)
    (root / ".gitignore").write_text(".chimera/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    return root


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CHIMERA_TEST_API_TOKEN", SECRET)
    root = project(tmp_path / "p")
    manager = open_local(root)
    manager.add_persona("Keep calc.py free of third-party imports.", by="alice")
    manager.remember(Candidate("calc.py total() sums a list with sum().", Tier.SEMANTIC))
    manager.store.close()
    (root / ".chimera" / "playbook.md").write_text(BOOK)
    SkillStore(root / ".chimera" / "skills").mint(
        LearnedSkill("calc-totals", "Totals in calc.py: add total next to add.",
                     "[calc-rule] total sums a list with the builtin sum.\n", trusted=True,
                     tested="re-run gate: 5 gained, 0 lost", accepted_by="alice")
    )  # fmt: skip
    return root


def test_a_trajectory_row_holds_the_memory_skill_and_playbook_its_prompt_held(
    seeded: Path, tmp_path: Path
) -> None:
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"model": "m", "turns": TURNS}))
    model = f"scripted:{tmp_path / 's.yaml'}"
    args = ["run", "--root", str(seeded), "--quiet", "--model", model, "--run-id", "ctx"]
    assert main(args) == 0
    collector = TrajectoryCollector()
    collector.add(seeded / ".chimera" / "runs" / "ctx")
    (trajectory,) = collector.trajectories
    held = trajectory.prompt_context
    assert "Keep calc.py free of third-party imports." in held["memory"]
    assert "calc.py total() sums a list with sum()." in held["memory"]
    assert "[calc-rule] total sums a list with the builtin sum." in held["skills"]
    assert "[str-00001]" in held["playbook"] and "Playbook" not in held["skills"]
    out = tmp_path / "sft.jsonl"
    assert main(["trajectories", "export", str(seeded / ".chimera" / "runs" / "ctx"),
                 "--format", "sft", "-o", str(out)]) == 0  # fmt: skip
    (meta,) = [json.loads(line) for line in (tmp_path / "sft.meta.jsonl").read_text().splitlines()]
    context: dict[str, Any] = meta["prompt_context"]
    assert "calc.py total() sums a list with sum()." in context["memory"]
    assert "[calc-rule]" in context["skills"] and "[str-00001]" in context["playbook"]
    # Redacted like the rest: the secret value never leaves in the metadata.
    assert "The staging key is [REDACTED" in context["playbook"]
    assert SECRET not in (tmp_path / "sft.meta.jsonl").read_text()
    assert SECRET not in (seeded / ".chimera" / "runs" / "ctx" / "audit.jsonl").read_text()
