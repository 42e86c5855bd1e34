"""``chimera demo``: the whole loop on a bundled project, with a scripted model (no key).

It copies a tiny ledger library with a red Spec to a temporary folder and runs
``chimera run`` on it, replaying a bundled script of model turns. A newcomer sees, in about
a minute and without a key or network:

1. a red Spec turned green card by card, each accepted only by check_drift;
2. a wrong first attempt reverted, and its failure record carried into the retry prompt;
3. a ``risk: high`` change (a database migration) verified and held for a human, then
   approved by someone other than the person who started the run;
4. the audit log's hash chain verified against the head recorded in the run state.

The demo runs the agent engine, so it needs the ``agent`` extra: before anything else (no
folder made, nothing printed on stdout) it looks each of the extra's top-level modules up
(:data:`AGENT_MODULES`, found without importing them) and, when one is missing, says in one line
on stderr which install command to run, with exit status 2.

Exit status 0 when all four happened as described; 1 otherwise (the output says where); 2 when
the agent extra is missing, or when the strict sandbox (bubblewrap) cannot start, with the line
that installs it and the demo's own opt-out, ``--sandbox scrubbed`` (an allowlisted environment
only, labelled weaker in the output). The temporary project is removed at the end unless
``--dir`` or ``--keep`` is given.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from chimera.cli._base import Subparsers, err
from chimera.errors import ChimeraError, SandboxError

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
AGENT_MODULES = ("litellm", "github", "cronsim", "unidiff", "dotenv", "jsonschema")
"""The top-level modules of the ``agent`` extra's distributions (pyproject.toml; a unit test
keeps the two lists equal)."""
NEEDS_AGENT = "chimera demo runs the agent engine: pip install 'pytest-chimera[agent]'"
STARTED_BY = "demo-user"
APPROVER = "demo-reviewer"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help=(
            "run the whole loop on a bundled example with a scripted model (no key needed; "
            "needs the agent extra)"
        ),
        description=(
            "Copy a small example project to a temporary folder and run Chimera on it with a "
            "bundled scripted model: red spec → green, a reverted attempt carried forward, a "
            "risk: high pause and its approval, the audit log verified. It runs the agent "
            "engine: pip install 'pytest-chimera[agent]'."
        ),
    )
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help="create the demo project here (must not exist; default: a temp dir)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the temporary project and its run folder (--dir always keeps them)",
    )
    parser.add_argument(
        "--sandbox",
        choices=("strict", "scrubbed"),
        default="strict",
        help=(
            "strict: bubblewrap, fails closed when it cannot start (default); scrubbed: an "
            "allowlisted environment only, no isolation (weaker), for a machine without "
            "bubblewrap"
        ),
    )
    parser.add_argument("--quiet", action="store_true", help="no live progress on stderr")
    parser.set_defaults(handler=_demo)


def write_project(target: Path) -> None:
    """Write the bundled demo project to ``target`` and commit it as a git repository."""
    import yaml

    data = yaml.safe_load((DEMO_DIR / "project.yaml").read_text(encoding="utf-8"))
    for rel, content in data["files"].items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    git = ["git", "-c", "user.name=Chimera demo", "-c", "user.email=demo@example.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "ledger: initial version"]):
        subprocess.run([*git, *cmd], cwd=target, check=True, capture_output=True)


class _Watch:
    """Collects the events the demo narrates, and prints progress."""

    def __init__(self, quiet: bool) -> None:
        from chimera.cli._progress import Progress

        self.progress = Progress(quiet, nested=True)
        self.attempts: list[dict[str, Any]] = []
        self.injections = 0

    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        if event == "attempt":
            self.attempts.append(fields)
        if event == "history_injected":
            self.injections += 1
        self.progress(event, fields)


NO_BWRAP = (
    "bubblewrap (the strict sandbox) cannot start here ({reason}): install it "
    "(sudo apt-get install bubblewrap), or run the demo without isolation: "
    "chimera demo --sandbox scrubbed (weaker)"
)


def missing_agent_modules() -> list[str]:
    """The modules of :data:`AGENT_MODULES` the interpreter cannot find (none imported)."""
    import importlib.util

    return [name for name in AGENT_MODULES if importlib.util.find_spec(name) is None]


def _demo(args: argparse.Namespace) -> int:
    if missing_agent_modules():
        # Before any folder or output: the extra's absence would otherwise surface mid-run,
        # named after whichever internal step first imported one of its packages.
        err(NEEDS_AGENT)
        return 2
    if args.dir:
        root = Path(args.dir)
        if root.exists():
            raise ChimeraError(f"--dir {args.dir}: already exists; choose a new folder")
        root.mkdir(parents=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="chimera-demo-"))
    root = root.resolve()
    keep = bool(args.dir or args.keep)
    try:
        return _run_demo(args, root, keep)
    except SandboxError as exc:
        reason = str(exc).split(";")[0].removeprefix("the strict sandbox cannot start: ")
        raise ChimeraError(NO_BWRAP.format(reason=reason)) from exc
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def _run_demo(args: argparse.Namespace, root: Path, keep: bool) -> int:
    from chimera.config import ChimeraConfig
    from chimera.config.model import SandboxConfig
    from chimera.governance.audit import verify_audit_log
    from chimera.orchestration.state import RunStatus
    from chimera.orchestration.surfaces import ResumeRequest, RunRequest, approve_run, start_run

    out = sys.stdout
    out.write(
        "Chimera demo — the model is SCRIPTED: its turns are replayed from "
        f"{DEMO_DIR / 'script.yaml'} (no key, no network).\n"
        f"Project: a tiny ledger library in {root}\n\n"
    )
    write_project(root)
    watch = _Watch(args.quiet)
    strict = args.sandbox == "strict"
    config = ChimeraConfig(sandbox=SandboxConfig(mode="bwrap" if strict else "scrubbed"))
    model = f"scripted:{DEMO_DIR / 'script.yaml'}"
    run = start_run(
        RunRequest(
            root=root,
            config=config,
            model=model,
            started_by=STARTED_BY,
            run_id="demo",
            events=watch,
        )
    )
    state = run.state
    from chimera.cli.run import render_summary

    # The sandbox's full description once (in the first summary); later summaries name the mode.
    if not strict:
        out.write(
            "WEAKER: --sandbox scrubbed runs the model's commands with an allowlisted "
            "environment only: no namespace, no filesystem or network isolation.\n\n"
        )
    out.write("== 1. The run pauses at the human checkpoint\n")
    out.write(render_summary(state, sandbox=run.sandbox) + "\n\n")
    ok = True
    if state.status is not RunStatus.AWAITING_APPROVAL:
        err("chimera demo: expected the run to pause for approval; it did not")
        ok = False
    reverted = [a for a in watch.attempts if a.get("verdict") != "passed"]
    out.write("== 2. A wrong first attempt, reverted and carried forward\n")
    if reverted and watch.injections:
        first = reverted[0]
        out.write(
            f"  attempt {first.get('number')}: {first.get('verdict')} — {first.get('cause')}\n"
        )
        out.write(
            f"  the retry prompt carried that record ({watch.injections} injection(s); "
            "see history_injected in the audit log)\n\n"
        )
    else:
        err("chimera demo: expected a reverted attempt carried into the retry prompt")
        ok = False
    if state.status is RunStatus.AWAITING_APPROVAL:
        out.write(f"== 3. {APPROVER} approves (the run was started by {STARTED_BY})\n")
        again = ResumeRequest(
            root=root, config=config, run_id=state.run_id, model=model, events=watch
        )
        approved = approve_run(again, by=APPROVER)
        state = approved.state
        out.write(render_summary(state) + "\n\n")
        if state.status is not RunStatus.DONE:
            err("chimera demo: the approved run did not reach its goal")
            ok = False
    check = verify_audit_log(run.audit_path, head=state.audit_head)
    out.write("== 4. The audit log\n")
    if check.ok:
        out.write(
            f"  {run.audit_path}: {check.count} events, hash chain verified, "
            f"head {check.head_hash}\n"
        )
    else:
        ok = False
        for problem in check.problems:
            err(f"chimera demo: audit: {problem}")
    if keep:
        out.write(f"\nThe project and its run folder stay in {root} (.chimera/runs/demo).\n")
    else:
        out.write(f"\nRemoved {root} (keep the project with --keep or --dir DIR).\n")
    out.write("demo: " + ("every step happened as described\n" if ok else "FAILED\n"))
    return 0 if ok else 1
