"""The harnesses run real `chimera solve` processes (scripted models: bookkeeping, with an
effect known in advance): A/B end to end on two tasks, and a short chain where memory decides."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.eval.chain import Chain
from chimera.eval.continuous import run_continuous

SHIPPED = Path(__file__).resolve().parents[2] / "chimera" / "eval" / "chains" / "inflection"

pytestmark = pytest.mark.slow


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chimera", *args], cwd=cwd, capture_output=True, text=True
    )


def test_ab_register_run_report_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "reg.yaml").write_text(
        "name: two\nhypothesis: diff feedback does not matter on easy tasks\n"
        "suite: inflection\ncontrol: {diff_feedback: false}\ntreatment: {diff_feedback: true}\n"
        "n: 2\nalpha: 0.05\ntasks: [t02-shout, t07-initials]\n"
    )
    assert _cli("bench", "ab", "register", "reg.yaml", cwd=tmp_path).returncode == 0
    early = _cli("bench", "ab", "report", "two", cwd=tmp_path)
    assert early.returncode == 2 and "no result yet" in early.stderr
    ran = _cli("bench", "ab", "run", "two", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "4 task runs recorded (4 passed)" in ran.stdout and "bookkeeping only" in ran.stdout
    report = json.loads(_cli("bench", "ab", "report", "two", "--json", cwd=tmp_path).stdout)
    # Two tasks can never reach alpha 0.05 with the exact test: no verdict either way.
    assert report["verdict"] == "insufficient evidence"
    assert report["control"]["estimate"] == report["treatment"]["estimate"] == 1.0
    events = [
        json.loads(line)["event"]
        for line in (tmp_path / ".chimera" / "ab" / "audit.jsonl").read_text().splitlines()
    ]
    assert events[0] == "ab_registered" and events[-1] == "ab_reported"
    assert events.count("ab_result") == 4


def test_memory_decides_a_short_chain_exactly(tmp_path: Path) -> None:
    chain = Chain.load(SHIPPED / "chain.yaml")
    short = chain.model_copy(update={"tasks": [chain.tasks[i] for i in (0, 1, 3)]})
    report = run_continuous(short, tmp_path, model="scripted")
    assert report.on.passes == [False, True, True]  # the trap fails; its lesson rescues t04
    assert report.off.passes == [False, True, False]
    assert report.mcnemar.only_b == 1 and report.mcnemar.only_a == 0
    assert "bookkeeping" in report.render()
    lessons = (tmp_path / "on" / ".chimera" / "experience.jsonl").read_text()
    assert "[plural-rule]" in lessons
    assert not (tmp_path / "off" / ".chimera" / "experience.jsonl").exists()
    # A measurement reflects on nothing (--no-reflection in every arm): no lesson proposed
    # from the tasks it measures, no tokens spent on reflection in either arm's cost.
    for arm in ("on", "off"):
        _reflected_on_nothing(tmp_path / arm / ".chimera", runs=3)


def _reflected_on_nothing(chimera: Path, *, runs: int) -> None:
    assert not (chimera / "learning" / "proposals.jsonl").exists()
    folders = sorted((chimera / "runs").iterdir())
    assert len(folders) == runs
    for run in folders:
        assert not (run / "learning.json").exists() and not (run / "reflection.json").exists()
        summary = json.loads((run / "summary.json").read_text())
        # Not even a call: a scripted one would leave "skipped": "script exhausted ...".
        assert "reflection" not in summary, summary["reflection"]
