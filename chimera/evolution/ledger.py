"""The evaluation ledger: every re-run of a task with a skill in context, one JSON line each.

``.chimera/skills/evals.jsonl`` is what ``chimera evolve`` refines from (the *recorded
failures* of a skill's current version, and its passing set, which a refinement must not
regress). Lines are appended by the evolver's keep-or-discard tests and by refinement rounds;
nothing rewrites them. A line is data written by Chimera about its own re-runs, and a
refinement re-derives every score it gates on anyway.

Writes are append-only and crash-safe (:mod:`chimera.evolution.jsonl`: a file lock, one
``write`` per line, ``fsync``); a torn last line left by a killed process is skipped with a
warning on read and cut off by the next append.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chimera.errors import UsageError
from chimera.evolution.jsonl import append_record, read_records

EVALS_FILE = "evals.jsonl"


@dataclass(frozen=True, slots=True)
class SkillEval:
    """One re-run of ``task`` with ``skill`` version ``version`` in context."""

    skill: str
    version: int
    task: str
    passed: bool
    source: str = ""
    ts: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "version": self.version,
            "task": self.task,
            "passed": self.passed,
            "source": self.source,
            "ts": self.ts or datetime.now(UTC).isoformat(timespec="seconds"),
        }


class SkillEvalLog:
    """The ledger at ``path`` (append-only JSONL)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entry: SkillEval) -> None:
        """Append one entry (one fsync'd line under the ledger's file lock).

        Raises:
            ChimeraError: the file cannot be written.
        """
        append_record(self.path, entry.to_json())

    def entries(self) -> list[SkillEval]:
        """Every entry, in order (a torn last line skipped with a warning).

        Raises:
            UsageError: a line is not a ledger entry (``file:line: message``).
        """
        out: list[SkillEval] = []
        for number, raw in read_records(self.path):
            try:
                if not isinstance(raw["passed"], bool):
                    raise TypeError("'passed' is not true or false")
                out.append(
                    SkillEval(
                        str(raw["skill"]),
                        int(raw["version"]),
                        str(raw["task"]),
                        bool(raw["passed"]),
                        str(raw.get("source", "")),
                        str(raw.get("ts", "")),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise UsageError(f"{self.path}:{number}: not a ledger entry ({exc})") from exc
        return out

    def split(self, skill: str, version: int) -> tuple[list[str], list[str]]:
        """The failing and passing task ids of ``skill`` at ``version``: a task's latest entry
        decides which (sorted, each task once)."""
        latest: dict[str, bool] = {}
        for e in self.entries():
            if e.skill == skill and e.version == version:
                latest[e.task] = e.passed
        failing = sorted(t for t, ok in latest.items() if not ok)
        passing = sorted(t for t, ok in latest.items() if ok)
        return failing, passing
