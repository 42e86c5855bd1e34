"""``chimera schedules approve ID``: a person turns a schedule on, as a reviewed text edit.

The file is edited in place — only the ``enabled:`` line changes and an ``approved_by:`` line
is added or replaced beside it — so comments and layout survive and the diff a reviewer sees
is two lines. The edited file is read back through the loader; if the schedule does not come
back active and valid, the original text is restored and the approval fails.
"""

from __future__ import annotations

import re
from pathlib import Path

from chimera.atomic import atomic_write_text
from chimera.errors import UsageError
from chimera.scheduler.loader import load_schedules
from chimera.scheduler.model import ScheduleLoad
from chimera.scheduler.registry import TriggerRegistry

__all__ = ["approve"]

_PERSON = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,99}$")


def approve(
    root: Path,
    schedule_id: str,
    person: str,
    *,
    registry: TriggerRegistry | None = None,
) -> Path:
    """Enable ``schedule_id`` and record ``person`` as its approver; returns the file edited.

    Raises:
        UsageError: the schedules do not validate, no such schedule, it is already active, the
            person's name is unusable, or the declaration is written in a style that cannot be
            edited line by line (a flow mapping ``{...}``).
    """
    if not _PERSON.match(person) or person.lower().endswith("[bot]"):
        raise UsageError(f"approver {person!r}: a person's name or login, not a bot")
    load = load_schedules(root, registry=registry)
    if not load.ok:
        raise UsageError(f"the schedules do not validate: {load.problems[0]}")
    schedule = load.get(schedule_id)
    if schedule is None:
        known = ", ".join(s.id for s in load.schedules) or "none"
        raise UsageError(f"no schedule {schedule_id!r} (declared: {known})")
    if schedule.active:
        raise UsageError(f"schedule {schedule_id!r} is already enabled")
    path = root / schedule.place.file
    original = path.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    keys = {name: (line, col) for name, line, col in schedule.place.keys}
    indent = " " * (keys["id"][1] - 1)
    block = [f"{indent}enabled: true\n", f"{indent}approved_by: {_quoted(person)}\n"]
    for name in ("approved_by", "enabled"):  # bottom-up, so earlier line numbers hold
        if name in keys:
            line, col = keys[name]
            if not lines[line - 1][col - 1 :].startswith(f"{name}:") or col - 1 != len(indent):
                raise UsageError(
                    f"{schedule.place}: '{schedule_id}' is not written one key per line; "
                    "edit it by hand"
                )
    _drop(lines, keys, "approved_by")
    at = keys["enabled"][0] if "enabled" in keys else keys["id"][0] + 1
    if "enabled" in keys:
        del lines[at - 1]
    lines[at - 1 : at - 1] = block
    atomic_write_text(path, "".join(lines))
    _confirm(root, path, original, schedule_id, registry)
    return path


def _drop(lines: list[str], keys: dict[str, tuple[int, int]], name: str) -> None:
    if name not in keys:
        return
    line = keys.pop(name)[0]
    del lines[line - 1]
    for other, (at, col) in list(keys.items()):
        if at > line:
            keys[other] = (at - 1, col)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _confirm(
    root: Path, path: Path, original: str, schedule_id: str, registry: TriggerRegistry | None
) -> None:
    after: ScheduleLoad = load_schedules(root, registry=registry)
    schedule = after.get(schedule_id)
    if after.ok and schedule is not None and schedule.active:
        return
    atomic_write_text(path, original)
    why = str(after.problems[0]) if after.problems else "it did not come back enabled"
    raise UsageError(f"approving {schedule_id!r} failed ({why}); the file is unchanged")
