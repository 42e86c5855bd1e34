"""What the export refuses to believe: broken or truncated audit logs, transcripts and diffs
that disagree with the log, refused cards, tainted runs and Action artifacts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from chimera.errors import UsageError
from chimera.memory.trajectories import TrajectoryCollector


def _copy(run: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "runs" / run.name
    shutil.copytree(run, dest, ignore=shutil.ignore_patterns("snapshots"))
    return dest


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def _read(*paths: Path) -> TrajectoryCollector:
    collector = TrajectoryCollector()
    for p in paths:
        collector.add(p)
    return collector


def test_an_edited_audit_line_refuses_the_whole_run(runs: Any, tmp_path: Path) -> None:
    run = _copy(runs.a, tmp_path)
    lines = _lines(run / "audit.jsonl")
    i = next(i for i, line in enumerate(lines) if line.startswith('{"event":"attempt",'))
    lines[i] = lines[i].replace('"verdict":"verify_failed"', '"verdict":"passed"')
    assert '"verdict":"passed"' in lines[i]
    (run / "audit.jsonl").write_text("".join(lines))
    (read,) = _read(run).runs
    assert (
        read.refused == f"audit log does not verify: audit.jsonl:{i + 1}: content does not "
        "match its hash (line edited)"
    )
    assert _read(run).trajectories == []


def test_a_truncated_audit_log_is_caught_by_the_recorded_head(runs: Any, tmp_path: Path) -> None:
    run = _copy(runs.b, tmp_path)
    (run / "audit.jsonl").write_text("".join(_lines(run / "audit.jsonl")[:-3]))
    (read,) = _read(run).runs
    assert read.refused is not None and "the recorded head hash is not in the log" in read.refused


def test_a_run_without_a_recorded_head_is_refused(runs: Any, tmp_path: Path) -> None:
    run = _copy(runs.b, tmp_path)
    state = json.loads((run / "state.json").read_text())
    del state["audit_head"]
    (run / "state.json").write_text(json.dumps(state))
    (read,) = _read(run).runs
    assert read.refused == "no audit head recorded in summary.json or state.json"


def test_a_transcript_that_disagrees_with_the_log_skips_the_attempt(
    runs: Any, tmp_path: Path
) -> None:
    run = _copy(runs.a, tmp_path)
    lines = []
    for line in _lines(run / "transcript.jsonl"):
        entry = json.loads(line)
        calls = entry.get("message", {}).get("tool_calls") or []
        if entry["attempt"] == 1 and calls and calls[0]["function"]["name"] == "write_file":
            calls[0]["function"]["arguments"] = '{"path": "calc_other.py", "content": ""}'
            line = json.dumps(entry) + "\n"
        lines.append(line)
    (run / "transcript.jsonl").write_text("".join(lines))
    collector = _read(run)
    (read,) = collector.runs
    assert read.refused is None
    assert [(s.where, s.reason) for s in read.skipped] == [
        ("a:total-defined#1", "transcript does not match the audit log (tool calls differ)")
    ]
    assert [t.number for t in collector.trajectories] == [2]


def test_a_passing_attempt_whose_diff_changed_is_skipped(runs: Any, tmp_path: Path) -> None:
    run = _copy(runs.b, tmp_path)
    diff = run / "attempts" / "total-defined" / "1.diff"
    diff.write_text(diff.read_text() + "+    return 0\n")
    (read,) = _read(run).runs
    assert [s.reason for s in read.skipped] == [
        "the diff file does not match the audit log (or is empty)"
    ]
    _, _, report = _read(run).build("sft")
    assert report.rows == 0 and report.accepted == 0


def test_a_card_the_orchestrator_refused_is_never_a_positive(runs: Any) -> None:
    collector = _read(runs.refused)
    (t,) = collector.trajectories
    assert (t.verdict, t.accepted, t.why) == ("passed", False, "card failed by the orchestrator")
    assert collector.build("sft")[2].rows == 0
    # ... but it is a failed attempt of the same card: a rejected side.
    rows, metas, _ = _read(runs.refused, runs.b).build("dpo", pairs="task")
    assert [(m["chosen"]["run_id"], m["rejected"]["run_id"]) for m in metas] == [("b", "d")]
    assert metas[0]["rejected"]["why"] == "card failed by the orchestrator"
    edits = [
        c["function"]["arguments"]["path"]
        for m in rows[0]["rejected"]
        for c in m.get("tool_calls", [])
    ]
    assert edits == ["calc.py", "specs/reqs.yaml"]


def test_tainted_runs_are_left_out_unless_included_and_then_flagged(runs: Any) -> None:
    collector = _read(runs.tainted)
    (t,) = collector.trajectories
    assert t.tainted and t.accepted
    rows, _, report = collector.build("sft")
    assert (rows, report.excluded_tainted) == ([], 1)
    rows, metas, report = collector.build("sft", include_tainted=True)
    assert len(rows) == 1 and report.excluded_tainted == 0
    assert metas[0]["tainted"] is True and metas[0]["card"] == "solve"


def test_action_artifacts_are_unverified(runs: Any, tmp_path: Path) -> None:
    art = tmp_path / "artifacts"
    shutil.copytree(runs.b, art / "run", ignore=shutil.ignore_patterns("snapshots"))
    (art / "outcome.json").write_text("{}")
    for path in (art, art / "run"):
        collector = _read(path)
        (t,) = collector.trajectories
        assert t.source == "action-artifact" and not t.verified
        rows, _, report = collector.build("sft")
        assert (rows, report.excluded_unverified) == ([], 1)
        rows, metas, _ = collector.build("sft", include_unverified=True)
        assert len(rows) == 1
        assert (metas[0]["verified"], metas[0]["source"]) == (False, "action-artifact")


def test_the_same_run_named_twice_is_read_once(runs: Any) -> None:
    collector = _read(runs.b, runs.b.parent)
    assert [r.run_id for r in collector.runs] == ["b"]


def test_a_path_that_is_no_run_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a run folder"):
        TrajectoryCollector().add(tmp_path)
    with pytest.raises(UsageError, match="no such folder"):
        TrajectoryCollector().add(tmp_path / "missing")


def test_secrets_of_the_environment_are_redacted(
    runs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run's task names the card; pretend that text is a credential's value.
    monkeypatch.setenv("DEPLOY_API_KEY", "calc.py defines total()")
    rows, metas, report = _read(runs.b).build("sft")
    text = json.dumps(rows) + json.dumps(metas)
    assert "calc.py defines total()" not in text
    assert "[REDACTED:DEPLOY_API_KEY]" in text
    assert report.redacted["DEPLOY_API_KEY"] >= 1


def test_a_malformed_transcript_line_skips_its_attempt_without_a_traceback(
    runs: Any, tmp_path: Path
) -> None:
    run = _copy(runs.b, tmp_path)
    lines = []
    for line in _lines(run / "transcript.jsonl"):
        entry = json.loads(line)
        if entry["kind"] == "message" and entry["message"].get("tool_calls"):
            entry["message"]["tool_calls"] = "read everything"
            line = json.dumps(entry) + "\n"
        lines.append(line)
    (run / "transcript.jsonl").write_text("".join(lines) + "{torn\n")
    (read,) = _read(run).runs
    assert [s.reason for s in read.skipped] == [
        "transcript lines missing, malformed or out of order"
    ]


def _turn(arguments: str, output: str) -> list[Any]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "run_command", "arguments": arguments},
    }
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "run_command", "content": output},
    ]


def test_a_redacted_audit_span_stands_for_the_secret_and_nothing_else_may_differ() -> None:
    from chimera.memory.trajectories.transcript import confirm

    token = "ghp_" + "a" * 36
    messages = _turn(f'{{"command": "true {token}"}}', f"echo {token}")
    audited = [
        (
            "run_command",
            '{"command": "true [REDACTED:a GitHub token]"}',
            "echo [REDACTED:a GitHub token]",
        )
    ]
    assert confirm(messages, [["run_command"]], audited) is None
    # Outside the redacted span the texts must agree, as without redaction.
    edited = _turn(f'{{"command": "rm -rf / {token}"}}', f"echo {token}")
    assert confirm(edited, [["run_command"]], audited) == (
        "transcript does not match the audit log (tool calls differ)"
    )
    # A marker matches some text, never none.
    empty = _turn('{"command": "true "}', "echo ")
    assert confirm(empty, [["run_command"]], audited) is not None


def test_a_transcript_redacted_like_the_audit_agrees_and_edits_elsewhere_still_differ() -> None:
    from chimera.memory.trajectories.transcript import confirm

    marker = "[REDACTED:a GitHub token]"
    audited = [("run_command", f'{{"command": "true {marker}"}}', f"echo {marker}")]
    # Both sides redacted (the run folder is since the transcript writer redacts).
    same = _turn(f'{{"command": "true {marker}"}}', f"echo {marker}")
    assert confirm(same, [["run_command"]], audited) is None
    edited = _turn(f'{{"command": "rm -rf / {marker}"}}', f"echo {marker}")
    assert confirm(edited, [["run_command"]], audited) == (
        "transcript does not match the audit log (tool calls differ)"
    )
    output_edited = _turn(f'{{"command": "true {marker}"}}', f"echo {marker} ok")
    assert confirm(output_edited, [["run_command"]], audited) is not None
