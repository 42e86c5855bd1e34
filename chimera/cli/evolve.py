"""``chimera evolve``: one bounded refinement round of a skill on its recorded failures.

The recorded failures are the evaluation ledger's (``.chimera/skills/evals.jsonl``): re-runs
of a benchmark chain's tasks with the skill's current version in context. The round runs GEPA
on a third of them and replaces the skill only through the transfer gate on the rest, with no
regression on its passing tasks (:mod:`chimera.evolution.refine`). It is budgeted —
``--max-metric-calls`` re-runs, ``--budget-tokens`` for the reflection model — and audited
like any run: ``.chimera/runs/<run-id>/audit.jsonl`` and ``summary.json``.

Without ``--skill`` the round works on the scorecard's weakest capability (lowest Wilson lower
bound) that a skill with recorded failures covers, and prints it (``focus: ...``). The
recorded failures come from real runs: every run that showed a skill is a ledger line.

Undo: the previous version stays as ``.chimera/skills/<name>/v<N>.md``; ``chimera skills
rollback NAME`` puts it back (``demote`` or ``retire`` stop a version being retrieved).

Exit status: 0 the round ran (replaced, kept the parent, or nothing to refine); 2 bad usage
(no chain, unknown skill, too few failures, a budget below what the gate needs).
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from chimera.cli._base import Subparsers
from chimera.cli._progress import StepBar
from chimera.errors import UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "evolve",
        help="one bounded refinement round of a skill on its recorded failures (GEPA, gated)",
        description=(
            "Refine one skill with GEPA on its recorded failures (.chimera/skills/evals.jsonl) "
            "and replace it only through the transfer gate. Exit status: 0 the round ran, "
            "2 bad usage."
        ),
    )
    parser.add_argument("--chain", required=True, metavar="FILE", help="the benchmark chain")
    parser.add_argument("--skill", metavar="NAME", help="default: most recorded failures")
    parser.add_argument("--model", required=True, help="the reflection model (or scripted:PATH)")
    parser.add_argument(
        "--task-model",
        default="scripted",
        help="the model of the re-runs (default: the chain's scripted model)",
    )
    parser.add_argument("--max-metric-calls", type=int, default=30, metavar="N")
    parser.add_argument("--budget-tokens", type=int, default=50_000, metavar="N")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--by", metavar="NAME", help="who adopts what passes the gate (default: current user)"
    )
    parser.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.orchestration.evolve import EvolveRequest, evolve

    root = Path(args.root) if args.root else Path.cwd()
    if not root.is_dir():
        raise UsageError(f"--root {args.root}: not a directory")
    with StepBar("evolve", quiet=args.quiet) as bar:
        outcome = evolve(
            EvolveRequest(
                root=root,
                chain=Path(args.chain),
                model=args.model,
                task_model=args.task_model,
                skill=args.skill,
                max_metric_calls=args.max_metric_calls,
                budget_tokens=args.budget_tokens,
                seed=args.seed,
                by=args.by or getpass.getuser(),
                progress=bar,
            )
        )
    if outcome.summary is None or outcome.run_dir is None:
        sys.stdout.write("nothing to refine: no skill has recorded failures on this chain\n")
        return 0
    s = outcome.summary
    if s.get("focus"):
        sys.stdout.write(f"{s['focus']}\n")
    sys.stdout.write(
        f"{s['skill']}: {s['decision']}: {s['reason']}\n"
        f"re-runs: {s['metric_calls']} of {s['max_metric_calls']}; "
        f"run: {outcome.run_dir.relative_to(root.resolve()).as_posix()}\n"
    )
    return 0
