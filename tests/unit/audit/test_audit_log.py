from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from chimera.errors import AuditError
from chimera.governance.audit import GENESIS_HASH, AuditLog, canonical_json, verify_audit_log


def lines_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def make_log(tmp_path: Path, n: int = 5) -> tuple[AuditLog, Path]:
    path = tmp_path / "run" / "audit.jsonl"
    log = AuditLog(path, "run-1")
    for i in range(n):
        log.append("tool_call", tool="read_file", index=i)
    return log, path


def test_audit_append_writes_one_chained_line_per_event(tmp_path: Path) -> None:
    log, path = make_log(tmp_path, 3)
    entries = lines_of(path)
    assert [e["seq"] for e in entries] == [1, 2, 3]
    assert entries[0]["prev_hash"] == GENESIS_HASH
    assert entries[1]["prev_hash"] == entries[0]["hash"]
    assert entries[2]["prev_hash"] == entries[1]["hash"]
    assert set(entries[0]) == {"ts", "run_id", "seq", "event", "fields", "prev_hash", "hash"}
    assert entries[0]["run_id"] == "run-1" and entries[0]["event"] == "tool_call"
    assert entries[0]["fields"] == {"tool": "read_file", "index": 0}
    ts = datetime.fromisoformat(str(entries[0]["ts"]))
    offset = ts.utcoffset()
    assert offset is not None and offset.total_seconds() == 0
    assert log.head_hash == entries[-1]["hash"]
    assert log.seq == 3


def test_audit_append_returns_the_entry_as_written(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl", "r")
    entry = log.append("attempt", number=1, event="field named event is fine")
    (line,) = (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line) == entry
    assert line == canonical_json(entry)
    assert entry["fields"] == {"number": 1, "event": "field named event is fine"}


def test_audit_hash_is_sha256_of_canonical_line_without_hash(tmp_path: Path) -> None:
    import hashlib

    log = AuditLog(tmp_path / "a.jsonl", "r")
    entry = log.append("x", k="v")
    body = {k: v for k, v in entry.items() if k != "hash"}
    assert entry["hash"] == hashlib.sha256(canonical_json(body).encode()).hexdigest()


def test_audit_verify_ok_and_head(tmp_path: Path) -> None:
    log, path = make_log(tmp_path)
    result = verify_audit_log(path, head=log.head_hash)
    assert result.ok and result.count == 5 and result.problems == []
    assert result.head_hash == log.head_hash


def test_audit_reopen_continues_seq_and_chain(tmp_path: Path) -> None:
    log, path = make_log(tmp_path, 2)
    head = log.head_hash
    reopened = AuditLog(path, "run-2")
    entry = reopened.append("resumed")
    assert entry["seq"] == 3 and entry["prev_hash"] == head and entry["run_id"] == "run-2"
    assert verify_audit_log(path).ok


def test_audit_detects_an_edited_line(tmp_path: Path) -> None:
    _, path = make_log(tmp_path)
    text = path.read_text(encoding="utf-8").splitlines()
    text[2] = text[2].replace('"index":2', '"index":99')
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    result = verify_audit_log(path)
    assert not result.ok
    assert result.problems == ["audit.jsonl:3: content does not match its hash (line edited)"]


def test_audit_detects_an_edit_with_recomputed_hash_at_the_next_line(tmp_path: Path) -> None:
    import hashlib

    _, path = make_log(tmp_path)
    entries = lines_of(path)
    entries[1]["fields"] = {"tool": "rm -rf", "index": 1}
    body = {k: v for k, v in entries[1].items() if k != "hash"}
    entries[1]["hash"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
    path.write_text("".join(canonical_json(e) + "\n" for e in entries), encoding="utf-8")
    result = verify_audit_log(path)
    assert not result.ok
    assert result.problems == [
        "audit.jsonl:3: prev_hash does not match the previous line (chain broken)"
    ]


def test_audit_detects_a_deleted_line(tmp_path: Path) -> None:
    _, path = make_log(tmp_path)
    text = path.read_text(encoding="utf-8").splitlines()
    del text[1]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    result = verify_audit_log(path)
    assert not result.ok
    assert result.problems == [
        "audit.jsonl:2: 1 line(s) missing before this line (seq jumps from 1 to 3; chain broken)"
    ]


def test_audit_detects_reordered_lines(tmp_path: Path) -> None:
    _, path = make_log(tmp_path)
    text = path.read_text(encoding="utf-8").splitlines()
    text[1], text[2] = text[2], text[1]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    result = verify_audit_log(path)
    assert not result.ok
    assert any(p.startswith("audit.jsonl:2:") for p in result.problems)
    assert any(p.startswith("audit.jsonl:3:") for p in result.problems)


def test_audit_truncation_needs_the_recorded_head(tmp_path: Path) -> None:
    log, path = make_log(tmp_path)
    head = log.head_hash
    text = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(text[:3]) + "\n", encoding="utf-8")
    assert verify_audit_log(path).ok  # a cut tail is a valid chain by itself...
    result = verify_audit_log(path, head=head)  # ...which is why the head is kept elsewhere
    assert not result.ok
    assert result.problems == [
        "audit.jsonl:3: the recorded head hash is not in the log (truncated or rewritten)"
    ]


def test_audit_lines_appended_after_the_recorded_head_are_reported(tmp_path: Path) -> None:
    log, path = make_log(tmp_path, 2)
    head = log.head_hash
    log.append("late")
    result = verify_audit_log(path, head=head)
    assert result.problems == [
        "audit.jsonl:2: the recorded head is this line, but the log continues to line 3"
    ]


def test_audit_detects_garbage_and_torn_lines(tmp_path: Path) -> None:
    _, path = make_log(tmp_path, 2)
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"not": "an event"}\nnot json\n{"torn')
    result = verify_audit_log(path)
    assert not result.ok
    assert "audit.jsonl:3: not an audit event (keys differ)" in result.problems
    assert "audit.jsonl:4: not valid JSON" in result.problems
    assert "audit.jsonl:5: last line is not terminated (torn write?)" in result.problems


def test_audit_verify_missing_file(tmp_path: Path) -> None:
    result = verify_audit_log(tmp_path / "nope.jsonl")
    assert not result.ok and result.count == 0 and result.head_hash is None
    assert result.problems[0].startswith("nope.jsonl: cannot read")


def test_audit_empty_log_verifies(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl", "r")
    assert log.head_hash == GENESIS_HASH
    (tmp_path / "a.jsonl").touch()
    assert verify_audit_log(tmp_path / "a.jsonl").ok


def test_audit_refuses_to_extend_a_log_with_a_damaged_tail(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("garbage\n", encoding="utf-8")
    with pytest.raises(AuditError, match="last line is not a valid audit event"):
        AuditLog(path, "r")


@dataclass
class Point:
    x: int
    y: Path


def test_audit_non_serialisable_fields_are_stringified(tmp_path: Path) -> None:
    class Opaque:
        def __str__(self) -> str:
            return "<opaque>"

    log = AuditLog(tmp_path / "a.jsonl", "r")
    entry = log.append(
        "model_call",
        obj=Opaque(),
        path=Path("x/y.py"),
        tags={"b", "a"},
        blob=b"\xffab",
        nan=float("nan"),
        point=Point(1, Path("p")),
        nested={"when": datetime(2026, 1, 1), 3: (1, 2)},
        request={"messages": [{"role": "user", "content": "hé"}]},
    )
    fields = entry["fields"]
    assert fields["obj"] == "<opaque>"
    assert fields["path"] == "x/y.py"
    assert fields["tags"] == ["a", "b"]
    assert fields["blob"] == "\\xffab"
    assert fields["nan"] == "nan"
    assert fields["point"] == {"x": 1, "y": "p"}
    assert fields["nested"] == {"when": "2026-01-01T00:00:00", "3": [1, 2]}
    assert fields["request"]["messages"][0]["content"] == "hé"
    assert verify_audit_log(tmp_path / "a.jsonl").ok


def test_audit_threads_append_safely(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    log = AuditLog(path, "r")
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        barrier.wait()
        for i in range(40):
            log.append("tick", worker=n, i=i)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result = verify_audit_log(path, head=log.head_hash)
    assert result.ok, result.problems
    assert result.count == 320
    assert [e["seq"] for e in lines_of(path)] == list(range(1, 321))


def test_audit_processes_append_safely(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    AuditLog(path, "parent").append("start")
    code = (
        "import sys; from pathlib import Path; from chimera.governance.audit import AuditLog\n"
        "log = AuditLog(Path(sys.argv[1]), sys.argv[2])\n"
        "for i in range(30): log.append('tick', i=i)\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"p{n}"]) for n in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    result = verify_audit_log(path)
    assert result.ok, result.problems
    assert result.count == 91
