"""The scorecard ranks capabilities by the lower bound of their interval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.errors import UsageError
from chimera.eval.maturity import Dimension, Outcome, Scorecard, outcomes_from_audit, read_outcomes
from chimera.eval.records import build_scorecard
from chimera.governance.audit import AuditLog


def _many(dimension: Dimension, capability: str, passes: int, fails: int) -> list[Outcome]:
    return [Outcome(dimension, capability, True) for _ in range(passes)] + [
        Outcome(dimension, capability, False) for _ in range(fails)
    ]


def test_weakest_uses_the_lower_bound_not_the_point_estimate() -> None:
    card = Scorecard(_many("tool", "rare", 1, 0) + _many("tool", "common", 90, 10))
    weakest = card.weakest(2)
    # 1/1 looks perfect but its interval starts near 0.21; 90/100 starts near 0.83.
    assert [s.capability for s in weakest] == ["rare", "common"]
    assert weakest[0].interval.estimate == 1.0


def test_ties_break_deterministically() -> None:
    outcomes = _many("kind", "b", 1, 1) + _many("kind", "a", 1, 1) + _many("tool", "a", 1, 1)
    first = [(s.dimension, s.capability) for s in Scorecard(outcomes).weakest(3)]
    second = [(s.dimension, s.capability) for s in Scorecard(list(reversed(outcomes))).weakest(3)]
    assert first == second == [("kind", "a"), ("kind", "b"), ("tool", "a")]


def test_outcomes_from_audit_map_targets_to_kinds_and_tools() -> None:
    events = [
        {"event": "targets", "fields": {"targets": ["r1", "r2", "r3"]}},
        {"event": "tool_call", "fields": {"name": "edit_file", "ok": False}},
        {"event": "attempt", "fields": {"verdict": "verify_failed"}},
        {"event": "tool_call", "fields": {"name": "edit_file", "ok": True}},
        {"event": "attempt", "fields": {"verdict": "passed"}},
    ]
    got = outcomes_from_audit(events, {"r1": "defines", "r2": "command"}, source="run-1")
    assert [(o.dimension, o.capability, o.passed) for o in got] == [
        ("tool", "edit_file", False),
        ("kind", "command", False),
        ("kind", "defines", False),
        ("kind", "unknown", False),
        ("tool", "edit_file", True),
        ("kind", "command", True),
        ("kind", "defines", True),
        ("kind", "unknown", True),
    ]


def test_build_scorecard_reads_verified_runs_and_skips_edited_logs(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "s.yaml").write_text(
        "requirements:\n  - id: r1\n    contains: {path: a.txt, pattern: x}\n"
    )
    for run, verdict in (("good", "passed"), ("edited", "passed")):
        log = AuditLog(tmp_path / ".chimera" / "runs" / run / "audit.jsonl", run)
        log.append("targets", targets=["r1"])
        log.append("attempt", verdict=verdict)
    edited = tmp_path / ".chimera" / "runs" / "edited" / "audit.jsonl"
    edited.write_text(edited.read_text().replace('"passed"', '"failed"'))
    card = build_scorecard(tmp_path)
    assert [(s.capability, s.passes, s.trials) for s in card.scores()] == [("contains", 1, 1)]
    assert len(card.skipped) == 1 and "edited" in card.skipped[0]
    assert "skipped:" in card.render()
    assert json.loads(json.dumps(card.to_json()))["outcomes"] == 1


def test_outcome_files_are_validated_line_by_line(tmp_path: Path) -> None:
    good = tmp_path / "o.jsonl"
    good.write_text('{"dimension": "family", "capability": "plurals", "passed": true}\n\n')
    assert read_outcomes(good)[0].capability == "plurals"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"dimension": "family", "capability": "x", "passed": true}\n{"dimension": "z"}\n'
    )
    with pytest.raises(UsageError, match=r"bad\.jsonl:2: not an outcome record"):
        read_outcomes(bad)
