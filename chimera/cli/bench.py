"""``chimera bench``: the measurement harnesses.

* ``chimera bench continuous [CHAIN]`` — a chain of tasks in one persistent workspace, memory
  on against off, paired (default chain: the shipped ``inflection`` chain).
* ``chimera bench ab register FILE`` / ``run NAME`` / ``report NAME`` — a pre-registered
  paired A/B comparison; ``register diff-feedback`` names the shipped registration and states
  the smallest effect its n can detect; ``run`` prints the audit head it sealed (and writes it
  to ``$GITHUB_STEP_SUMMARY``); ``report [--head HASH]`` refuses results an edit, a deletion
  or a re-run changed, with one line.

``--model scripted`` (the default) uses each task's generated scripted model: the numbers
then measure Chimera's bookkeeping, and every output says so. Any other ``--model`` is passed
to ``chimera solve`` and measures that model with Chimera.

Exit status: 0 done, 1 the A/B report could not be made yet, 2 bad usage or invalid input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from chimera.cli._base import Subparsers, err, write_text_atomic
from chimera.cli._progress import StepBar


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("bench", help="measurement harnesses (continuous, ab)")
    sub = parser.add_subparsers(dest="bench_command", required=True, metavar="HARNESS")
    cont = sub.add_parser("continuous", help="a task chain, memory on vs off, paired")
    cont.add_argument("chain", nargs="?", default="inflection", help="chain file or shipped name")
    cont.add_argument(
        "--focus",
        choices=["weakest"],
        help="run only the family the scorecard ranks weakest by lower bound",
    )
    cont.add_argument(
        "--outcomes", metavar="FILE", action="append", default=[],
        help="outcome files (from earlier --out runs) the scorecard reads",
    )  # fmt: skip
    _common(cont)
    cont.add_argument("--quiet", action="store_true", help="no progress on stderr")
    cont.set_defaults(handler=run_continuous_cmd)
    ab = sub.add_parser("ab", help="pre-registered paired A/B comparisons")
    ab_sub = ab.add_subparsers(dest="ab_command", required=True, metavar="STEP")
    reg = ab_sub.add_parser("register", help="record a registration before any run")
    reg.add_argument("file", help="registration YAML, or a shipped name (diff-feedback)")
    reg.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    reg.set_defaults(handler=ab_register)
    for step, handler in (("run", ab_run), ("report", ab_report)):
        p = ab_sub.add_parser(step, help=f"{step} a registered comparison")
        p.add_argument("name")
        _common(p)
        if step == "report":
            p.add_argument(
                "--head",
                metavar="HASH",
                help="an audit head recorded elsewhere (a job summary) the log must hold",
            )
        p.set_defaults(handler=handler)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="scripted", help="scripted (default) or a model name")
    p.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    p.add_argument("--out", metavar="DIR", help="where to write report files")
    p.add_argument("--workdir", metavar="DIR", help="where task workspaces go (default: temp)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")


def _chain_path(name: str) -> Path:
    from chimera.eval.ab import CHAINS

    shipped = CHAINS / name / "chain.yaml"
    return shipped if shipped.is_file() else Path(name)


def run_continuous_cmd(args: argparse.Namespace) -> int:
    from chimera.eval.chain import Chain
    from chimera.eval.continuous import run_continuous, seal_results
    from chimera.eval.maturity import Outcome, write_outcomes

    chain = Chain.load(_chain_path(args.chain))
    family = _weakest_family(args, chain) if args.focus else None
    with (
        tempfile.TemporaryDirectory(prefix="chimera-bench-") as tmp,
        StepBar(f"continuous {chain.name}", quiet=args.quiet) as bar,
    ):
        workdir = Path(args.workdir) if args.workdir else Path(tmp)
        report = run_continuous(chain, workdir, model=args.model, family=family, progress=bar)
    data = report.to_json()
    if args.out:
        out = Path(args.out)
        head = seal_results(data, out / "audit.jsonl")
        write_text_atomic(out / "continuous.json", json.dumps(data, indent=2) + "\n")
        write_text_atomic(out / "continuous.txt", report.render() + f"\naudit head {head}\n")
        write_text_atomic(out / "continuous.svg", report.svg())
        write_outcomes(
            out / "outcomes.jsonl",
            [Outcome("family", r.family, r.passed, f"bench:{r.task_id}") for r in report.on.runs],
        )
        err(f"chimera: wrote continuous.json, .txt, .svg, outcomes.jsonl and audit.jsonl to {out}")
        err(f"chimera: audit head {head}")
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with Path(summary).open("a", encoding="utf-8") as fh:
                fh.write(f"continuous bench `{chain.name}`: audit head `{head}`\n")
    sys.stdout.write(json.dumps(data, indent=2) + "\n" if args.json else report.render() + "\n")
    return 0


def _weakest_family(args: argparse.Namespace, chain: object) -> str | None:
    """The chain family the scorecard ranks weakest (printed with its interval), or ``None``
    when no family of the chain has recorded outcomes yet (then the whole chain runs)."""
    from chimera.eval.focus import choose_focus
    from chimera.eval.records import build_scorecard

    root = Path(args.root) if args.root else Path.cwd()
    card = build_scorecard(root, outcome_files=[Path(p) for p in args.outcomes])
    families = {t.family for t in chain.tasks}  # type: ignore[attr-defined]
    focus = choose_focus(card, {f: {("family", f)} for f in families})
    if focus is None:
        err("chimera: focus: no family of this chain has recorded outcomes; the whole chain runs")
        return None
    err(f"chimera: {focus.describe()}")
    sys.stdout.write(f"{focus.describe()}\n")
    return focus.candidate


def _store(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from chimera.eval.ab import ABStore

    return ABStore(Path(args.root) if args.root else Path.cwd())


def ab_register(args: argparse.Namespace) -> int:
    from chimera.eval.ab import SHIPPED

    shipped = SHIPPED / f"{args.file}.yaml"
    source = shipped if shipped.is_file() else Path(args.file)
    from chimera.stats import min_detectable_effect

    reg, new = _store(args).register(source)
    verb = "registered" if new else "already registered (same digest)"
    sys.stdout.write(f"{reg.name}: {verb}, digest {reg.digest()}\n")
    effect = min_detectable_effect(reg.n, reg.alpha, two_sided=True)
    if effect is None:
        sys.stdout.write(
            f"n = {reg.n} can never reach alpha {reg.alpha} with the exact McNemar test: "
            "register more tasks\n"
        )
    else:
        sys.stdout.write(
            f"smallest detectable effect at n = {reg.n}, alpha {reg.alpha}, 80% power: "
            f"+{effect:.0%} pass rate (even when no task gets worse; any that do need more)\n"
        )
    return 0


def ab_run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="chimera-ab-") as tmp:
        workdir = Path(args.workdir) if args.workdir else Path(tmp)
        store = _store(args)
        done = store.run(args.name, model=args.model, workdir=workdir)
    passed = sum(r.passed for r in done.values())
    head = store.recorded_head(args.name) or ""
    sys.stdout.write(f"{args.name}: {len(done)} task runs recorded ({passed} passed)\n")
    sys.stdout.write(f"audit head {head} (keep it: `bench ab report --head` checks it)\n")
    if args.model == "scripted":
        sys.stdout.write("scripted model: bookkeeping only, not a measurement of a model\n")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with Path(summary).open("a", encoding="utf-8") as fh:
            fh.write(f"A/B `{args.name}`: {len(done)} task runs; audit head `{head}`\n")
    return 0


def ab_report(args: argparse.Namespace) -> int:
    from chimera.eval.ab import render_report

    report = _store(args).report(args.name, model=args.model, head=args.head)
    if args.out:
        write_text_atomic(Path(args.out) / f"{args.name}.json", json.dumps(report, indent=2))
    sys.stdout.write(json.dumps(report, indent=2) + "\n" if args.json else render_report(report))
    return 0
