"""The evaluation ledger: every re-run of a task with a skill in context, one JSON line each.

``.chimera/skills/evals.jsonl`` is what ``chimera evolve`` refines from (the *recorded
failures* of a skill's current version, and its passing set, which a refinement must not
regress). Lines are appended by the evolver's keep-or-discard tests and by refinement rounds;
nothing rewrites them. A line is data written by Chimera about its own re-runs, and a
refinement re-derives every score it gates on anyway.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chimera.errors import UsageError

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry.to_json(), sort_keys=True) + "\n")

    def entries(self) -> list[SkillEval]:
        """Every line, in order.

        Raises:
            UsageError: a line is not a ledger entry (``file:line: message``).
        """
        if not self.path.is_file():
            return []
        out: list[SkillEval] = []
        for number, line in enumerate(self.path.read_text("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
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
