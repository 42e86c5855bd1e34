"""``chimera run``, ``resume``, ``approve`` and ``status``: project runs against the Spec.

``chimera run`` builds a task graph from the Spec (one card per unmet requirement), solves
ready cards with the AutonomousAgent, accepts each only through check_drift, and stops when
the goal holds or a stop fires. Live progress (a line per card and attempt) goes to stderr;
the final summary to stdout (``--json``: one JSON object).

Exit status:

====  ====================================================================================
0     aligned: the goal holds (task: its acceptance requirements pass, nothing regressed;
      no task: the whole Spec passes)
1     failed: cards failed or were blocked, or the task's acceptance requirements were
      rejected (the summary says which)
2     bad usage, invalid spec or configuration, no model
3     internal error
4     stopped by a budget (tokens or USD), the wall-time limit or the iteration limit
5     awaiting approval: a verified risky change is held for a human (``chimera approve``)
====  ====================================================================================
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.cli._base import Subparsers, memory_line, resolve_root, warn_tracked_state
from chimera.cli._progress import Progress
from chimera.cli._switches import add_part_switches, part_switches
from chimera.cli.run_agent import add_agent_flag
from chimera.errors import UsageError

if TYPE_CHECKING:
    from chimera.config import ChimeraConfig
    from chimera.orchestration.state import RunState

EXIT_ALIGNED = 0
EXIT_FAILED = 1
EXIT_STOPPED = 4
EXIT_AWAITING = 5


def register(subparsers: Subparsers) -> None:
    run = subparsers.add_parser(
        "run",
        help="run the project against its Spec until it holds (cards, verify, approve)",
        description=(
            "Turn the Spec green: one card per unmet requirement, each solved by the "
            "AutonomousAgent and accepted only by check_drift. With --task, the task's "
            "acceptance requirements (a ```chimera block in the text) are the goal."
        ),
    )
    run.add_argument(
        "--spec",
        action="append",
        metavar="PATH",
        help="spec file or directory, relative to --root (default: specs/)",
    )
    src = run.add_mutually_exclusive_group()
    src.add_argument("--task", metavar="TEXT", help="the task, in words")
    src.add_argument("--task-file", metavar="FILE", help="read the task from FILE")
    run.add_argument(
        "--untrusted",
        action="store_true",
        help="the task comes from outside (an issue): taint the run",
    )
    _common(run)
    run.add_argument("--max-iterations", type=int, metavar="N", help="card iterations")
    add_agent_flag(run, resume=False)
    run.add_argument("--budget-usd", type=float, metavar="X", help="USD budget of the run")
    run.add_argument("--budget-tokens", type=int, metavar="N", help="token budget of the run")
    run.add_argument("--max-attempts", type=int, metavar="N", help="attempts per card")
    run.add_argument(
        "--diff-feedback",
        action="store_true",
        default=None,
        help="show the reverted diff in retry prompts (off by default)",
    )
    run.add_argument("--escalate", metavar="M2,M3", help="escalation ladder after --model")
    run.add_argument("--run-id", metavar="ID", help="use this run id (default: generated)")
    run.add_argument(
        "--force",
        action="store_true",
        help="start even though an interrupted run has not been resumed",
    )
    run.add_argument(
        "--started-by",
        metavar="NAME",
        help="who started the run (default: $USER); approvers must differ",
    )
    guard = run.add_mutually_exclusive_group()
    guard.add_argument(
        "--guard",
        dest="guard",
        action="store_true",
        default=None,
        help="evaluate every tool call with the TrustKernel (default: on)",
    )
    guard.add_argument("--no-guard", dest="guard", action="store_false")
    run.set_defaults(handler=_run)

    resume = subparsers.add_parser("resume", help="continue a run after a crash or a stop")
    resume.add_argument("run_id", metavar="RUN_ID")
    _common(resume)
    add_agent_flag(resume, resume=True)
    resume.set_defaults(handler=_resume)

    approve = subparsers.add_parser(
        "approve", help="approve a run's held risky change and continue it"
    )
    approve.add_argument("run_id", metavar="RUN_ID")
    approve.add_argument("--by", required=True, metavar="NAME", help="who approves")
    _common(approve)
    add_agent_flag(approve, resume=True)
    approve.set_defaults(handler=_approve)

    status = subparsers.add_parser("status", help="show where a run stands (default: latest)")
    status.add_argument("run_id", nargs="?", metavar="RUN_ID")
    status.add_argument("--root", metavar="DIR", help="repository root (default: cwd)")
    status.add_argument("--json", action="store_true", help="print the run state as JSON")
    status.add_argument("--all", action="store_true", help="list every run")
    status.set_defaults(handler=_status)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", metavar="DIR", help="repository root (default: cwd)")
    parser.add_argument(
        "--model", metavar="M", help="model (LiteLLM name or scripted:PATH); default from config"
    )
    parser.add_argument("--json", action="store_true", help="print the final state as JSON")
    parser.add_argument("--quiet", action="store_true", help="no live progress on stderr")
    # A run does not record these: a resume or an approval says them again.
    add_part_switches(
        parser, memory_help="neither recall nor record memories (.chimera/memory.db, experience)"
    )


def _root(args: argparse.Namespace) -> Path:
    return resolve_root(args.root)


def exit_code(state: RunState) -> int:
    """The documented exit status for a run's state (module docstring)."""
    from chimera.orchestration.state import RunStatus

    if state.status is RunStatus.DONE:
        return EXIT_ALIGNED
    if state.status is RunStatus.AWAITING_APPROVAL:
        return EXIT_AWAITING
    if state.status is RunStatus.STOPPED:
        return EXIT_STOPPED
    return EXIT_FAILED


def render_summary(state: RunState, *, sandbox: str | None = None) -> str:
    """The human summary of a run: outcome, stop reason, cards, usage, audit head."""
    lines = [
        f"run {state.run_id}: {state.status.value}"
        + (f" — {state.stop_reason.value}" if state.stop_reason else ""),
    ]
    if state.stop_detail:
        lines.append(f"  {state.stop_detail}")
    lines.append(
        f"  mode: {state.mode}; started by {state.started_by}"
        + ("; tainted (untrusted task)" if state.tainted else "")
    )
    if state.rejected_acceptance:
        for rid, why in state.rejected_acceptance.items():
            lines.append(f"  rejected acceptance requirement {rid}: {why}")
    if state.cards:
        lines.append("  cards:")
        for card in state.cards:
            note = card["notes"][-1] if card.get("notes") else ""
            lines.append(f"    {card['status']:<18} {card['id']:<28} {note}")
    if state.unrelated_red:
        lines.append(f"  red on the base, not part of the task: {', '.join(state.unrelated_red)}")
    if state.pending_approval:
        lines.append(
            f"  awaiting approval: {', '.join(state.pending_approval)} "
            f"(chimera approve {state.run_id} --by NAME)"
        )
    cost = "unknown" if state.cost_usd is None else f"${state.cost_usd:.4f}"
    lines.append(
        f"  iterations {state.iterations}; tokens {state.tokens}; cost {cost}; "
        f"{state.elapsed_s:.1f}s"
    )
    lines.append(f"  sandbox: {sandbox or state.sandbox_mode or 'unknown'}")
    if state.denied_actions:
        blocked = sum(1 for d in state.denied_actions if d.get("verdict") == "block")
        held = len(state.denied_actions) - blocked
        lines.append(
            f"  actions denied: {len(state.denied_actions)} "
            f"({blocked} blocked, {held} held for review)"
        )
        for d in state.denied_actions[:10]:
            lines.append(f"    - {d.get('summary') or d}")
    lines.append(f"  audit head: {state.audit_head or '(empty)'}")
    return "\n".join(lines)


def _report(
    state: RunState,
    args: argparse.Namespace,
    sandbox: str | None = None,
    parts: dict[str, Any] | None = None,
) -> int:
    if args.json:
        sys.stdout.write(json.dumps(state.model_dump(mode="json"), indent=2) + "\n")
    else:
        sys.stdout.write(render_summary(state, sandbox=sandbox) + "\n")
        line = memory_line((parts or {}).get("memory"))
        if line:
            sys.stdout.write(f"  {line}\n")
    return exit_code(state)


def _config(root: Path, **overrides: Any) -> ChimeraConfig:
    from chimera.config import load_config

    return load_config(root).with_overrides(**overrides)


def _run(args: argparse.Namespace) -> int:
    import getpass

    from chimera.cli.run_agent import start_profile, start_recorded
    from chimera.orchestration.session_factory import resolve_model
    from chimera.orchestration.surfaces import RunRequest

    root = _root(args)
    warn_tracked_state(root)
    config = _config(
        root,
        model=args.model,
        escalate=args.escalate,
        max_attempts=args.max_attempts,
        diff_feedback=args.diff_feedback,
        budget_usd=args.budget_usd,
        budget_tokens=args.budget_tokens,
    )
    if args.max_iterations is not None:
        if args.max_iterations < 1:
            raise UsageError("--max-iterations must be at least 1")
        # Through with_overrides: an --agent profile rebuilds the configuration from the
        # values set, and an assigned field of an unset section would be lost.
        config = config.with_overrides(run__max_iterations=args.max_iterations)
    task: str | None = args.task
    if args.task_file:
        try:
            task = Path(args.task_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--task-file {args.task_file}: {exc.strerror or exc}") from exc
    # Read and hashed before the run, and recorded: resume and approve re-apply it.
    agent, record = start_profile(root, args.agent)
    outcome = start_recorded(
        RunRequest(
            root=root,
            config=config,
            model=resolve_model(args.model or (agent.fields.model if agent else None), config),
            agent=agent,
            started_by=args.started_by or getpass.getuser(),
            spec_paths=tuple(args.spec or ["specs"]),
            task=task,
            untrusted=args.untrusted,
            run_id=args.run_id,
            force=args.force,
            guard=args.guard,
            events=Progress(args.quiet, nested=True),
            **part_switches(args),
        ),
        record,
    )
    return _report(outcome.state, args, outcome.sandbox, outcome.parts)


def _resume(args: argparse.Namespace) -> int:
    return _continue(args)


def _approve(args: argparse.Namespace) -> int:
    return _continue(args, by=args.by)


def _continue(args: argparse.Namespace, *, by: str | None = None) -> int:
    """``resume`` (no ``by``) or ``approve --by NAME``: one request, the same reopened session,
    under the profile the run started with."""
    from chimera.cli.run_agent import resume_profile
    from chimera.orchestration.surfaces import ResumeRequest, approve_run, resume_run

    root = _root(args)
    warn_tracked_state(root)
    agent = resume_profile(root, args.run_id, args.agent)
    request = ResumeRequest(
        root=root,
        config=_config(root, model=args.model),
        run_id=args.run_id,
        model=args.model,
        events=Progress(args.quiet, nested=True),
        agent=agent,
        **part_switches(args),
    )
    outcome = resume_run(request) if by is None else approve_run(request, by=by)
    return _report(outcome.state, args, outcome.sandbox, outcome.parts)


def _status(args: argparse.Namespace) -> int:
    from chimera.orchestration.state import STATE_FILE, RunStore

    root = _root(args)
    store = RunStore(root)
    ids = store.record_ids()
    if not ids:
        raise UsageError(f"no runs under {store.base}")
    if args.all:
        interrupted = set(store.interrupted())
        for rid in ids:
            if (store.run_dir(rid) / STATE_FILE).is_file():
                st = store.load(rid)
                reason = f" ({st.stop_reason.value})" if st.stop_reason else ""
                note = f"  interrupted: chimera resume {rid}" if rid in interrupted else ""
                sys.stdout.write(f"{rid}  {st.status.value}{reason}  {st.mode}{note}\n")
            else:
                kind, outcome, _ = _other_run(store.run_dir(rid))
                sys.stdout.write(f"{rid}  {outcome}  {kind}\n")
        return 0
    run_id = args.run_id or ids[-1]
    if not (store.run_dir(run_id) / STATE_FILE).is_file():
        if run_id not in ids:
            store.load(run_id)  # the "no run ... (recent: ...)" usage error
        kind, outcome, summary = _other_run(store.run_dir(run_id))
        if args.json:
            sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        else:
            sys.stdout.write(_render_other(run_id, kind, outcome, summary) + "\n")
        return 0
    state = store.load(run_id)
    if args.json:
        sys.stdout.write(json.dumps(state.model_dump(mode="json"), indent=2) + "\n")
    else:
        sys.stdout.write(render_summary(state) + "\n")
        if run_id in store.interrupted():
            sys.stdout.write(
                f"  interrupted: no process is working on it; continue with "
                f"'chimera resume {run_id}'\n"
            )
    return 0


def _other_run(run_dir: Path) -> tuple[str, str, dict[str, Any]]:
    """``(kind, outcome, summary)`` of a ``solve`` or ``ask`` run's folder.

    Without a readable ``summary.json`` (written at the end) the run is still going or was
    interrupted: ``("run", "incomplete", {})``.
    """
    from chimera.orchestration.state import SUMMARY_FILE

    try:
        summary = json.loads((run_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "run", "incomplete", {}
    if not isinstance(summary, dict):
        return "run", "incomplete", {}
    if "question" in summary:
        return "ask", "verified" if summary.get("evidence") else "unverified", summary
    return "solve", str(summary.get("outcome", "unknown")), summary


def _render_other(run_id: str, kind: str, outcome: str, summary: dict[str, Any]) -> str:
    if not summary:
        return (
            f"run {run_id}: incomplete — no summary yet (still running, or interrupted; "
            "a solve or ask run cannot be resumed)"
        )
    lines = [f"{kind} {run_id}: {outcome}"]
    if kind == "ask":
        lines.append(f"  question: {summary.get('question', '')}")
    else:
        report = str(summary.get("final_report", "")).splitlines()
        lines += [f"  {line}" for line in report if not line.startswith("outcome:")]
    lines.append(f"  audit head: {summary.get('audit_head') or '(empty)'}")
    return "\n".join(lines)
