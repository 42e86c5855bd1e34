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
import sys
from pathlib import Path

from chimera.cli._base import Subparsers, memory_line, resolve_root, shown, warn_tracked_state
from chimera.cli._progress import Progress
from chimera.cli._switches import add_part_switches, part_switches

MODEL_ENV = "CHIMERA_MODEL"  # as chimera.orchestration.session_factory (kept light: no import)


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
    add_part_switches(
        parser,
        memory_help=(
            "neither recall nor record earlier attempts (.chimera/experience.jsonl, memory)"
        ),
    )
    parser.add_argument(
        "--agent",
        metavar="PROFILE.yaml",
        help="an agent profile (chimera meta design): its model, budget, tools, instructions",
    )
    parser.add_argument("--quiet", action="store_true", help="no live progress on stderr")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.cli.meta import agent_profile
    from chimera.config import load_config
    from chimera.orchestration.surfaces import SolveRequest, solve

    root = resolve_root(args.root)
    warn_tracked_state(root)
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
    request = SolveRequest(
        root=root,
        config=config,
        task=args.task,
        spec_paths=tuple(Path(p) for p in args.verify) if args.verify else (root / "specs",),
        targets=tuple(args.target or ()),
        untrusted=args.untrusted,
        guard=args.guard,
        review=not args.no_review,
        events=Progress(args.quiet),
        agent=agent_profile(args.agent),
        **part_switches(args),
    )
    outcome = solve(request)
    result, denied = outcome.result, outcome.denied
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
    line = memory_line(outcome.summary.get("memory"))
    if line:
        out.write(line + "\n")
    out.write(f"run: {shown(outcome.run_dir, root)} (audit head {outcome.audit_head})\n")
    return 0 if result.ok else 1
