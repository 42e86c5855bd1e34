"""The three export shapes, byte for byte, from two real ``chimera run`` runs of one card.

Run ``a`` fails its first attempt (a write of a token that governance blocked) and passes the
retry, whose prompt carries the first attempt; run ``b``, on a copy of the project, passes at
once with a prompt equal to ``a``'s first. Golden files live in ``tests/data/trajectories``;
``CHIMERA_UPDATE_GOLDEN=1`` rewrites them (then review the diff).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from chimera.core.attempts import HISTORY_HEADING
from chimera.memory.trajectories import TrajectoryCollector, metadata_path, validate_row

if TYPE_CHECKING:
    from chimera.memory.trajectories.export import Format
    from chimera.memory.trajectories.pairs import Mode
    from tests.unit.memory.conftest import Runs

GOLDEN = Path(__file__).parents[2] / "data" / "trajectories"
CASES: list[tuple[Format, Mode, str]] = [
    ("sft", "task", "sft"),
    ("dpo", "task", "dpo-task"),
    ("dpo", "strict", "dpo-strict"),
    ("openai-dpo", "task", "openai-dpo-task"),
    ("openai-dpo", "strict", "openai-dpo-strict"),
]


def _export(runs: Runs, fmt: Format, mode: Mode, out: Path) -> list[dict[str, Any]]:
    collector = TrajectoryCollector()
    collector.add(runs.a)
    collector.add(runs.b)
    report = collector.export(fmt, out, pairs=mode)
    assert report.rows > 0 and report.runs_skipped == [] and report.attempts_skipped == []
    return [json.loads(line) for line in out.read_text().splitlines()]


def _normal(text: str, runs: Runs) -> str:
    # The scripts' folder is the only machine-specific text (the model names it).
    return text.replace(str(runs.tmp), "<TMP>")


@pytest.mark.parametrize(("fmt", "mode", "name"), CASES)
def test_export_matches_golden_file_and_schema(
    runs: Runs, tmp_path: Path, fmt: Format, mode: Mode, name: str
) -> None:
    out = tmp_path / f"{name}.jsonl"
    rows = _export(runs, fmt, mode, out)
    for row in rows:
        validate_row(fmt, row)
    meta = metadata_path(out)
    assert len(meta.read_text().splitlines()) == len(rows)
    assert runs.token not in out.read_text() + meta.read_text()
    for path, golden in ((out, GOLDEN / f"{name}.jsonl"), (meta, GOLDEN / f"{name}.meta.jsonl")):
        got = _normal(path.read_text(), runs)
        if os.environ.get("CHIMERA_UPDATE_GOLDEN") == "1":
            golden.write_text(got)
        assert got == golden.read_text(), f"{golden.name} differs (CHIMERA_UPDATE_GOLDEN=1?)"


def test_sft_rows_are_the_two_accepted_attempts(runs: Runs, tmp_path: Path) -> None:
    rows = _export(runs, "sft", "task", tmp_path / "s.jsonl")
    metas = [json.loads(x) for x in (tmp_path / "s.meta.jsonl").read_text().splitlines()]
    assert [(m["run_id"], m["attempt"], m["verdict"]) for m in metas] == [
        ("a", 2, "passed"),
        ("b", 1, "passed"),
    ]
    # The retry is kept as the model saw it: with the carried-forward history.
    assert HISTORY_HEADING in rows[0]["messages"][1]["content"]
    final = {"role": "assistant", "content": "Moved total() into calc.py."}
    assert rows[0]["messages"][-1] == final
    names = [t["function"]["name"] for t in rows[0]["tools"]]
    assert names == ["read_file", "write_file", "edit_file", "list_dir", "search", "run_command"]


def test_task_mode_pairs_strip_the_history(runs: Runs, tmp_path: Path) -> None:
    rows = _export(runs, "dpo", "task", tmp_path / "d.jsonl")
    metas = [json.loads(x) for x in (tmp_path / "d.meta.jsonl").read_text().splitlines()]
    assert [(m["chosen"]["run_id"], m["chosen"]["attempt"]) for m in metas] == [("a", 2), ("b", 1)]
    assert {(m["rejected"]["run_id"], m["rejected"]["attempt"]) for m in metas} == {("a", 1)}
    assert {m["context"] for m in metas} == {"history-stripped"}
    # Both rows share the first attempt's prompt exactly: system and task, no history.
    assert rows[0]["prompt"] == rows[1]["prompt"]
    assert [m["role"] for m in rows[0]["prompt"]] == ["system", "user"]
    assert HISTORY_HEADING not in rows[0]["prompt"][1]["content"]
    plan = "# Plan\n1. Read calc.py. 2. Add total() to it."
    assert rows[0]["prompt"][1]["content"].endswith(plan)
    # The retry went straight to the write; the first attempt read first.
    first_call = rows[0]["chosen"][0]["tool_calls"][0]["function"]
    assert first_call == {
        "name": "write_file",
        "arguments": {
            "path": "calc.py",
            "content": (
                "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n    return sum(xs)\n"
            ),
        },
    }
    assert rows[0]["rejected"][0]["tool_calls"][0]["function"]["name"] == "read_file"
    blocked = rows[0]["rejected"][3]
    assert blocked["role"] == "tool" and blocked["content"].startswith("Blocked by governance")


def test_strict_mode_pairs_only_across_runs_at_the_divergence(runs: Runs, tmp_path: Path) -> None:
    collector = TrajectoryCollector()
    collector.add(runs.a)
    collector.add(runs.b)
    rows, metas, report = collector.build("dpo", pairs="strict")
    assert report.pair_candidates == 2
    assert report.pairs_made == {"task": 2, "strict": 1}
    assert report.pairs_skipped == {
        "task": {},
        "strict": {"prompts differ: carried-forward history": 1},
    }
    (row,) = rows
    assert (metas[0]["chosen"]["run_id"], metas[0]["rejected"]["run_id"]) == ("b", "a")
    assert metas[0]["context"] == "strict-prefix"
    # The shared prefix runs through the read both attempts made.
    assert [m["role"] for m in row["prompt"]] == ["system", "user", "assistant", "tool"]
    assert row["prompt"][2]["tool_calls"][0]["function"]["name"] == "read_file"
    chosen, rejected = row["chosen"][0], row["rejected"][0]
    assert chosen["tool_calls"][0]["function"]["arguments"]["path"] == "calc.py"
    assert rejected["tool_calls"][0]["function"]["arguments"] == {
        "path": "calc_total.py",
        "content": "TOKEN = '[REDACTED:a GitHub token]'\n\n\ndef total(xs):\n    return sum(xs)\n",
    }
    # Redacted where the run wrote it (no file of the run folder keeps it), so the export
    # finds nothing left to replace and the row carries the run's marker.
    for run in (runs.a, runs.b):
        assert not [
            p for p in run.rglob("*") if p.is_file() and runs.token.encode() in p.read_bytes()
        ]
    assert "a GitHub token" not in report.redacted


def test_openai_rows_carry_exactly_one_assistant_message_per_side(
    runs: Runs, tmp_path: Path
) -> None:
    rows = _export(runs, "openai-dpo", "task", tmp_path / "o.jsonl")
    assert len(rows) == 2
    for row in rows:
        assert set(row) == {"input", "preferred_output", "non_preferred_output"}
        assert len(row["preferred_output"]) == len(row["non_preferred_output"]) == 1
        assert row["preferred_output"][0]["role"] == "assistant"
        assert isinstance(row["preferred_output"][0]["tool_calls"][0]["function"]["arguments"], str)
    # b's pair shares the read and its result: they join the input.
    roles = [m["role"] for m in rows[1]["input"]["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert rows[1]["input"]["messages"][3]["tool_call_id"] == "call_1"
    assert rows[1]["preferred_output"][0]["tool_calls"][0]["id"] == "call_2"
