"""``chimera action``: the GitHub Action's entry point (``action.yml`` runs it in every mode).

Modes (``--mode``):

* ``check`` — the spec check of CI (``chimera check --format github``: annotations).
* ``decide`` — the gate job before the agent (token: ``issues: write``; no LLM key): decides
  from the event, makes the API checks (the labeller's permission, the issue's state, an
  existing Chimera PR, an approval's head commit), explains a refusal on the issue, and asks
  the ChangeQueue for a slot (``chimera:running``) or queues the issue (``chimera:queued``
  plus a comment). Output ``proceed`` says whether the agent job runs.
* ``agent`` — the run (the LLM key; a read-only token): a new run for an issue, a resume
  after an approval (the paused run's folder is downloaded from the earlier workflow run's
  artifact, located through the PR body's marker, then approved), or a re-run with a
  review's text as tainted feedback. It writes the artifacts folder (outcome, run report,
  patch, run folder, audit summary) and the job summary; it never writes to GitHub.
* ``verify`` — the patch judged from the base commit in the strict sandbox
  (``contents: read``, no secret but the held-out specs); outputs ``{base_sha,
  patch_sha256, spec_digest, verdict}``. See :mod:`chimera.github.jobs.verify`.
* ``publish`` — apply, scan, push, open or update the PR, label, comment (``GITHUB_TOKEN``;
  no LLM key), from decide's and verify's outputs only; the branch stores (memory, learning,
  the journal's finish) with ``CHIMERA_STORE_TOKEN`` when set (the App's token, so GitHub
  signs them). See :mod:`chimera.github.publish.publish`.
* ``start-ci`` — after a write-access person other than the trigger approves the PR's head
  commit, the App token closes and reopens the PR so CI starts on the approved commit.
* ``drain`` — cancellations (a Chimera PR closed unmerged, the label removed by a person) and
  starting the next queued issues by dispatching the fix workflow with the original labeller.
* ``command`` — ``@chimera stop`` and ``@chimera status`` in comments, and the help reply to
  an unknown verb (``issues: write``, ``actions: write``); see :mod:`chimera.github.gate.commands`.
* ``tick`` — the schedules (``.chimera.d/schedules/``): replay the journal branch, claim
  what is due there, then file or update each job's issue and dispatch the fix workflow for
  it. Calls no model, runs no project code; an App token (``contents``, ``issues``,
  ``actions`` write, ``checks`` read) and the journal's signing key
  (``CHIMERA_JOURNAL_SIGNING_KEY``). See :mod:`chimera.github.jobs.tick`.
* ``refresh`` — a push to a Chimera PR's branch (``pull_request_target``): decide's outputs
  for verify with mode ``refresh`` (it judges base..head); ``spec-check`` re-derives what
  verify judged and posts the Spec check run on the head (``checks: write``); see
  :mod:`chimera.github.jobs.refresh`.

``--dry-run`` decides from the payload alone, offline: it prints the decision as one JSON
object, with the API checks it would still make, and changes nothing.

This module only reads argv and the environment into typed objects, calls one job of
:mod:`chimera.github.jobs` through :data:`JOB_MODES` (one row per mode; each mode's runner
imports its own job, so a mode loads nothing of the others), and writes the job's result back
(step outputs, one JSON line on stdout, the job summary); the jobs hold the logic.

Environment: ``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH``, ``GITHUB_REPOSITORY``,
``GITHUB_SERVER_URL``, ``GITHUB_API_URL`` (``CHIMERA_GITHUB_API_URL`` overrides it, for GitHub
Enterprise Server), ``GITHUB_RUN_ID``, ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``; the token
in ``CHIMERA_GITHUB_TOKEN`` (else ``GITHUB_TOKEN``); the settings in ``CHIMERA_*`` (see
:class:`chimera.github.trust.settings.ActionSettings`). Retry tuning: ``CHIMERA_GITHUB_TIMEOUT``,
``CHIMERA_GITHUB_RETRIES``, ``CHIMERA_GITHUB_BACKOFF``, ``CHIMERA_GITHUB_MAX_WAIT``;
``CHIMERA_GITHUB_THROTTLE=0`` switches PyGithub's pacing off (tests).

Exit status: 0 when the mode did its job (including a decision to do nothing, a queued
issue, or a run whose outcome the publish job reports); 2 for bad usage or configuration
(one line on stderr); 1 when GitHub failed after retries (the error is printed).

Why one module past ~400 lines: it is the one place that maps ``action.yml``'s environment
onto each job's typed inputs (the jobs themselves live in :mod:`chimera.github.jobs`), so
every mode's wiring can be read against ``action.yml`` side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.cli._base import Subparsers, err
from chimera.errors import ConfigError, GitHubError, UsageError

if TYPE_CHECKING:
    from chimera.github.action.context import ActionContext, GitHubAccess, JobResult
    from chimera.github.client.client import GitHubClient
    from chimera.github.jobs.verify import HeldOutInput
    from chimera.github.trust.settings import ActionSettings

EXIT_GITHUB = 1


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "action",
        help="the GitHub Action's entry point: decide, run, publish or drain from an event",
        description=(
            "Read GITHUB_EVENT_NAME / GITHUB_EVENT_PATH and act: decide (gate), agent (run, "
            "resume or re-run), publish (PR), drain (queue), or check (the spec in CI). "
            "--dry-run prints the decision as JSON, offline, changing nothing."
        ),
    )
    parser.add_argument("--mode", choices=MODES, default="agent", help="default: agent")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="decide from the payload alone and print the decision as one JSON object",
    )
    parser.add_argument(
        "--root", metavar="DIR", help="the checkout (default: $GITHUB_WORKSPACE or cwd)"
    )
    parser.add_argument(
        "--artifacts",
        metavar="DIR",
        help="the artifacts folder (default: $RUNNER_TEMP/chimera-artifacts)",
    )
    parser.add_argument("--event-name", metavar="NAME", help="override GITHUB_EVENT_NAME")
    parser.add_argument("--event-path", metavar="FILE", help="override GITHUB_EVENT_PATH")
    parser.set_defaults(handler=_handle)


# -- argv and environment → typed inputs ----------------------------------------------------


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, "").strip() or default


def _root(args: argparse.Namespace) -> Path:
    root = Path(args.root or _env("GITHUB_WORKSPACE") or Path.cwd())
    if not root.is_dir():
        raise UsageError(f"--root {root}: not a directory")
    return root.resolve()


def _artifacts(args: argparse.Namespace, root: Path) -> Path:
    if args.artifacts:
        return Path(args.artifacts).resolve()
    temp = _env("RUNNER_TEMP")
    return Path(temp) / "chimera-artifacts" if temp else root / ".chimera" / "action-artifacts"


def _payload(path: str) -> dict[str, Any]:
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the event payload: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise UsageError(f"{path}: the event payload is not JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise UsageError(f"{path}: the event payload is not a JSON object")
    return payload


def _github() -> GitHubAccess:
    from chimera.github.action.context import GitHubAccess
    from chimera.github.client.client import RetryPolicy

    try:
        retry = RetryPolicy(
            attempts=int(_env("CHIMERA_GITHUB_RETRIES", "4")),
            backoff_s=float(_env("CHIMERA_GITHUB_BACKOFF", "1.0")),
            max_wait_s=float(_env("CHIMERA_GITHUB_MAX_WAIT", "60")),
            timeout_s=int(float(_env("CHIMERA_GITHUB_TIMEOUT", "30"))),
        )
    except ValueError as exc:
        raise UsageError(f"CHIMERA_GITHUB_* retry settings: {exc}") from exc
    return GitHubAccess(
        token=_env("CHIMERA_GITHUB_TOKEN") or _env("GITHUB_TOKEN") or None,
        api_url=_env("CHIMERA_GITHUB_API_URL") or _env("GITHUB_API_URL") or None,
        retry=retry,
        throttle=_env("CHIMERA_GITHUB_THROTTLE", "1") not in ("0", "false"),
    )


def _context(args: argparse.Namespace) -> ActionContext:
    from chimera.github.action.context import ActionContext

    name = args.event_name or _env("GITHUB_EVENT_NAME")
    path = args.event_path or _env("GITHUB_EVENT_PATH")
    if not name:
        raise UsageError("GITHUB_EVENT_NAME is not set (or pass --event-name)")
    if not path:
        raise UsageError("GITHUB_EVENT_PATH is not set (or pass --event-path)")
    temp = _env("RUNNER_TEMP")
    return ActionContext(
        event_name=name,
        payload=_payload(path),
        repository_env=_env("GITHUB_REPOSITORY") or None,
        server_url=_env("GITHUB_SERVER_URL", "https://github.com"),
        workflow_run=_env("GITHUB_RUN_ID") or None,
        run_attempt=_env("GITHUB_RUN_ATTEMPT") or None,
        runner_temp=Path(temp) if temp else None,
        base_ref=_env("CHIMERA_BASE_REF") or None,
        dispatch_ref=_env("CHIMERA_DISPATCH_REF") or None,
        github=_github(),
    )


# -- the job's result → the workflow ----------------------------------------------------------


def _set_outputs(values: Mapping[str, str]) -> None:
    """Append step outputs to ``$GITHUB_OUTPUT`` (heredoc form: values may hold anything)."""
    path = _env("GITHUB_OUTPUT")
    if not path:
        return
    with Path(path).open("a", encoding="utf-8") as fh:
        for key, value in values.items():
            delim = f"CHIMERA_{uuid.uuid4().hex}"
            fh.write(f"{key}<<{delim}\n{value}\n{delim}\n")


def _report(result: JobResult, *, fenced: bool = False) -> int:
    """Print the record, append the summary, set the outputs. ``fenced``: the record holds
    text from sandboxed code (evidence), printed between ``::stop-commands::`` markers."""
    line = json.dumps(result.record, sort_keys=True) + "\n"
    if fenced:
        from chimera.sandbox import stop_commands

        with stop_commands(sys.stdout):
            sys.stdout.write(line)
    else:
        sys.stdout.write(line)
    if result.summary:
        _summary(result.summary)
    _set_outputs(result.outputs)
    return 0


# -- the handler ------------------------------------------------------------------------------


def _handle(args: argparse.Namespace) -> int:
    from chimera.github.trust.settings import ActionSettings

    settings = ActionSettings.from_env()
    if args.mode == "check" and not args.dry_run:
        return _check(args, settings)
    ctx = _context(args)
    try:
        return _run_job(args, settings, ctx)
    except (UsageError, ConfigError) as exc:
        # A bad input (a dispatch's issue-number, a bot-login that is not Chimera's): there may
        # be no issue to comment on, so the job summary says it, in one line.
        _summary(f"**Chimera {args.mode}:** {exc}")
        raise


def _summary(text: str) -> None:
    path = _env("GITHUB_STEP_SUMMARY")
    if path:
        with Path(path).open("a", encoding="utf-8") as fh:
            fh.write(text.rstrip() + "\n")


def _run_job(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    if args.dry_run:
        from chimera.github.jobs.decide import dry_run

        return _report(dry_run(ctx, settings, args.mode))
    mode = JOB_MODES[args.mode]
    if mode.untrusted_code:
        _refuse_reused_runner(settings)
    try:
        if mode.own_identities:
            settings = _own_identities(ctx, settings)
        return mode.run(args, settings, ctx)
    except GitHubError as exc:
        err(f"chimera action: {exc}")
        _set_outputs({"status": "github-error"})
        return EXIT_GITHUB


# -- one runner per job mode: each imports its job module, so a mode loads only its own ------


def _decide(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.decide import decide_job

    return _report(decide_job(ctx, settings).to_job())


def _drain(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.drain import drain_job

    return _report(drain_job(ctx, settings).to_job())


def _start_ci(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.start_ci import start_ci_job

    return _report(start_ci_job(ctx, settings).to_job())


def _command(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.command import command_job

    return _report(command_job(ctx, settings).to_job())


def _refresh(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.refresh import refresh_job

    return _report(refresh_job(ctx, settings).to_job())


def _tick(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.tick import run_tick
    from chimera.scheduler.clock import SystemClock

    root = _root(args)
    key = _signing_key(ctx)
    return _report(run_tick(ctx, settings, root, clock=SystemClock(), signing_key=key).to_job())


def _agent(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.agent import agent_job
    from chimera.github.trust.chain import Decided

    root = _root(args)
    try:
        decided = Decided.from_env(os.environ)
    except ConfigError as exc:
        # No gate, no run: decide's outputs are what admitted it (a workflow that starts the
        # agent without them, or when decide said no, runs nothing).
        raise ConfigError(f"the agent job starts only from decide's outputs: {exc}") from exc
    return _report(agent_job(ctx, settings, root, _artifacts(args, root), decided).to_job())


def _verify(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.verify import verify_job
    from chimera.github.trust.chain import Decided

    root = _root(args)
    decided = Decided.from_env(os.environ)
    heldout = _heldout_input()
    result = verify_job(ctx, settings, root, _artifacts(args, root), decided, heldout)
    return _report(result.to_job(), fenced=True)


def _spec_check(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.refresh import spec_check_job
    from chimera.github.trust.chain import Decided, Verified

    root = _root(args)
    decided = Decided.from_env(os.environ)
    verified = Verified.from_env(os.environ)
    results = _env("CHIMERA_VERIFIED_RESULTS")
    return _report(spec_check_job(ctx, settings, root, decided, verified, results).to_job())


def _publish(args: argparse.Namespace, settings: ActionSettings, ctx: ActionContext) -> int:
    from chimera.github.jobs.publish import publish_job
    from chimera.github.trust.chain import Decided, Verified
    from chimera.github.trust.schedule_journal import signed_journal
    from chimera.scheduler.clock import SystemClock

    root = _root(args)
    artifacts = _artifacts(args, root)
    decided = Decided.from_env(os.environ)
    no_verdict = ""
    try:
        verified: Verified | None = Verified.from_env(os.environ)
    except ConfigError as exc:
        # verify died without outputs: publish still says so on the issue and frees the
        # queue slot (no exit 2 that leaves both to the next drain).
        verified, no_verdict = None, str(exc)
    audit_head = _env("CHIMERA_AGENT_AUDIT_HEAD") or None
    # A scheduled run's finish goes to the journal signed like the tick's (SSH-signed with
    # the key when set, else GitHub-signed for the store token or the job's own).
    store, warning = _store_client(ctx, settings)
    journal = (
        signed_journal(root, settings, store or ctx.connect(), _signing_key(ctx))
        if settings.is_self(decided.started_by)
        else None
    )
    return _report(
        publish_job(
            ctx, settings, root, artifacts, decided, verified, no_verdict=no_verdict,
            agent_audit_head=audit_head, journal=journal, clock=SystemClock(),
            store_client=store, store_warning=warning,
            verified_results=_env("CHIMERA_VERIFIED_RESULTS"),
        ).to_job()
    )  # fmt: skip


@dataclass(frozen=True)
class JobMode:
    """One ``--mode`` that runs a job: its runner (which imports the job's module, so nothing
    else loads), and what must hold before it runs.

    Attributes:
        run: reads the mode's own inputs, calls the job, reports its result; returns the
            exit status.
        untrusted_code: the job runs model-written code (refused on a reused self-hosted
            runner, where an escape would persist).
        own_identities: the job acts with the App's token, whose own login joins Chimera's
            identities (a ``bot-login`` that is not it stops the job).
    """

    run: Callable[[argparse.Namespace, ActionSettings, ActionContext], int]
    untrusted_code: bool = False
    own_identities: bool = False


JOB_MODES: dict[str, JobMode] = {
    "decide": JobMode(_decide),
    "agent": JobMode(_agent, untrusted_code=True),
    "verify": JobMode(_verify, untrusted_code=True),
    "publish": JobMode(_publish),
    "start-ci": JobMode(_start_ci, own_identities=True),
    "drain": JobMode(_drain, own_identities=True),
    "command": JobMode(_command, own_identities=True),
    "tick": JobMode(_tick),
    "refresh": JobMode(_refresh),
    "spec-check": JobMode(_spec_check),
}
"""Every job mode, in ``action.yml``'s order; ``check`` (the spec in CI) is the one mode that
reads no event and runs no job."""
MODES = ("check", *JOB_MODES)


def _store_client(ctx: ActionContext, settings: ActionSettings) -> tuple[GitHubClient | None, str]:
    """publish's client for the branch stores only, from ``CHIMERA_STORE_TOKEN`` (the
    ``store-token`` input: Chimera's App installation token), taken out of this process's
    environment first so git and anything else started later never see it; ``(None, "")``
    when unset. A token GitHub names as a person's is not used (the reason is returned, see
    :func:`chimera.github.jobs.publish.store_writer`)."""
    from dataclasses import replace

    from chimera.github.jobs.publish import store_writer

    token = os.environ.pop("CHIMERA_STORE_TOKEN", "").strip()
    if not token:
        return None, ""
    return store_writer(replace(ctx.github, token=token).connect(ctx.repository), settings)


def _signing_key(ctx: ActionContext) -> Path | None:
    """``CHIMERA_JOURNAL_SIGNING_KEY`` (an SSH private key, from a secret) in a file only this
    user can read, for git's SSH signing of journal commits (it takes precedence over the
    API's GitHub-signed commits); ``None`` when unset."""
    import tempfile

    text = os.environ.get("CHIMERA_JOURNAL_SIGNING_KEY", "").strip()
    if not text:
        return None
    folder = Path(tempfile.mkdtemp(prefix="chimera-journal-key-", dir=ctx.runner_temp))
    path = folder / "key"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
    return path


def _own_identities(ctx: ActionContext, settings: ActionSettings) -> ActionSettings:
    """The settings with the token's own login among Chimera's identities (the App token of
    drain and start-ci); a bot-login that is not that login stops the job."""
    from chimera.github.trust.identity import check_identities

    checked = check_identities(ctx.connect(), settings)
    for note in checked.warnings:
        _summary(f"**Chimera:** {note}")
    return checked.settings


def _heldout_input() -> HeldOutInput | None:
    """The verify step's held-out secret (``CHIMERA_HELDOUT_SPECS``) and public key, taken
    out of this process's environment first: nothing started later inherits the secret."""
    from chimera.github.jobs.verify import HeldOutInput

    specs = os.environ.pop("CHIMERA_HELDOUT_SPECS", "")
    key = os.environ.pop("CHIMERA_HELDOUT_PUBLIC_KEY", "").strip()
    return HeldOutInput(specs, key) if specs.strip() else None


def _refuse_reused_runner(settings: ActionSettings) -> None:
    """Agent and verify run model-written code: on a self-hosted runner that is not
    ephemeral, an escape would persist into later jobs (and their tokens)."""
    if _env("RUNNER_ENVIRONMENT") == "self-hosted" and not settings.runner_ephemeral:
        raise UsageError(
            "refusing to run model-written code on a self-hosted runner that is not declared "
            "ephemeral (an escape would persist into later jobs); use a GitHub-hosted or an "
            "ephemeral runner and set runner-ephemeral: true"
        )


def _check(args: argparse.Namespace, settings: ActionSettings) -> int:
    from chimera.cli import main

    root = _root(args)
    return main(
        ["check", "--root", str(root), "--format", "github", str(root / settings.spec_path)]
    )
