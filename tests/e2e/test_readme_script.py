"""The scripted-model example of docs/how-to/scripted-models.md works as written (docs that
cannot drift), its end-of-run reflection turns included: a script written from the page does
not end "script exhausted"."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from chimera.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "scripted-models.md"


def readme_script() -> str:
    section = PAGE.read_text(encoding="utf-8")
    match = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert match, "the Scripted models page has no yaml example"
    return match.group(1)


def test_readme_script_example_solves_a_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "calc"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "calc.yaml").write_text(
        "requirements:\n  - id: add-defined\n"
        "    defines: {path: calc.py, symbol: add, kind: function}\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    script = tmp_path / "script.yaml"
    script.write_text(readme_script(), encoding="utf-8")
    code = main(
        [
            "solve",
            "Add add() to calc.py",
            "--root",
            str(root),
            "--quiet",
            "--model",
            f"scripted:{script}",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "def add(a, b)" in (root / "calc.py").read_text()
    (summary,) = (root / ".chimera" / "runs").glob("*/summary.json")
    reflection = json.loads(summary.read_text(encoding="utf-8"))["reflection"]
    assert "skipped" not in reflection, reflection  # the summarize turns were consumed
    assert len(reflection["proposed"]) == 2 and not reflection["dropped"], reflection
