"""``chimera trajectories export``: confirmed attempts of past runs as fine-tuning data.

``chimera trajectories export RUN_DIR... --format sft|dpo|openai-dpo -o FILE`` reads each run
folder (or ``.chimera/runs``, or a workflow artifacts folder) with
:class:`chimera.memory.trajectories.TrajectoryCollector` and writes FILE plus its metadata
(``<stem>.meta.jsonl``). ``--pairs task|strict`` picks how preference pairs share a prompt;
``--include-tainted`` and ``--include-unverified`` let in attempts of tainted runs and of
Action artifacts (flagged in the metadata). Chimera collects; it never trains.

Exit status: 0 rows written, 1 nothing qualified (nothing written; the report says why),
2 bad usage (a path that is not a run folder, an unwritable FILE).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.cli._base import Subparsers, err
from chimera.errors import UsageError

if TYPE_CHECKING:
    from chimera.memory.trajectories import ExportReport

EXIT_WRITTEN = 0
EXIT_EMPTY = 1
FORMAT_CHOICES = ("sft", "dpo", "openai-dpo")
PAIR_CHOICES = ("task", "strict")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "trajectories",
        help="export confirmed attempts of past runs as SFT or preference data",
        description="Fine-tuning data from run folders. Chimera collects; it never trains.",
    )
    sub = parser.add_subparsers(dest="trajectories_command", metavar="ACTION", title="actions")
    export = sub.add_parser(
        "export",
        help="write SFT (TRL), DPO (TRL) or OpenAI DPO JSONL from run folders",
        description=(
            "Read run folders (a run, .chimera/runs, or an Action artifacts folder); keep the "
            "attempts their audit log confirms; write FILE and FILE's .meta.jsonl. Exit "
            "status: 0 written, 1 no row qualified, 2 bad usage."
        ),
    )
    export.add_argument("run_dirs", metavar="RUN_DIR", nargs="+", type=Path)
    export.add_argument("--format", required=True, choices=FORMAT_CHOICES, dest="fmt")
    export.add_argument("-o", "--output", required=True, metavar="FILE", type=Path)
    export.add_argument(
        "--pairs",
        choices=PAIR_CHOICES,
        help="dpo formats: task (default; prompt without the carried-forward history) or "
        "strict (byte-identical prefix)",
    )
    export.add_argument(
        "--include-tainted", action="store_true", help="include attempts of tainted runs"
    )
    export.add_argument(
        "--include-unverified",
        action="store_true",
        help="include attempts from Action artifacts (verdicts not re-derived here)",
    )
    export.add_argument("--json", action="store_true", help="print the report as one JSON object")
    export.set_defaults(handler=_export)
    parser.set_defaults(handler=_missing_action)


def _missing_action(args: argparse.Namespace) -> int:
    raise UsageError("chimera trajectories: an action is required (export)")


def _export(args: argparse.Namespace) -> int:
    from chimera.memory.trajectories import TrajectoryCollector

    if args.fmt == "sft" and args.pairs is not None:
        raise UsageError("--pairs applies to the dpo formats only")
    collector = TrajectoryCollector()
    for path in args.run_dirs:
        collector.add(path)
    try:
        report = collector.export(
            args.fmt,
            args.output,
            pairs=args.pairs or "task",
            include_tainted=args.include_tainted,
            include_unverified=args.include_unverified,
        )
    except OSError as exc:
        raise UsageError(f"{args.output}: cannot write: {exc.strerror or exc}") from exc
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), sort_keys=True) + "\n")
    else:
        _print(report)
    if not report.rows:
        err("chimera: no row qualified; nothing written")
        return EXIT_EMPTY
    return EXIT_WRITTEN


def _print(r: ExportReport) -> None:
    out = sys.stdout.write
    if r.rows:
        out(f"wrote {r.rows} {r.format} row(s) to {r.output} (metadata: {r.metadata})\n")
    out(f"runs: {len(r.runs_read)} read, {len(r.runs_skipped)} skipped\n")
    for s in r.runs_skipped:
        out(f"  skipped {s.where}: {s.reason}\n")
    out(
        f"attempts: {r.attempts} confirmed ({r.accepted} accepted), "
        f"{len(r.attempts_skipped)} skipped\n"
    )
    for s in r.attempts_skipped:
        out(f"  skipped {s.where}: {s.reason}\n")
    out(
        f"excluded: {r.excluded_tainted} tainted (--include-tainted), "
        f"{r.excluded_unverified} unverified (--include-unverified)\n"
    )
    if r.format != "sft":
        for mode in PAIR_CHOICES:
            chosen = " (written)" if mode == r.pairs else ""
            why = "; ".join(f"{n} {reason}" for reason, n in r.pairs_skipped[mode].items())
            out(
                f"pairs --pairs {mode}{chosen}: {r.pair_candidates} candidate(s), "
                f"{r.pairs_made[mode]} made; skipped: {why or 'none'}\n"
            )
    if r.redacted:
        out("redacted: " + ", ".join(f"{k} x{n}" for k, n in r.redacted.items()) + "\n")
