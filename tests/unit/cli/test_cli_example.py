"""The example project: exactly one red requirement, and the README shows the real output."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from chimera.cli import main

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = REPO_ROOT / "examples" / "inventory"
README = REPO_ROOT / "README.md"
MARKER = "<!-- example-output: the test suite checks this block against a real run -->"


@pytest.fixture
def in_example(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    # The example's `tests-pass` runs `python -m pytest`: this interpreter's.
    bindir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bindir + os.pathsep + os.environ.get("PATH", ""))
    return EXAMPLE


def readme_block() -> list[str]:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(MARKER) :]
    block = block[block.index("```text\n") + len("```text\n") :]
    block = block[: block.index("```")]
    lines = block.splitlines()
    assert lines[0] == "$ chimera check"
    return lines[1:]


def normalise(lines: list[str]) -> list[str]:
    return [re.sub(r" in \d+\.\d\ds$", " in N.NNs", line) for line in lines]


def test_example_has_exactly_one_red_requirement(
    in_example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    statuses = {r["id"]: r["status"] for r in doc["results"]}
    assert [rid for rid, status in statuses.items() if status != "passed"] == ["money-in-cents"]
    assert len(statuses) == 7


def test_readme_shows_the_real_output(in_example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 1
    actual = capsys.readouterr().out.splitlines()
    assert normalise(actual) == normalise(readme_block())
