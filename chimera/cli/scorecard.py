"""``chimera scorecard``: pass rates with intervals per capability, weakest first by lower bound.

Exit status: 0 printed (even with no recorded outcome), 2 bad usage or an invalid spec.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chimera.cli._base import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "scorecard",
        help="pass rates with Wilson intervals per requirement kind, task family and tool",
        description=(
            "Read the verified audit logs of .chimera/runs/ (and any --outcomes files written "
            "by the benchmarks) and print each capability's pass rate with its interval; the "
            "weakest are ranked by the interval's lower bound, never the point estimate."
        ),
    )
    parser.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    parser.add_argument("--spec", metavar="DIR", help="spec directory (default: ROOT/specs)")
    parser.add_argument(
        "--outcomes", metavar="FILE", action="append", default=[], help="outcome JSONL file"
    )
    parser.add_argument("--confidence", type=float, default=0.95, help="default 0.95")
    parser.add_argument("--weakest", type=int, default=5, metavar="N", help="default 5")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.eval.records import build_scorecard

    root = Path(args.root) if args.root else Path.cwd()
    card = build_scorecard(
        root,
        spec_dir=Path(args.spec) if args.spec else None,
        outcome_files=[Path(p) for p in args.outcomes],
        confidence=args.confidence,
    )
    if args.json:
        sys.stdout.write(json.dumps(card.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write(card.render(weakest=args.weakest) + "\n")
    return 0
