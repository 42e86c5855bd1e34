"""The typed hand-offs of the Action: the agent child's request file and the run report.

Both are versioned pydantic models written atomically and parsed once; every bad file is one
line naming the file and the first problem.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chimera.errors import HandoffError
from chimera.github.agent.child import AgentRequest, main, read_request, write_request
from chimera.github.trust.artifacts import collect_run
from chimera.github.trust.report import REPORT_FILE, RunReport, read_report, write_report
from chimera.orchestration.graph import Card, CardStatus
from chimera.orchestration.state import RunState, RunStatus, RunStore, StopReason, now_iso


def request(tmp_path: Path, **changes: Any) -> AgentRequest:
    data: dict[str, Any] = {
        "version": 1,
        "action": "start",
        "root": str(tmp_path),
        "run_id": "gh-1-7",
        "actor": "alice",
        "task": "Add total()\n\nplease",
        "spec_paths": ["specs"],
        "model": "scripted:/x.yaml",
        "max_attempts": 2,
        "budget_usd": 0.5,
        "diff_feedback": True,
    }
    return AgentRequest.model_validate(data | changes)


def one_line(exc: pytest.ExceptionInfo[HandoffError], path: Path) -> str:
    text = str(exc.value)
    assert "\n" not in text and text.startswith(f"{path}: "), text
    return text


# -- the request file ---------------------------------------------------------------------------


def test_the_request_file_round_trips(tmp_path: Path) -> None:
    original = request(tmp_path)
    path = write_request(tmp_path / "req" / "r.json", original)
    assert json.loads(path.read_text())["version"] == 1
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]  # no temp file left over
    again = read_request(path)
    assert again == original
    assert again.root == tmp_path and again.budget_tokens is None and again.untrusted


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"version": 2}, "version: agent request version 2 is not supported"),
        ({"version": "1"}, "version: agent request version '1' is not supported"),
        ({"action": "merge"}, "action: "),
        ({"root": "relative/dir"}, "root: must be an absolute path"),
        ({"spec_paths": ["/etc"]}, "spec_paths: '/etc': give a path inside the root"),
        ({"task": "  "}, "a start request needs a task"),
        ({"max_attempts": 0}, "max_attempts: "),
        ({"shell": "rm -rf /"}, "shell: "),
    ],
)
def test_a_bad_request_file_is_one_line(
    tmp_path: Path, change: dict[str, Any], needle: str
) -> None:
    data = json.loads(request(tmp_path).model_dump_json()) | change
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(HandoffError) as exc:
        read_request(path)
    text = one_line(exc, path)
    assert "invalid agent request" in text and needle in text, text


def test_a_missing_version_or_a_torn_file_is_one_line(tmp_path: Path) -> None:
    data = json.loads(request(tmp_path).model_dump_json())
    del data["version"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(HandoffError) as exc:
        read_request(path)
    assert one_line(exc, path).endswith("version: required field missing")
    path.write_text('{"version": 1, "act')
    with pytest.raises(HandoffError) as exc:
        read_request(path)
    assert "Invalid JSON" in one_line(exc, path)
    with pytest.raises(HandoffError) as exc:
        read_request(tmp_path / "absent.json")
    assert one_line(exc, tmp_path / "absent.json").endswith("no agent request")


def test_the_child_entry_point_refuses_a_bad_request_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"version": 9}))
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "chimera.github.agent.child", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"chimera agent: {path}: invalid agent request: version: ")


def test_the_child_needs_exactly_one_argument_and_reports_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([]) == 2
    assert capsys.readouterr().err.startswith("usage: python -m chimera.github.agent.child")
    # A valid request for a checkout without spec files: a usage error, not a traceback.
    (tmp_path / "specs").mkdir()
    path = write_request(tmp_path / "r.json", request(tmp_path, model="scripted:none.yaml"))
    assert main([str(path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == "chimera agent: no spec files (*.yaml, *.yml) in specs"


# -- the run report -----------------------------------------------------------------------------


def run_state(**changes: Any) -> RunState:
    card = Card(
        "total-defined",
        "total-defined",
        status=CardStatus.FAILED,
        attempts=2,
        notes=["red: total missing"],
        risk_reasons=["touches migrations/"],
    )
    base: dict[str, Any] = {
        "run_id": "gh-1-7",
        "created_at": now_iso(),
        "updated_at": now_iso(),
        "started_by": "alice",
        "spec_paths": ["specs"],
        "status": RunStatus.FAILED,
        "stop_reason": StopReason.CARDS_FAILED,
        "stop_detail": "1 card failed",
        "acceptance_ids": ["total-defined"],
        "base_green": ["keeps-add"],
        "final_results": {"total-defined": "failed", "keeps-add": "passed"},
        "cards": [card.to_json()],
        "tokens": 321,
        "cost_usd": None,
        "sandbox_mode": "bwrap",
        "tainted": True,
        "denied_actions": [
            {"tool": "run", "action": "curl x", "reason": "network", "verdict": "block"},
            {"command": "rm -rf /", "message": "destructive"},
        ],
        "audit_head": "f00d",
    }
    return RunState.model_validate(base | changes)


def test_the_report_is_built_from_the_state_and_round_trips(tmp_path: Path) -> None:
    report = RunReport.from_state(run_state())
    assert report.version == 1 and report.status is RunStatus.FAILED
    assert report.goal == ["total-defined"] and report.last_failure == "red: total missing"
    assert [(c.id, c.status, c.attempts) for c in report.cards] == [("total-defined", "failed", 2)]
    assert [(d.action, d.reason) for d in report.denied_actions] == [
        ("curl x", "network"),
        ("rm -rf /", "destructive"),
    ]
    write_report(tmp_path, report)
    assert read_report(tmp_path) == report
    assert read_report(tmp_path / "nowhere") is None  # no run happened: nothing to show


def test_collect_run_writes_the_report_next_to_the_run_folder(tmp_path: Path) -> None:
    root, out = tmp_path / "root", tmp_path / "out"
    RunStore(root).save(run_state())
    assert collect_run(root, "gh-1-7", out) == out / "run"
    report = read_report(out)
    assert report is not None and report.run_id == "gh-1-7" and report.tokens == 321
    assert json.loads((out / "spec-report.json").read_text())["total-defined"] == "failed"
    assert json.loads((out / "attempts.json").read_text())[0]["notes"] == ["red: total missing"]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"run_id": None}, "run_id: required field missing"),
        ({"status": None}, "status: required field missing"),
        ({"tokens": "many"}, "tokens: Input should be a valid integer"),
        ({"cards": [{"id": "x", "status": "failed", "attempts": "two"}]}, "cards.0.attempts: "),
        ({"status": "merged"}, "status: Input should be "),
        ({"version": 2}, "version: run report version 2 is not supported"),
        ({"version": None}, "version: required field missing"),
        ({"risk": "low"}, "risk: Extra inputs are not permitted"),
    ],
)
def test_a_bad_report_is_one_line(tmp_path: Path, change: dict[str, Any], needle: str) -> None:
    data = json.loads(RunReport.from_state(run_state()).model_dump_json())
    for key, value in change.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    (tmp_path / REPORT_FILE).write_text(json.dumps(data))
    with pytest.raises(HandoffError) as exc:
        read_report(tmp_path)
    text = one_line(exc, tmp_path / REPORT_FILE)
    assert "invalid run report" in text and needle in text, text


def test_every_report_field_is_documented_as_untrusted_display_data() -> None:
    assert "untrusted display data" in (RunReport.__doc__ or "")
    for name, info in RunReport.model_fields.items():
        if name != "version":
            assert "Untrusted display data" in (info.description or ""), name
