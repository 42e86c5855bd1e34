"""``chimera meta``: agents that design agents.

``chimera meta design TASKS.yaml -o PROFILE.yaml`` runs a budgeted designer on a task family,
runs each candidate profile on every task, checks held-out requirements only after a
candidate's runs are over, reports visible and held-out pass rates (Wilson intervals) and the
gap, and writes the candidate best on held-out. ``chimera meta check PROFILE.yaml ...``
validates profiles (every problem, ``file:line:col``). Exit status: 0 a profile was chosen
(``check``: every file valid), 1 none was (``check``: a file has problems), 2 bad usage or an
invalid family file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.cli._base import Subparsers, err, resolve_root, shown
from chimera.cli._progress import Progress, StepBar
from chimera.errors import UsageError

if TYPE_CHECKING:
    from chimera.meta.profile import Profile


def register(subparsers: Subparsers) -> None:
    meta = subparsers.add_parser(
        "meta",
        help="design agent profiles for a task family, judged on held-out requirements",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    sub = meta.add_subparsers(dest="meta_command", required=True, metavar="ACTION")
    design = sub.add_parser("design", help="design, run and measure candidate profiles")
    design.add_argument("tasks", metavar="TASKS.yaml", help="the task family")
    design.add_argument(
        "-o", "--output", required=True, metavar="PROFILE.yaml", help="the chosen profile"
    )
    design.add_argument("--model", help="the designer's model (else the family's, the config's)")
    design.add_argument("--root", metavar="DIR", help="where the run folder goes (default: .)")
    design.add_argument(
        "--sandbox", choices=("auto", "bwrap", "scrubbed"), help="sandbox mode of every check"
    )
    design.add_argument(
        "--task-timeout", type=float, default=600.0, metavar="S", help="seconds per task run"
    )
    design.add_argument("--json", action="store_true", help="print meta.json instead")
    design.add_argument("--quiet", action="store_true", help="no live progress on stderr")
    design.set_defaults(handler=run_design)
    check = sub.add_parser("check", help="validate profile files")
    check.add_argument("profiles", nargs="+", metavar="PROFILE.yaml")
    check.set_defaults(handler=run_check)


def agent_profile(path: str | None) -> Profile | None:
    """``--agent PATH`` of ``solve`` and ``run``: the validated profile (``None`` without one).

    Raises:
        UsageError: no such file.
        ProfileError: the profile is invalid (every problem at ``file:line:col``).
    """
    if path is None:
        return None
    from chimera.meta.loader import load_profile

    if not Path(path).is_file():
        raise UsageError(f"--agent {path}: no such file")
    return load_profile(Path(path))


def run_design(args: argparse.Namespace) -> int:
    from chimera.config import load_config
    from chimera.meta.report import render_text
    from chimera.orchestration.meta import DesignRequest, design_agent

    root = resolve_root(args.root)
    tasks = Path(args.tasks)
    if not tasks.is_file():
        raise UsageError(f"{args.tasks}: no such file")
    config = load_config(root).with_overrides(sandbox=args.sandbox)
    with StepBar("meta design", quiet=args.quiet) as bar:
        outcome = design_agent(
            DesignRequest(
                root=root,
                config=config,
                tasks_path=tasks.resolve(),
                output=Path(args.output).resolve(),
                model=args.model,
                task_timeout=args.task_timeout,
                events=Progress(args.quiet),
                progress=bar,
            )
        )
    out = sys.stdout
    if args.json:
        out.write(json.dumps(outcome.document, indent=2) + "\n")
    else:
        used = outcome.design.output
        if used is not None and used.error:
            out.write(f"designer stopped ({used.outcome}): {used.error}\n")
        for label, problems in outcome.design.rejected:
            out.write(f"rejected {label}: {'; '.join(problems)}\n")
        out.write(render_text(outcome.reports, outcome.chosen) + "\n")
        if outcome.chosen is not None:
            out.write(f"wrote {args.output}\n")
        out.write(f"report: {shown(outcome.run_dir / 'meta.json', root)}\n")
    return 0 if outcome.chosen is not None else 1


def run_check(args: argparse.Namespace) -> int:
    from chimera.meta.loader import check_profile_file

    bad = 0
    for name in args.profiles:
        checked = check_profile_file(Path(name))
        if checked.profile is None:
            bad += 1
            for problem in checked.problems:
                err(str(problem))
        else:
            p = checked.profile
            tools = ", ".join(p.tools) or "none"
            sys.stdout.write(f"{name}: ok ({p.name}: {p.kind.describe()}; tools {tools})\n")
    return 1 if bad else 0
