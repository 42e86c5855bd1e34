"""The run history the CronLearner reads: when each recorded run started, and its task.

Every run folder under ``.chimera/runs`` holds a hash-chained ``audit.jsonl`` whose first
``run_started`` event has the start time and (for ``chimera solve``) the task text; a project
run names its mode and who started it. A log that does not verify is skipped and named (a
history built from an edited log would propose from the edit). A run started by the scheduler
or a bot (``started_by`` ``schedule`` or a ``...[bot]`` login) is marked ``schedule``, which
the learner ignores: jobs the scheduler runs never create jobs.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from chimera.governance.audit import verify_audit_log
from chimera.scheduler.learner import RunRecord


def run_history(root: Path) -> tuple[list[RunRecord], list[str]]:
    """The runs of the repository at ``root`` (oldest first) and the skipped logs, each with
    its reason."""
    records: list[RunRecord] = []
    skipped: list[str] = []
    for log in sorted((root / ".chimera" / "runs").glob("*/audit.jsonl")):
        check = verify_audit_log(log)
        if not check.ok:
            skipped.append(f"{log}: audit log does not verify ({check.problems[0]})")
            continue
        for line in log.read_text("utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("event") != "run_started":
                continue
            fields = entry.get("fields") or {}
            task = str(fields.get("task") or f"chimera run ({fields.get('mode', 'repair')})")
            by = str(fields.get("started_by", ""))
            origin = "schedule" if by == "schedule" or by.endswith("[bot]") else "person"
            try:
                started = datetime.fromisoformat(str(entry["ts"]))
            except (KeyError, ValueError):
                skipped.append(f"{log}: run_started has no readable time")
                break
            records.append(RunRecord(task, started, origin))
            break
    records.sort(key=lambda r: r.started)
    return records, skipped


__all__ = ["run_history"]
