"""``chimera crew run``: a role's read-only tools refuse the held-out folder too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main

CANARY = "HELDOUT-CANARY-c4a1"
CREW = """\
crew: probe
roles:
  - name: reader
    goal: Read everything.
    tools: [read_file, list_dir, search]
sequential: {}
"""
SCRIPT = """\
- tool_calls:
    - {name: read_file, arguments: {path: specs-heldout/h.yaml}}
    - {name: list_dir, arguments: {path: specs-heldout}}
    - {name: search, arguments: {pattern: c4a1}}
- unless: [HELDOUT-CANARY-c4a1]
  expect: ["'specs-heldout/h.yaml' is held out", "'specs-heldout' is held out", "no matches"]
  text: nothing found
"""


def test_a_crew_role_cannot_read_the_held_out_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "project"
    (root / "specs-heldout").mkdir(parents=True)
    (root / "specs-heldout" / "h.yaml").write_text(f"# {CANARY}\nrequirements: []\n")
    (root / "pyproject.toml").write_text('[tool.chimera.heldout]\ndir = "specs-heldout"\n')
    (root / "crew.yaml").write_text(CREW)
    script = tmp_path / "reader.yaml"  # outside the project: it names the canary
    script.write_text(SCRIPT)
    monkeypatch.chdir(root)
    code = main(["crew", "run", "crew.yaml", "look", "--model", f"scripted:{script}"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (run,) = (root / ".chimera" / "runs").iterdir()
    everything = "".join(p.read_text() for p in run.rglob("*") if p.is_file())
    assert CANARY not in everything and CANARY not in out
    assert "nothing found" in out  # the turn that holds only if the canary was never sent
    assert json.loads((run / "crew.json").read_text())["status"] == "completed"
