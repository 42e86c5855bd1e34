"""The example project: exactly one red requirement, and the docs show its real output: the
first tutorial (docs/tutorials/first-spec.md) the human report, docs/reference/check-output.md
the JSON document."""

from __future__ import annotations

import getpass
import json
import os
import re
import sys
from pathlib import Path

import pytest

from chimera.cli import main

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = REPO_ROOT / "examples" / "inventory"
PAGE = REPO_ROOT / "docs" / "tutorials" / "first-spec.md"
MARKER = "<!-- docs-test: see tests/unit/cli/test_cli_example.py -->"
OUTPUT_PAGE = REPO_ROOT / "docs" / "reference" / "check-output.md"


@pytest.fixture
def in_example(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    # The example's `tests-pass` runs a nested pytest session. Left alone, it makes its
    # numbered temporary directory in the machine-wide `pytest-of-<user>` folder and, on exit,
    # deletes every finished session's folder there that is not among the newest three —
    # whole test trees of earlier or concurrent runs (with xdist, the other example test's
    # nested session deletes the same trees at the same time). Under load that cleanup alone
    # outlasted the requirement's 120 s timeout. Its own temporary root keeps it to its own.
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(tmp_path))
    # The example's `tests-pass` runs `python -m pytest`: this interpreter's.
    bindir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bindir + os.pathsep + os.environ.get("PATH", ""))
    return EXAMPLE


def page_block() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    block = text[text.index(MARKER) :]
    block = block[block.index("```console\n") + len("```console\n") :]
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


def test_the_tutorial_shows_the_real_output(
    in_example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check"]) == 1
    actual = capsys.readouterr().out.splitlines()
    assert normalise(actual) == normalise(page_block())


def test_the_json_output_page_shows_the_real_document(
    in_example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = OUTPUT_PAGE.read_text(encoding="utf-8")
    block = text[text.index(MARKER) :]
    block = block[block.index("```json\n") + len("```json\n") :]
    shown = json.loads(block[: block.index("```")])
    assert main(["check", "--json", "--only", "money-in-cents"]) == 1
    actual = json.loads(capsys.readouterr().out)
    for doc in (shown, actual):
        for result in doc["results"]:
            assert isinstance(result.pop("duration_s"), float)
    assert shown == actual


def test_the_nested_pytest_session_keeps_to_its_own_temporary_root(
    in_example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A finished session's folder, older than the newest three, in the test's own root: the
    # nested session deletes it there — so it is this root, not the shared one, that the
    # nested session creates in and cleans up.
    own = tmp_path / f"pytest-of-{getpass.getuser()}"
    stale = own / "pytest-0"
    (stale / "repo").mkdir(parents=True)
    own.chmod(0o700)
    for n in (1, 2, 3):
        (own / f"pytest-{n}").mkdir()
    assert main(["check", "--only", "tests-pass"]) == 0, capsys.readouterr().out
    assert not stale.exists()
    assert (own / "pytest-4").is_dir()
