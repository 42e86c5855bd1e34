"""A writer killed mid-append leaves an unterminated fragment; the next writer cuts it off,
records the cut in the chain, and the log verifies again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from chimera.errors import AuditError
from chimera.governance.audit import AuditLog, verify_audit_log


def test_a_torn_last_line_is_cut_recorded_and_the_chain_continues(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, "r")
    log.append("card_started", card="a")
    log.append("model_call", text="x" * 10_000)
    whole = path.read_bytes()
    lines = whole.splitlines(keepends=True)
    # The second append was cut short by a kill: only its first 5000 bytes reached the file.
    path.write_bytes(lines[0] + lines[1][:5000])
    assert not verify_audit_log(path).ok
    head_before = json.loads(lines[0])["hash"]

    reopened = AuditLog(path, "r")  # a resumed run
    entry = reopened.append("resumed", retry=True)

    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["event"] for e in events] == ["card_started", "torn_tail_discarded", "resumed"]
    torn = events[1]
    assert torn["prev_hash"] == head_before
    assert torn["fields"]["bytes"] == 5000
    assert torn["fields"]["offset"] == len(lines[0])
    assert torn["fields"]["sha256"] == hashlib.sha256(lines[1][:5000]).hexdigest()
    assert torn["fields"]["start"].startswith('{"event":"model_call"')
    assert verify_audit_log(path, head=entry["hash"]).ok


def test_a_log_that_is_only_a_fragment(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b'{"event":"run_st')
    log = AuditLog(path, "r")
    assert log.seq == 1
    assert verify_audit_log(path, head=log.head_hash).ok


def test_a_complete_but_invalid_last_line_still_refuses(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"garbage\n")
    with pytest.raises(AuditError, match="last line is not a valid audit event"):
        AuditLog(path, "r")
    assert path.read_bytes() == b"garbage\n"  # nothing cut
