"""The eval ledger's JSONL: append-only, one fsync'd line per record under a file lock, a torn
last line skipped with a warning on read and cut off by the next append."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.errors import UsageError
from chimera.evolution.jsonl import append_record, read_records
from chimera.evolution.ledger import SkillEval, SkillEvalLog


def _entry(n: int) -> SkillEval:
    return SkillEval("fix-imports", 1, f"t{n}", n % 2 == 0, "mint-test", "2026-01-01T00:00:00Z")


# Run as its own interpreter: a spawned multiprocessing child would have to import this test
# module, which is not importable under `pytest` (importlib mode, cwd not on sys.path).
_WRITER = """
import sys
from pathlib import Path
from chimera.evolution.ledger import SkillEval, SkillEvalLog
log = SkillEvalLog(Path(sys.argv[1]))
start = int(sys.argv[2])
for n in range(start, start + 40):
    when = "2026-01-01T00:00:00Z"
    log.append(SkillEval("fix-imports", 1, f"t{n}", n % 2 == 0, "mint-test", when))
"""


def test_appends_are_one_line_each_and_read_back_in_order(tmp_path: Path) -> None:
    log = SkillEvalLog(tmp_path / "skills" / "evals.jsonl")
    for n in range(3):
        log.append(_entry(n))
    text = log.path.read_text("utf-8")
    assert text.count("\n") == 3 and text.endswith("\n")
    assert [e.task for e in log.entries()] == ["t0", "t1", "t2"]
    assert log.split("fix-imports", 1) == (["t1"], ["t0", "t2"])


def test_two_processes_appending_at_once_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "evals.jsonl"
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(start)])
        for start in (0, 1000)
    ]
    for p in procs:
        assert p.wait(60) == 0
    lines = path.read_text("utf-8").splitlines()
    assert len(lines) == 80
    assert all(json.loads(line)["skill"] == "fix-imports" for line in lines)
    assert sorted(e.task for e in SkillEvalLog(path).entries()) == sorted(
        [f"t{n}" for n in range(40)] + [f"t{n}" for n in range(1000, 1040)]
    )


def test_a_torn_last_line_is_skipped_with_a_warning_then_cut_by_the_next_append(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = SkillEvalLog(tmp_path / "evals.jsonl")
    log.append(_entry(0))
    whole = json.dumps(_entry(1).to_json())
    with log.path.open("a", encoding="utf-8") as fh:
        fh.write(whole[: len(whole) // 2])  # a process killed mid-write
    with caplog.at_level(logging.WARNING, logger="chimera.evolution.jsonl"):
        assert [e.task for e in log.entries()] == ["t0"]
    assert "evals.jsonl:2: skipped a torn last line" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="chimera.evolution.jsonl"):
        log.append(_entry(2))
    assert "cut a torn last line" in caplog.text
    assert [e.task for e in log.entries()] == ["t0", "t2"]
    assert all(json.loads(line) for line in log.path.read_text("utf-8").splitlines())


def test_damage_before_the_last_line_is_refused_with_its_line_number(tmp_path: Path) -> None:
    log = SkillEvalLog(tmp_path / "evals.jsonl")
    log.append(_entry(0))
    with log.path.open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    log.append(_entry(1))
    with pytest.raises(UsageError, match=r"evals\.jsonl:2: not a JSON record"):
        log.entries()


def test_a_record_that_is_not_an_entry_is_refused(tmp_path: Path) -> None:
    log = SkillEvalLog(tmp_path / "evals.jsonl")
    append_record(log.path, {"skill": "x", "version": 1, "task": "t", "passed": "yes"})
    with pytest.raises(UsageError, match=r"evals\.jsonl:1: not a ledger entry"):
        log.entries()


def test_a_whole_record_saved_without_its_newline_is_kept_and_terminated(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}', encoding="utf-8")
    assert [r["a"] for _, r in read_records(path)] == [1, 2]
    append_record(path, {"a": 3})
    assert [r["a"] for _, r in read_records(path)] == [1, 2, 3]
    assert read_records(tmp_path / "absent.jsonl") == []
