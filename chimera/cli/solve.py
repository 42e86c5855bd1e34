"""``chimera solve "TASK" --verify specs/``: one verify-or-revert run of the AutonomousAgent.

The Spec decides: the targets (``--target``, default every requirement red now) must pass
and every requirement that passes now must still pass. Live progress goes to stderr, one line
per step and per attempt; the final summary (outcome, attempts, tokens, cost or "unknown",
diff stats, sandbox mode) goes to stdout.

Exit status: 0 only when verification passed with a real change (``solved``); 1 for any
other outcome (``failed``, ``hollow``, ``budget``, ``error``: the summary names which); 2 for
bad usage, an invalid spec or configuration, or no model.

Model: ``--model``, else ``[tool.chimera.models] default``, else ``CHIMERA_MODEL``.
``--model scripted:PATH`` replays a script (no key needed). ``--escalate M2,M3`` adds ladder
rungs after the model. Run files go under ``.chimera/runs/<run-id>/``: ``transcript.jsonl``,
``audit.jsonl``, ``snapshots/``, ``attempts/<n>.diff`` and ``summary.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chimera.cli._base import Subparsers, err, write_text_atomic
from chimera.cli._progress import Progress
from chimera.errors import UsageError

MODEL_ENV = "CHIMERA_MODEL"  # as chimera.orchestration.engine_setup (kept light: no import)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "solve",
        help="change the tree until the Spec's target requirements pass (verify-or-revert)",
        description=(
            "Run the AutonomousAgent on TASK: plan, act with sandboxed tools, review, verify "
            "with the Spec, revert and retry with the failure carried forward. Exit status: "
            "0 solved (verified, with a real change), 1 any other outcome, 2 bad usage."
        ),
    )
    parser.add_argument("task", metavar="TASK", help="what to do, in words")
    parser.add_argument(
        "--verify",
        metavar="SPEC_PATH",
        action="append",
        help="spec file or directory (repeatable; default: specs/ under --root)",
    )
    parser.add_argument(
        "--target",
        metavar="ID",
        action="append",
        help="requirement that must pass (repeatable; default: every requirement red now)",
    )
    parser.add_argument("--model", help=f"model name or scripted:PATH (else config, {MODEL_ENV})")
    parser.add_argument(
        "--escalate", metavar="M2,M3", help="stronger models to escalate to, comma-separated"
    )
    parser.add_argument("--max-attempts", type=int, metavar="N")
    parser.add_argument("--max-steps", type=int, metavar="N", help="tool-loop steps per attempt")
    parser.add_argument(
        "--diff-feedback",
        action="store_true",
        default=None,
        help="show each failed attempt's (capped) diff in the retry prompt (off by default)",
    )
    parser.add_argument("--budget-usd", type=float, metavar="X")
    parser.add_argument("--budget-tokens", type=int, metavar="N")
    parser.add_argument(
        "--sandbox", choices=("auto", "bwrap", "scrubbed"), help="sandbox mode (default auto)"
    )
    parser.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    parser.add_argument(
        "--untrusted",
        action="store_true",
        help="the task text comes from outside (an issue): record the run as tainted",
    )
    parser.add_argument(
        "--guard",
        action="store_true",
        help="evaluate every tool call with the TrustKernel first (implied by --untrusted)",
    )
    parser.add_argument(
        "--no-review", action="store_true", help="skip the manager review of each attempt"
    )
    parser.add_argument(
        "--no-memory",
        action="store_true",
        help="neither recall nor record earlier attempts (.chimera/experience.jsonl)",
    )
    parser.add_argument("--quiet", action="store_true", help="no live progress on stderr")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.config import load_config

    root = Path(args.root) if args.root else Path.cwd()
    if not root.is_dir():
        raise UsageError(f"--root {args.root}: not a directory")
    root = root.resolve()
    config = load_config(root).with_overrides(
        model=args.model,
        escalate=args.escalate,
        max_attempts=args.max_attempts,
        max_steps=args.max_steps,
        diff_feedback=args.diff_feedback,
        budget_usd=args.budget_usd,
        budget_tokens=args.budget_tokens,
        sandbox=args.sandbox,
    )
    from chimera.orchestration.engine_setup import prepare_engine, resolve_model

    model = resolve_model(None, config)

    from chimera.spec.loader import discover_spec_files, load_spec

    spec_paths = [Path(p) for p in args.verify] if args.verify else [root / "specs"]
    files = discover_spec_files(spec_paths)
    if not files:
        shown = ", ".join(str(p) for p in spec_paths)
        raise UsageError(f"--verify: no spec files (*.yaml, *.yml) in {shown}")
    spec = load_spec(files)

    from chimera.core.autonomous import AutonomousAgent
    from chimera.governance.audit import AuditLog
    from chimera.memory.experience import ExperienceBuffer

    known = {r.id for r in spec.requirements}
    unknown = [t for t in args.target or () if t not in known]
    if unknown:
        raise UsageError(f"--target: unknown requirement id(s): {', '.join(unknown)}")
    # Everything that can refuse (a missing key, a budget without a price, the sandbox mode)
    # is checked before the run folder exists, so a usage error leaves nothing behind.
    prepared = prepare_engine(root, config, model)
    from chimera.orchestration.state import new_run_id

    run_id = new_run_id()  # the same form as chimera run's
    run_dir = root / ".chimera" / "runs" / run_id
    audit = AuditLog(run_dir / "audit.jsonl", run_id)
    engine = prepared.bind(audit=audit, run_dir=run_dir, run_id=run_id)
    sandbox = engine.sandbox
    progress = Progress(args.quiet)
    if not args.quiet:
        err(f"chimera: run {run_id} (files in {_shown(run_dir, root)}), sandbox {sandbox.mode}")
    from chimera.governance.wiring import tool_governance

    wrapper, guards = tool_governance(
        root,
        audit,
        guard=args.guard,
        untrusted=args.untrusted,
        task=args.task,
        trusted_commands=[
            run for r in spec.requirements if isinstance(run := getattr(r.check, "run", None), str)
        ],
        run_id=run_id,
    )
    agent = AutonomousAgent(
        engine.ladder,
        tool_wrapper=wrapper,
        workspace=root,
        spec=spec,
        runner=sandbox,
        run_dir=run_dir,
        audit=audit,
        config=config.agent,
        experience=None
        if args.no_memory
        else ExperienceBuffer(root / ".chimera" / "experience.jsonl"),
        on_event=progress,
        review=not args.no_review,
        output_limit=config.tools.output_limit,
        big_planner=engine.big_planner,
    )
    from chimera.orchestration.state import workspace_lock

    with workspace_lock(root, owner=f"solve {run_id}"):
        result = agent.solve(args.task, args.target, untrusted=args.untrusted)
    denied = [d.to_dict() for g in guards for d in g.denied]
    summary = result.to_json()
    summary.update(
        {
            "run_id": run_id,
            "audit_head": audit.head_hash,
            "model": result.model,
            "guard": bool(args.guard or args.untrusted),
            "denied_actions": denied,
        }
    )
    write_text_atomic(run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    out = sys.stdout
    out.write(result.final_report.rstrip("\n") + "\n")
    if denied:
        blocked = sum(1 for d in denied if d["verdict"] == "block")
        out.write(
            f"actions denied: {len(denied)} ({blocked} blocked, "
            f"{len(denied) - blocked} held for review)\n"
        )
        for d in denied[:10]:
            out.write(f"  - {d['action']}: {d['reason']}\n")
    out.write(f"run: {_shown(run_dir, root)} (audit head {audit.head_hash[:16]})\n")
    return 0 if result.ok else 1


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
