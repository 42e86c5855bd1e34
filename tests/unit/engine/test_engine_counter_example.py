"""One rule for every kind when a selected file cannot be read (or the pattern timed out in it):
a readable counter-example makes the requirement ``failed``, with the unreadable files listed
too; without one, the unreadable file makes it ``error``. A table per kind; the file pass may
be rewritten, these verdicts and evidence may not change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from chimera.spec.engine import EngineOptions
from chimera.spec.engine.files import read_bytes
from chimera.spec.kinds import Absent, Contains, Defines
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Check, Status

if TYPE_CHECKING:
    from tests.unit.engine.conftest import Evaluate

EVIL = "a" * 20000 + "b\n"
"""A text on which :data:`SLOW` backtracks past any short time limit."""
SLOW = r"(a+)+(?=$)"
"""Catastrophic in ``regex``; the lookahead keeps it off the linear engine."""


@dataclass(frozen=True)
class Row:
    files: dict[str, str | bytes]
    check: Check
    status: Status
    evidence: list[tuple[str | None, str]]
    """``(file, how the note starts)`` in order; a match has the note ``""``."""
    says: tuple[str, ...] = ()
    denied: frozenset[str] = field(default_factory=frozenset)
    """Files the reading hook refuses (permission denied)."""


ALL = MatchMode.ALL
BLOB = b"x\x00y"
TABLE: dict[str, Row] = {
    # -- contains (any): no readable file can prove it false, so unreadable is `error`.
    "contains-any-unreadable-no-match": Row(
        {"a.txt": BLOB, "b.txt": "nothing\n"},
        Contains(paths=["*.txt"], pattern="needle"),
        Status.ERROR,
        [("a.txt", "binary file")],
        ("not found in any readable file", "a.txt (binary file"),
    ),
    "contains-any-unreadable-match-elsewhere": Row(
        {"a.txt": BLOB, "b.txt": "a needle\n"},
        Contains(paths=["*.txt"], pattern="needle"),
        Status.PASSED,
        [("b.txt", "")],
    ),
    "contains-any-denied-no-match": Row(
        {"a.txt": "needle\n", "b.txt": "nothing\n"},
        Contains(paths=["*.txt"], pattern="needle"),
        Status.ERROR,
        [("a.txt", "unreadable: Permission denied")],
        denied=frozenset({"a.txt"}),
    ),
    "contains-one-path-unreadable": Row(
        {"a.txt": BLOB},
        Contains(path="a.txt", pattern="needle"),
        Status.ERROR,
        [("a.txt", "binary file")],
    ),
    # -- contains, match: all: a readable file without a match is the counter-example.
    "contains-all-unreadable-and-counter-example": Row(
        {"a.txt": BLOB, "b.txt": "nothing\n", "c.txt": "a needle\n"},
        Contains(paths=["*.txt"], pattern="needle", match=ALL),
        Status.FAILED,
        [("b.txt", "no match"), ("a.txt", "binary file")],
        ("not found in 1 file of 3: b.txt", "1 selected file cannot be scanned: a.txt"),
    ),
    "contains-all-denied-and-counter-example": Row(
        {"a.txt": "needle\n", "b.txt": "nothing\n"},
        Contains(paths=["*.txt"], pattern="needle", match=ALL),
        Status.FAILED,
        [("b.txt", "no match"), ("a.txt", "unreadable: Permission denied")],
        ("b.txt", "a.txt (unreadable: Permission denied)"),
        denied=frozenset({"a.txt"}),
    ),
    "contains-all-unreadable-no-counter-example": Row(
        {"a.txt": BLOB, "b.txt": "a needle\n"},
        Contains(paths=["*.txt"], pattern="needle", match=ALL),
        Status.ERROR,
        [("a.txt", "binary file")],
        ("cannot check every file",),
    ),
    "contains-all-timeout-and-counter-example": Row(
        {"a.txt": EVIL, "b.txt": "nothing\n"},
        Contains(paths=["*.txt"], pattern=SLOW, match=ALL),
        Status.FAILED,
        [("b.txt", "no match"), ("a.txt", "pattern /(a+)+(?=$)/ timed out")],
        ("timed out in a.txt",),
    ),
    "contains-all-timeout-no-counter-example": Row(
        {"a.txt": EVIL, "b.txt": "aaa\n"},
        Contains(paths=["*.txt"], pattern=SLOW, match=ALL),
        Status.ERROR,
        [("a.txt", "pattern /(a+)+(?=$)/ timed out")],
    ),
    "contains-all-readable": Row(
        {"a.txt": "a needle\n", "b.txt": "nothing\n"},
        Contains(paths=["*.txt"], pattern="needle", match=ALL),
        Status.FAILED,
        [("b.txt", "no match")],
    ),
    # -- absent: a match is the counter-example.
    "absent-unreadable-and-match": Row(
        {"a.txt": BLOB, "b.txt": "a needle\n"},
        Absent(paths=["*.txt"], pattern="needle"),
        Status.FAILED,
        [("b.txt", ""), ("a.txt", "binary file")],
        ("1 match in 1 file", "a.txt (binary file"),
    ),
    "absent-unreadable-no-match": Row(
        {"a.txt": BLOB, "b.txt": "nothing\n"},
        Absent(paths=["*.txt"], pattern="needle"),
        Status.ERROR,
        [("a.txt", "binary file")],
        ("cannot show /needle/ is absent",),
    ),
    "absent-timeout-and-match": Row(
        {"a.txt": EVIL, "b.txt": "aaa\n"},
        Absent(paths=["*.txt"], pattern=SLOW),
        Status.FAILED,
        [("b.txt", ""), ("a.txt", "pattern /(a+)+(?=$)/ timed out")],
    ),
    "absent-one-path-unreadable": Row(
        {"a.txt": BLOB},
        Absent(path="a.txt", pattern="needle"),
        Status.ERROR,
        [("a.txt", "binary file")],
    ),
    # -- defines: one file; unreadable or unparsable is `error`, a readable miss `failed`.
    "defines-unreadable": Row(
        {"m.py": b"X = 1\x00\n"},
        Defines(path="m.py", symbol="X"),
        Status.ERROR,
        [],
        ("cannot read m.py: binary file",),
    ),
    "defines-unparsable": Row(
        {"m.py": "def f(:\n"},
        Defines(path="m.py", symbol="f"),
        Status.ERROR,
        [],
        ("syntax error at m.py:1",),
    ),
    "defines-readable-miss": Row(
        {"m.py": "Y = 1\n"},
        Defines(path="m.py", symbol="X"),
        Status.FAILED,
        [("m.py", "no similar names defined")],
    ),
}


@pytest.mark.parametrize("name", list(TABLE))
def test_counter_example_rule(tmp_path: Path, evaluate: Evaluate, name: str) -> None:
    row = TABLE[name]
    for rel, data in row.files.items():
        path = tmp_path / rel
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    denied = {str((tmp_path / rel).resolve()) for rel in row.denied}

    def reader(real: str, limit: int) -> bytes:
        if real in denied:
            raise PermissionError(13, "Permission denied")
        return read_bytes(real, limit)

    res = evaluate(
        tmp_path,
        row.check,
        options=EngineOptions(pattern_timeout_s=0.3),
        reader=reader if denied else None,
    )
    assert res.status is row.status, res.message
    got = [(e.file, e.note) for e in res.evidence]
    assert len(got) == len(row.evidence), got
    for (file, note), (want_file, want_note) in zip(got, row.evidence, strict=True):
        assert file == want_file, got
        assert note.startswith(want_note) if want_note else note == "", got
    for fragment in row.says:
        assert fragment in res.message, res.message
