"""``chimera cascade-bench --tasks FILE``: a cascade's cost tail against its top model alone.

Runs every task of FILE through the cascade (inline in the file, or ``--cascade NAME`` from
``[tool.chimera.cascades]``) and, in the same run, on the top model alone; prints the cost
distribution (p50 / p95 / p99, mean, total), the tier that answered each task, the pass rate
of both sides against the task's gates, and which models it ran on. Keys come from the
environment (or ``.env``). The task-file format is in :mod:`chimera.economics.bench`.

This command ships without validation against real models in Chimera's own CI (which runs
it on stub models only, through ``bench/cascade.py``); its output names the models it used.

Exit status: 0 the bench ran; 2 bad usage, task file or configuration.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chimera.cli._base import Subparsers, err


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "cascade-bench",
        help="cost distribution of a cascade vs its top model alone on a task file",
        description=(
            "Run each task through the cascade and on the top model alone; report p50/p95/p99 "
            "cost, the tier that answered, and pass rates. Uses real models (keys from the "
            "environment)."
        ),
    )
    parser.add_argument("--tasks", metavar="FILE", required=True, help="the task file (YAML/JSON)")
    parser.add_argument("--cascade", metavar="NAME", help="a cascade from [tool.chimera.cascades]")
    parser.add_argument("--top-model", metavar="M", help="the baseline model (default: top tier)")
    parser.add_argument("--root", metavar="DIR", help="where the configuration is read from")
    parser.add_argument("--budget-usd", type=float, metavar="X")
    parser.add_argument("--budget-tokens", type=int, metavar="N")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no per-task lines on stderr")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.cli._base import resolve_root
    from chimera.config import load_config
    from chimera.economics.bench import load_bench_file, run_configured_bench
    from chimera.orchestration.session_factory import check_models
    from chimera.providers import budgeted_backend

    root = resolve_root(args.root)
    config = load_config(root).with_overrides(
        budget_usd=args.budget_usd, budget_tokens=args.budget_tokens
    )
    bench = load_bench_file(Path(args.tasks))
    report = run_configured_bench(
        bench,
        config,
        cascade_name=args.cascade,
        top_model=args.top_model,
        prepare=lambda models: check_models(root, config, models),
        backend_for=lambda m, budget: budgeted_backend(m, config, budget),
        progress=None if args.quiet else (lambda line: err(f"cascade-bench: {line}")),
    )
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write(report.render() + "\n")
    return 0
