"""TrajectoryCollector: run folders in, a training file and its metadata file out.

Chimera collects; it never trains. What is included:

* ``sft``: accepted attempts only (verdict ``passed`` with a real diff; hollow, failed,
  reverted and orchestrator-refused attempts never);
* ``dpo`` / ``openai-dpo``: pairs of an accepted and a failed attempt of the same card
  (:mod:`chimera.memory.trajectories.pairs`); the report counts the candidate pairs each
  pairing mode skipped, and why, whichever mode was asked for.

Attempts of tainted runs and of Action artifacts (verdicts computed by an unprivileged job,
``verified: false``) are left out unless asked for, and counted. Every string of every row and
metadata line passes the governance :class:`~chimera.governance.redactor.SecretRedactor`
(credential-named environment variables, the projects' dotenv files, known token formats).
Rows come out in a stable order (card, task, run, attempt), keys sorted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from chimera.atomic import atomic_write_text
from chimera.memory.trajectories.collect import RunRead, Skipped, Trajectory, find_runs, read_run
from chimera.memory.trajectories.formats import Row, Unfit, dpo_row, openai_dpo_row, sft_row
from chimera.memory.trajectories.pairs import MODES, Mode, Pair, candidates, make_pair
from chimera.memory.trajectories.schema import validate_row

Format = Literal["sft", "dpo", "openai-dpo"]
FORMATS: tuple[Format, ...] = ("sft", "dpo", "openai-dpo")


@dataclass
class ExportReport:
    """What an export read, wrote and left out (counts; reasons name no secret)."""

    format: Format
    pairs: Mode
    rows: int = 0
    output: str | None = None
    metadata: str | None = None
    runs_read: list[str] = field(default_factory=list)
    runs_skipped: list[Skipped] = field(default_factory=list)
    attempts: int = 0
    accepted: int = 0
    attempts_skipped: list[Skipped] = field(default_factory=list)
    excluded_tainted: int = 0
    excluded_unverified: int = 0
    pair_candidates: int = 0
    pairs_made: dict[str, int] = field(default_factory=dict)
    pairs_skipped: dict[str, dict[str, int]] = field(default_factory=dict)
    redacted: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "pairs": self.pairs if self.format != "sft" else None,
            "rows": self.rows,
            "output": self.output,
            "metadata": self.metadata,
            "runs_read": self.runs_read,
            "runs_skipped": [{"run": s.where, "reason": s.reason} for s in self.runs_skipped],
            "attempts": self.attempts,
            "accepted": self.accepted,
            "attempts_skipped": [
                {"attempt": s.where, "reason": s.reason} for s in self.attempts_skipped
            ],
            "excluded_tainted": self.excluded_tainted,
            "excluded_unverified": self.excluded_unverified,
            "pair_candidates": self.pair_candidates,
            "pairs_made": self.pairs_made,
            "pairs_skipped": self.pairs_skipped,
            "redacted": self.redacted,
        }


class TrajectoryCollector:
    """Collects confirmed attempts from run folders and exports them.

    ``add`` each run folder (or ``.chimera/runs``, or a workflow artifacts folder), then
    :meth:`build` the rows or :meth:`export` them to a file.
    """

    def __init__(self) -> None:
        self.runs: list[RunRead] = []
        self._seen: set[Path] = set()

    def add(self, path: Path) -> list[RunRead]:
        """Read the run folders ``path`` names (see :func:`find_runs`); returns them.

        Raises:
            UsageError: ``path`` is not a run folder, a folder of them or an artifacts folder.
        """
        added = []
        for run_dir, source in find_runs(Path(path)):
            resolved = run_dir.resolve()
            if resolved in self._seen:
                continue
            self._seen.add(resolved)
            added.append(read_run(run_dir, source))
        self.runs.extend(added)
        return added

    @property
    def trajectories(self) -> list[Trajectory]:
        """Every confirmed attempt, in export order."""
        found = [t for run in self.runs if run.refused is None for t in run.trajectories]
        return sorted(found, key=lambda t: t.sort_key)

    def build(
        self,
        fmt: Format,
        *,
        pairs: Mode = "task",
        include_tainted: bool = False,
        include_unverified: bool = False,
    ) -> tuple[list[Row], list[Row], ExportReport]:
        """The rows of ``fmt``, their metadata lines (same order) and the report.

        Raises:
            ChimeraError: a built row does not fit its schema (a bug, never written).
        """
        report = ExportReport(format=fmt, pairs=pairs)
        for run in self.runs:
            if run.refused is not None:
                report.runs_skipped.append(Skipped(str(run.path), run.refused))
            else:
                report.runs_read.append(str(run.path))
                report.attempts_skipped.extend(run.skipped)
        usable: list[Trajectory] = []
        for t in self.trajectories:
            report.attempts += 1
            report.accepted += t.accepted
            if t.tainted and not include_tainted:
                report.excluded_tainted += 1
            elif not t.verified and not include_unverified:
                report.excluded_unverified += 1
            else:
                usable.append(t)
        built: list[tuple[Row, Row]] = []
        if fmt == "sft":
            for t in (t for t in usable if t.accepted):
                try:
                    built.append(sft_row(t))
                except Unfit as exc:
                    report.attempts_skipped.append(Skipped(_where(t), str(exc)))
        else:
            built = self._pairs(fmt, pairs, usable, report)
        redact = _redactor(self.runs)
        names: Counter[str] = Counter()
        rows, metas = [], []
        for row, meta in built:
            row, meta = _scrub(row, redact, names), _scrub(meta, redact, names)
            validate_row(fmt, row)
            rows.append(row)
            metas.append(meta)
        report.rows = len(rows)
        report.redacted = dict(sorted(names.items()))
        return rows, metas, report

    def export(
        self,
        fmt: Format,
        output: Path,
        *,
        pairs: Mode = "task",
        include_tainted: bool = False,
        include_unverified: bool = False,
    ) -> ExportReport:
        """Write the rows to ``output`` and their metadata to ``<stem>.meta.jsonl`` beside it
        (atomically; nothing is written when there is no row).

        Raises:
            OSError: ``output`` cannot be written.
        """
        rows, metas, report = self.build(
            fmt, pairs=pairs, include_tainted=include_tainted, include_unverified=include_unverified
        )
        if not rows:
            return report
        output = Path(output)
        meta_path = metadata_path(output)
        atomic_write_text(output, _jsonl(rows))
        atomic_write_text(meta_path, _jsonl([{"row": i, **m} for i, m in enumerate(metas)]))
        report.output, report.metadata = str(output), str(meta_path)
        return report

    @staticmethod
    def _pairs(
        fmt: Format, mode: Mode, usable: list[Trajectory], report: ExportReport
    ) -> list[tuple[Row, Row]]:
        one_turn = fmt == "openai-dpo"
        todo = candidates(usable)
        report.pair_candidates = len(todo)
        made: dict[Mode, list[Pair]] = {m: [] for m in MODES}
        for m in MODES:
            skipped: Counter[str] = Counter()
            for chosen, rejected in todo:
                pair = make_pair(chosen, rejected, m, one_turn=one_turn)
                if isinstance(pair, str):
                    skipped[pair] += 1
                else:
                    made[m].append(pair)
            report.pairs_made[m] = len(made[m])
            report.pairs_skipped[m] = dict(sorted(skipped.items()))
        build = openai_dpo_row if one_turn else dpo_row
        out = []
        for pair in made[mode]:
            try:
                out.append(build(pair))
            except Unfit as exc:
                report.pairs_made[mode] -= 1
                skips = report.pairs_skipped[mode]
                skips[str(exc)] = skips.get(str(exc), 0) + 1
        return out


def metadata_path(output: Path) -> Path:
    """Where the metadata of ``output`` goes: ``rows.jsonl`` → ``rows.meta.jsonl``."""
    return output.with_name(f"{output.stem}.meta.jsonl")


def _where(t: Trajectory) -> str:
    return f"{t.run_id}:{t.card}#{t.number}"


def _jsonl(rows: list[Row]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def _redactor(runs: list[RunRead]) -> Callable[[str], tuple[str, list[str]]]:
    """Secrets of the environment and of every local run's project (its dotenv files)."""
    from chimera.governance.redactor import SecretRedactor

    roots = sorted(
        {
            r.path.resolve().parents[2]
            for r in runs
            if r.source == "local"
            and r.path.parent.name == "runs"
            and r.path.parent.parent.name == ".chimera"
        }
    )
    redactors = [SecretRedactor.from_environment(workspace=root) for root in roots]
    redactors = redactors or [SecretRedactor.from_environment()]

    def redact(text: str) -> tuple[str, list[str]]:
        found: list[str] = []
        for r in redactors:
            text, names = r.redact(text)
            found.extend(names)
        return text, found

    return redact


def _scrub(value: Any, redact: Callable[[str], tuple[str, list[str]]], names: Counter[str]) -> Any:
    if isinstance(value, str):
        text, found = redact(value)
        names.update(found)
        return text
    if isinstance(value, dict):
        return {k: _scrub(v, redact, names) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v, redact, names) for v in value]
    return value


__all__ = ["FORMATS", "ExportReport", "Format", "TrajectoryCollector", "metadata_path"]
