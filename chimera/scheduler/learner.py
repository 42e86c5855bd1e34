"""CronLearner: finds tasks people keep starting at regular times and proposes crons for them.

Proposals are data for a person: ``created_by: agent``, ``enabled: false``, written to
``.chimera.d/schedules/learned.yaml`` for a pull request (the patch scan holds ``.chimera.d/``
for review), and only ``chimera schedules approve ID`` — a person's edit, reviewed like code —
lets one run. Every proposal passes
:class:`~chimera.governance.validators.ScheduleValidator` before it is offered.

How a cadence is found, per group of similar tasks (word-set Jaccard similarity, digits and
punctuation ignored, so ``"Report for #12"`` and ``"report for #13"`` group; one-off tasks are
noise and never reach ``min_runs``):

1. Candidate expressions are built from the runs' local times in the stated zone: the median
   time of day (on a 5-minute grid, preferring round times :00, :30, :15) daily, on
   weekdays, weekly on the commonest weekday, monthly on the commonest day; and every k hours
   (k in 1, 2, 3, 4, 6, 8, 12, at the commonest phase) at the median minute.
2. Each candidate's fire times over the observed span are matched one-to-one to runs within
   ``jitter_minutes``; precision = matched fires / fires, recall = matched runs / runs.
3. The best candidate by F1 (then precision, then fewer fires) is proposed when both reach
   ``min_fit`` — so "weekdays at 06:00" wins over "daily at 06:00" when weekends are empty.

Runs the scheduler itself started (``origin == "schedule"``) are ignored: jobs run by the
scheduler cannot create jobs.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from chimera.atomic import atomic_write_text
from chimera.governance.validators import ScheduleValidator
from chimera.localstate import make_dirs
from chimera.scheduler.clock import aware
from chimera.scheduler.cron import CronExpr, zone
from chimera.scheduler.loader import SCHEDULES_DIR
from chimera.scheduler.model import Schedule

__all__ = ["LEARNED_FILE", "CronLearner", "Proposal", "RunRecord", "write_proposals"]

LEARNED_FILE = SCHEDULES_DIR / "learned.yaml"
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class RunRecord:
    """One past run: its task text, when it started (aware), and who started it (``person``,
    ``label``, ... or ``schedule`` for a run the scheduler started)."""

    task: str
    started: datetime
    origin: str = "person"


@dataclass(frozen=True)
class Proposal:
    """A proposed schedule; ``precision``/``recall`` say how well ``cron`` fits the runs."""

    id: str
    cron: str
    timezone: str
    task: str
    runs: int
    precision: float
    recall: float

    def declaration(self) -> dict[str, Any]:
        """The mapping written to the schedules file (disabled, made by the agent)."""
        return {
            "id": self.id,
            "title": f"Learned from {self.runs} runs (fit {self.precision:.2f}/{self.recall:.2f})",
            "cron": {"expr": self.cron, "timezone": self.timezone},
            "task": self.task,
            "created_by": "agent",
            "enabled": False,
        }


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _similar(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


@dataclass
class CronLearner:
    """Detects recurring tasks in run history (see the module docstring).

    Args:
        timezone: the IANA zone cadences are read in (and proposed in).
        min_runs: fewest runs of one task before a cadence is looked for.
        similarity: word-set Jaccard similarity that puts two tasks in one group.
        jitter_minutes: how far a run may be from a fire time and still match it.
        min_fit: the precision and recall a proposal needs.
        validator: the static checks every proposal passes.

    Raises:
        CronError: ``timezone`` is unknown.
    """

    timezone: str
    min_runs: int = 4
    similarity: float = 0.6
    jitter_minutes: int = 45
    min_fit: float = 0.8
    validator: ScheduleValidator = field(default_factory=ScheduleValidator)

    def __post_init__(self) -> None:
        zone(self.timezone)

    def propose(
        self, history: Sequence[RunRecord], *, existing: Sequence[Schedule] = ()
    ) -> list[Proposal]:
        """Proposals for the recurring tasks of ``history`` not already scheduled.

        Raises:
            UsageError: a run's time is naive.
        """
        runs = sorted(
            (r for r in history if r.origin != "schedule"), key=lambda r: aware(r.started)
        )
        taken = {s.id for s in existing}
        scheduled = [_words(s.fields.task or "") for s in existing]
        proposals: list[Proposal] = []
        for group in self._groups(runs):
            words = _words(group[0].task)
            if len(group) < self.min_runs:
                continue
            if any(_similar(words, w) >= self.similarity for w in scheduled):
                continue
            found = self._fit([r.started for r in group])
            if found is None:
                continue
            expr, precision, recall = found
            pid = _unique_id(group[0].task, taken)
            proposal = Proposal(
                pid, expr, self.timezone, group[-1].task, len(group), precision, recall
            )
            verdict = self.validator.validate_schedule(
                {"name": pid, "cron": expr, "task": proposal.task, "created_by": "agent"}
            )
            if verdict.ok:
                taken.add(pid)
                proposals.append(proposal)
        return proposals

    def _groups(self, runs: Sequence[RunRecord]) -> list[list[RunRecord]]:
        groups: list[tuple[frozenset[str], list[RunRecord]]] = []
        for run in runs:
            words = _words(run.task)
            for head, members in groups:
                if _similar(head, words) >= self.similarity:
                    members.append(run)
                    break
            else:
                groups.append((words, [run]))
        return [members for _, members in groups]

    def _candidates(self, times: Sequence[datetime]) -> list[str]:
        tz = zone(self.timezone)
        local = [t.astimezone(tz) for t in times]
        h, m = divmod(_round_time([t.hour * 60 + t.minute for t in local]), 60)
        weekday = Counter((t.isoweekday() % 7) for t in local).most_common(1)[0][0]
        day = Counter(t.day for t in local).most_common(1)[0][0]
        found = [
            f"{m} {h} * * *",
            f"{m} {h} * * 1-5",
            f"{m} {h} * * {weekday}",
            f"{m} {h} {day} * *",
        ]
        # Minutes past the nearest hour (-29..30), so runs jittering around :00 stay together.
        offsets = [t.minute if t.minute <= 30 else t.minute - 60 for t in local]
        minute = _round_time(offsets) % 60
        for k in (1, 2, 3, 4, 6, 8, 12):
            nearest = [(t + timedelta(minutes=30)).hour % k for t in local] if k > 1 else [0]
            phase = Counter(nearest).most_common(1)[0][0]
            found.append(f"{minute} {f'{phase}-23' if phase else '*'}/{k} * * *")
        return found

    def _fit(self, times: Sequence[datetime]) -> tuple[str, float, float] | None:
        jitter = timedelta(minutes=self.jitter_minutes)
        best: tuple[tuple[float, float, int], str, float, float] | None = None
        for expr in self._candidates(times):
            fires = CronExpr(expr, self.timezone).fires_between(
                times[0] - jitter, times[-1] + jitter
            )
            if not fires:
                continue
            matched = _match(fires, times, jitter)
            precision, recall = matched / len(fires), matched / len(times)
            f1 = 2 * precision * recall / (precision + recall) if matched else 0.0
            key = (f1, precision, -len(fires))
            if best is None or key > best[0]:
                best = (key, expr, precision, recall)
        if best is None or best[2] < self.min_fit or best[3] < self.min_fit:
            return None
        return best[1], round(best[2], 3), round(best[3], 3)


def _round_time(values: Sequence[float]) -> int:
    """The 5-minute grid time (minutes) that best explains ``values``: the smallest mean
    distance to them plus a small penalty for being less round (:00 < :30 < :15 < :05), since
    people schedule at round times and the median of jittered runs lands a few minutes off."""
    centre = statistics.median(values)
    best: tuple[float, int] | None = None
    for c in range(5 * round(centre / 5) - 30, 5 * round(centre / 5) + 31, 5):
        penalty = 0 if c % 60 == 0 else 1 if c % 30 == 0 else 2 if c % 15 == 0 else 3
        cost = sum(abs(v - c) for v in values) / len(values) + penalty
        if best is None or cost < best[0]:
            best = (cost, c)
    assert best is not None
    return best[1] % 1440


def _match(fires: Sequence[datetime], times: Sequence[datetime], jitter: timedelta) -> int:
    """How many fire times pair one-to-one with a run within ``jitter`` (both sorted)."""
    i = matched = 0
    for fire in fires:
        while i < len(times) and times[i] < fire - jitter:
            i += 1
        if i < len(times) and times[i] <= fire + jitter:
            matched += 1
            i += 1
    return matched


def _unique_id(task: str, taken: set[str]) -> str:
    words = [w for w in _WORD.findall(task.lower()) if len(w) > 2][:3] or ["task"]
    base = "learned-" + "-".join(words)
    base = base[:56]
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def write_proposals(root: Path, proposals: Sequence[Proposal]) -> Path:
    """Add ``proposals`` to ``.chimera.d/schedules/learned.yaml`` under ``root`` (kept
    declarations stay; one with the same id is replaced) and return the file's path.

    Raises:
        OSError: the file cannot be written.
    """
    path = root / LEARNED_FILE
    kept: list[dict[str, Any]] = []
    if path.is_file():
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        items = loaded.get("schedules", []) if isinstance(loaded, dict) else []
        new_ids = {p.id for p in proposals}
        kept = [i for i in items if isinstance(i, dict) and i.get("id") not in new_ids]
    body = {"schedules": kept + [p.declaration() for p in proposals]}
    header = (
        "# Proposed by Chimera's CronLearner: disabled until a person runs\n"
        "# `chimera schedules approve ID` (or edits the file) in a reviewed change.\n"
    )
    make_dirs(path.parent)
    atomic_write_text(path, header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True))
    return path
