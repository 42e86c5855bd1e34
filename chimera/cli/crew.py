"""``chimera crew run FILE "TASK"`` and ``chimera crew check [FILE...]``.

``run``: the crew in FILE answers TASK — each role on its own budgeted backend, outputs
consolidated, live progress on stderr — then prints the crew's status, its answer and the
receipt (each role's tokens and cost, the crew's total, and with ``--baseline`` one agent alone
on the same task, measured). The run's audit log and ``crew.json`` go under
``.chimera/runs/<run-id>/``. Exit status: 0 completed; 1 partial, round limit or failed (the
answer printed is still the best the crew has); 2 bad usage or an invalid crew file.

``check``: validates crew files (default: every ``.chimera.d/crews/*.yaml``) in one pass and
prints every problem as ``file:line:col: message``. Exit status: 0 all valid, 2 any problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from chimera.cli._base import Subparsers, err
from chimera.errors import UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "crew",
        help="run or check a crew of roles (.chimera.d/crews/*.yaml)",
        description="Run a crew of roles on a task, or check crew files.",
    )
    sub = parser.add_subparsers(
        dest="crew_command", metavar="SUBCOMMAND", parser_class=type(parser)
    )
    run_p = sub.add_parser(
        "run",
        help="run the crew in FILE on TASK",
        description=(
            "Run the crew in FILE on TASK. Exit status: 0 completed, 1 partial / round limit / "
            "failed (the best answer is still printed), 2 bad usage or an invalid crew file."
        ),
    )
    run_p.add_argument("file", metavar="FILE")
    run_p.add_argument("task", metavar="TASK")
    run_p.add_argument("--model", help="roles' default model (else models.default, CHIMERA_MODEL)")
    run_p.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    run_p.add_argument("--budget-usd", type=float, metavar="X")
    run_p.add_argument("--budget-tokens", type=int, metavar="N")
    run_p.add_argument(
        "--baseline", action="store_true", help="also run one agent alone (the counterfactual)"
    )
    run_p.add_argument("--untrusted", action="store_true", help="TASK came from outside")
    run_p.add_argument(
        "--no-memory",
        action="store_true",
        help="the roles neither recall from nor write to the project's memory",
    )
    run_p.add_argument("--json", action="store_true", help="print crew.json instead")
    run_p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    run_p.set_defaults(handler=run)
    check_p = sub.add_parser(
        "check",
        help="validate crew files (default: .chimera.d/crews/*.yaml)",
        description="Validate crew files; every problem as file:line:col. Exit 0 valid, 2 not.",
    )
    check_p.add_argument("files", nargs="*", metavar="FILE")
    check_p.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    check_p.set_defaults(handler=check)
    parser.set_defaults(handler=_missing)


def _missing(args: argparse.Namespace) -> int:
    raise UsageError("crew: a subcommand is required (run, check); see 'chimera crew --help'")


def _root(value: str | None) -> Path:
    root = Path(value) if value else Path.cwd()
    if not root.is_dir():
        raise UsageError(f"--root {value}: not a directory")
    return root.resolve()


def check(args: argparse.Namespace) -> int:
    from chimera.crews.loader import check_crew_file, discover_crews

    root = _root(args.root)
    files = [Path(f) for f in args.files] or discover_crews(root)
    if not files:
        raise UsageError(f"no crew files: pass FILE or add .chimera.d/crews/*.yaml under {root}")
    bad = 0
    for path in files:
        if not path.is_file():
            raise UsageError(f"crew file not found: {path.as_posix()}")
        checked = check_crew_file(path)
        for problem in checked.problems:
            print(problem)
        if checked.definition is not None:
            d = checked.definition
            roles = ", ".join(r.name for r in d.roles)
            print(f"{d.source}: ok: crew '{d.name}' ({d.process.describe()}): {roles}")
        else:
            bad += 1
    if bad:
        err(f"chimera: {bad} of {len(files)} crew file(s) invalid")
    return 2 if bad else 0


def progress_line(event: str, f: dict[str, Any]) -> str | None:
    """The stderr line for one crew event (``None``: not shown)."""
    if event == "crew.started":
        return f"chimera: crew {f['crew']} ({f['kind']}): {', '.join(f['roles'])}"
    if event == "crew.role_started":
        return f"  round {f['round']}: {f['role']} working"
    if event == "crew.role":
        cost = "" if f.get("cost_usd") is None else f", ${f['cost_usd']:.6f}"
        stop = "" if f["outcome"] == "finished" else f" — stopped: {f['outcome']}"
        return f"  round {f['round']}: {f['role']} done ({f['total_tokens']} tokens{cost}){stop}"
    if event == "crew.consolidated":
        return (
            f"  consolidated {len(f['roles'])} output(s): {f['agreed']} agreed, "
            f"{f['conflicts']} disagreement(s), {f['unique']} unique, {f['repeats']} repeat(s) "
            f"dropped (~{f['tokens']} tokens)"
        )
    if event == "crew.budget_stop":
        return f"  {f['role']}: budget refused a call: {f['reason']}"
    if event == "crew.finished":
        return f"chimera: crew {f['crew']}: {f['status']} ({f['reason']})"
    return None


class _Progress:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        line = None if self.quiet else progress_line(event, fields)
        if line:
            err(line)


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.6f}"


def run(args: argparse.Namespace) -> int:
    from chimera.config import load_config
    from chimera.governance.sanitize import sanitize
    from chimera.orchestration.crews import CrewRunRequest, run_crew
    from chimera.orchestration.session_factory import SessionFactory

    root = _root(args.root)
    crew_path = Path(args.file)
    if not crew_path.is_file():
        raise UsageError(f"crew file not found: {crew_path.as_posix()}")
    task = sanitize(args.task).strip()
    if not task:
        raise UsageError("TASK is empty")
    config = load_config(root).with_overrides(
        model=args.model, budget_usd=args.budget_usd, budget_tokens=args.budget_tokens
    )
    models = [config.models.default] if config.models.default else []
    _, run_dir, audit = SessionFactory().open_record(root, config, models)
    request = CrewRunRequest(
        root=root,
        config=config,
        crew_path=crew_path,
        task=task,
        untrusted=args.untrusted,
        baseline=args.baseline,
        events=_Progress(args.quiet or args.json),
        memory=not args.no_memory,
    )
    outcome = run_crew(request, audit=audit, run_dir=run_dir)
    result = outcome.result
    code = 0 if result.status == "completed" else 1
    out = sys.stdout
    if args.json:
        out.write(json.dumps(outcome.document, indent=2) + "\n")
        return code
    out.write(f"crew {result.crew}: {result.status} — {result.reason}\n\n")
    # The document's answer: redacted like crew.json (the terminal is a CI job's log).
    out.write(str(outcome.document.get("answer", "")).rstrip("\n") + "\n\n")
    receipt = outcome.document["receipt"]
    out.write("Receipt:\n")
    for s in outcome.spend:
        cap = f" (ceiling {s.max_tokens} tokens)" if s.max_tokens else ""
        out.write(f"  {s.worker}: {s.tokens} tokens, {_usd(s.cost_usd)}{cap}\n")
    out.write(f"  crew: {receipt['crew_tokens']} tokens, {_usd(receipt['crew_cost_usd'])}\n")
    if receipt["baseline_measured"]:
        out.write(
            f"  one agent alone: {receipt['baseline_tokens']} tokens, "
            f"{_usd(receipt['baseline_cost_usd'])} ({receipt['baseline_outcome']}); "
            f"crew/alone tokens: {receipt['tokens_ratio']}\n"
        )
    else:
        out.write("  one agent alone: not measured (pass --baseline)\n")
    shown = run_dir.relative_to(root).as_posix() if run_dir.is_relative_to(root) else run_dir
    out.write(f"\nrun: {shown} (audit head {audit.head_hash})\n")
    return code
