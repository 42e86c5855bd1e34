"""`chimera bench continuous` on the shipped 12-task chain: the numbers the chain was built to
give with its scripted model (memory on 9/12, off 3/12), asserted exactly, and the files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_the_shipped_chain_reports_the_known_effect(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "chimera", "bench", "continuous", "--out", str(out),
         "--workdir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "NOTE: scripted model" in proc.stdout
    data = json.loads((out / "continuous.json").read_text())
    on, off = data["memory_on"], data["memory_off"]
    assert [r["passed"] for r in on["runs"]].count(True) == 9
    assert [r["passed"] for r in off["runs"]].count(True) == 3
    failed_on = [r["task_id"] for r in on["runs"] if not r["passed"]]
    assert failed_on == ["t01-counted", "t03-place", "t05-slug"]
    assert (on["first_half"]["estimate"], on["second_half"]["estimate"]) == (0.5, 1.0)
    assert on["longest_failing_streak"] == 1 and off["longest_failing_streak"] == 4
    assert data["mcnemar"] == {"only_on": 6, "only_off": 0, "p_value": pytest.approx(1 / 32)}
    assert data["difference_on_minus_off"]["estimate"] == pytest.approx(0.5)
    assert data["difference_on_minus_off"]["low"] > 0
    assert (out / "continuous.svg").read_text().startswith("<svg")
    # Not a terminal: one plain progress line per task run, both arms, then each arm's end.
    steps = [line for line in proc.stderr.splitlines() if "continuous inflection-chain [" in line]
    assert len(steps) == 26, proc.stderr
    assert steps[0] == "chimera: continuous inflection-chain [0/24] on: t01-counted"
    assert steps[-1] == "chimera: continuous inflection-chain [24/24] off: done"
    assert "memory on" in (out / "continuous.txt").read_text()


def test_focus_runs_the_weakest_family_and_the_results_are_sealed(tmp_path: Path) -> None:
    from chimera.errors import UsageError
    from chimera.eval.continuous import verify_results

    scored = tmp_path / "earlier.jsonl"
    scored.write_text(
        "".join(
            json.dumps({"dimension": "family", "capability": fam, "passed": ok}) + "\n"
            for fam, ok in [("strings", False)] * 6 + [("plurals", True)] * 6
        )
    )
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "chimera", "bench", "continuous", "--focus", "weakest",
         "--outcomes", str(scored), "--root", str(tmp_path), "--out", str(out),
         "--workdir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "focus: family strings 0/6" in proc.stdout and "weakest #1 by lower bound" in proc.stdout
    data = json.loads((out / "continuous.json").read_text())
    assert [r["task_id"] for r in data["memory_on"]["runs"]] == [
        "t02-shout",
        "t07-initials",
        "t11-title",
    ]
    head = data["audit"]["head"]
    assert f"audit head {head}" in proc.stderr
    verify_results(data, out / "audit.jsonl", head)
    data["memory_off"]["runs"][0]["passed"] = not data["memory_off"]["runs"][0]["passed"]
    with pytest.raises(UsageError, match="does not match the report"):
        verify_results(data, out / "audit.jsonl", head)
    lines = (out / "outcomes.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all('"family"' in line for line in lines)
