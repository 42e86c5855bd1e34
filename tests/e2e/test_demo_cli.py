"""`chimera demo` end to end: red → green, a reverted attempt carried forward, a risk: high
pause approved by someone else, and the audit log verified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.governance.audit import verify_audit_log


def test_demo_runs_the_whole_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "demo"
    code = main(["demo", "--dir", str(target), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "SCRIPTED" in out
    assert "awaiting_approval — human_checkpoint" in out
    assert "run demo: done — goal_met" in out
    assert "demo: every step happened as described" in out
    state = json.loads((target / ".chimera/runs/demo/state.json").read_text())
    assert state["status"] == "done"
    assert state["approvals"][0]["by"] == "demo-reviewer"
    assert state["started_by"] == "demo-user"
    cards = {c["id"]: c for c in state["cards"]}
    assert cards["balance-correct"]["attempts"] == 2
    audit = target / ".chimera/runs/demo/audit.jsonl"
    assert verify_audit_log(audit, head=state["audit_head"]).ok
    events = [json.loads(line)["event"] for line in audit.read_text().splitlines()]
    assert events.count("history_injected") == 1
    assert events.count("revert") >= 1
    assert "sum(entries)" in (target / "ledger/core.py").read_text()
    assert (target / "migrations/0002_balance.sql").is_file()


def test_demo_refuses_an_existing_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err
