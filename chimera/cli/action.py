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
  artifact, located through the PR body's marker, then ``chimera approve``), or a re-run
  with a review's text as tainted feedback. It writes the artifacts folder (outcome, patch,
  run folder, audit summary) and the job summary; it never writes to GitHub.
* ``publish`` — apply, scan, push, open or update the PR, label, comment (the write token;
  no LLM key). See :mod:`chimera.github.publish`.
* ``drain`` — cancellations (a Chimera PR closed unmerged, the label removed by a person) and
  starting the next queued issues by dispatching the fix workflow with the original labeller.

``--dry-run`` decides from the payload alone, offline: it prints the decision as one JSON
object, with the API checks it would still make, and changes nothing.

Environment: ``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH``, ``GITHUB_REPOSITORY``,
``GITHUB_SERVER_URL``, ``GITHUB_API_URL`` (``CHIMERA_GITHUB_API_URL`` overrides it, for GitHub
Enterprise Server), ``GITHUB_RUN_ID``, ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``; the token
in ``CHIMERA_GITHUB_TOKEN`` (else ``GITHUB_TOKEN``); the settings in ``CHIMERA_*`` (see
:class:`chimera.github.settings.ActionSettings`). Retry tuning: ``CHIMERA_GITHUB_TIMEOUT``,
``CHIMERA_GITHUB_RETRIES``, ``CHIMERA_GITHUB_BACKOFF``, ``CHIMERA_GITHUB_MAX_WAIT``;
``CHIMERA_GITHUB_THROTTLE=0`` switches PyGithub's pacing off (tests).

Exit status: 0 when the mode did its job (including a decision to do nothing, a queued
issue, or a run whose outcome the publish job reports); 2 for bad usage or configuration
(one line on stderr); 1 when GitHub failed after retries (the error is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.cli._base import Subparsers, err
from chimera.errors import ChimeraError, GitHubError, UsageError

if TYPE_CHECKING:
    from chimera.github.client import GitHubClient
    from chimera.github.events import Decision
    from chimera.github.queue import ChangeQueue
    from chimera.github.settings import ActionSettings

MODES = ("check", "decide", "agent", "publish", "drain")
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


# -- environment ---------------------------------------------------------------------------


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


def _event(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    name = args.event_name or _env("GITHUB_EVENT_NAME")
    path = args.event_path or _env("GITHUB_EVENT_PATH")
    if not name:
        raise UsageError("GITHUB_EVENT_NAME is not set (or pass --event-name)")
    if not path:
        raise UsageError("GITHUB_EVENT_PATH is not set (or pass --event-path)")
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the event payload: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise UsageError(f"{path}: the event payload is not JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise UsageError(f"{path}: the event payload is not a JSON object")
    return name, payload


def _repository(payload: Mapping[str, Any]) -> str:
    repo = _env("GITHUB_REPOSITORY")
    if not repo:
        full = (payload.get("repository") or {}).get("full_name")
        repo = str(full) if isinstance(full, str) else ""
    if "/" not in repo:
        raise UsageError("GITHUB_REPOSITORY is not set and the payload names no repository")
    return repo


def _client(repository: str) -> GitHubClient:
    from chimera.github.client import DEFAULT_API_URL, GitHubClient, RetryPolicy

    token = _env("CHIMERA_GITHUB_TOKEN") or _env("GITHUB_TOKEN")
    if not token:
        raise UsageError("no GitHub token: set the github-token input (CHIMERA_GITHUB_TOKEN)")
    try:
        retry = RetryPolicy(
            attempts=int(_env("CHIMERA_GITHUB_RETRIES", "4")),
            backoff_s=float(_env("CHIMERA_GITHUB_BACKOFF", "1.0")),
            max_wait_s=float(_env("CHIMERA_GITHUB_MAX_WAIT", "60")),
            timeout_s=int(float(_env("CHIMERA_GITHUB_TIMEOUT", "30"))),
        )
    except ValueError as exc:
        raise UsageError(f"CHIMERA_GITHUB_* retry settings: {exc}") from exc
    api = _env("CHIMERA_GITHUB_API_URL") or _env("GITHUB_API_URL") or DEFAULT_API_URL
    return GitHubClient(
        repository,
        token,
        api_url=api,
        retry=retry,
        throttle=_env("CHIMERA_GITHUB_THROTTLE", "1") not in ("0", "false"),
    )


def _queue(client: GitHubClient, settings: ActionSettings) -> ChangeQueue:
    from chimera.github.queue import ChangeQueue, QueueLimits

    return ChangeQueue(
        client,
        identities=settings.identities,
        branch_prefix=settings.branch_prefix,
        limits=QueueLimits(settings.max_open_prs, settings.max_prs_per_hour),
    )


def _set_outputs(values: Mapping[str, Any]) -> None:
    """Append step outputs to ``$GITHUB_OUTPUT`` (heredoc form: values may hold anything)."""
    path = _env("GITHUB_OUTPUT")
    if not path:
        return
    with Path(path).open("a", encoding="utf-8") as fh:
        for key, value in values.items():
            text = "" if value is None else str(value)
            delim = f"CHIMERA_{uuid.uuid4().hex}"
            fh.write(f"{key}<<{delim}\n{text}\n{delim}\n")


def _step_summary(text: str) -> None:
    path = _env("GITHUB_STEP_SUMMARY")
    if path:
        with Path(path).open("a", encoding="utf-8") as fh:
            fh.write(text.rstrip() + "\n")


def _print(obj: Mapping[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")


def _run_link(repository: str) -> str:
    from chimera.github.summary import artifact_link

    return artifact_link(
        _env("GITHUB_SERVER_URL", "https://github.com"), repository, _env("GITHUB_RUN_ID") or None
    )


def _post(client: GitHubClient, number: int, kind: str, detail: str, repository: str) -> int:
    """One outcome comment, keyed by this workflow run (a re-run of the step posts nothing)."""
    from chimera.github.summary import outcome_comment

    key = f"{_env('GITHUB_RUN_ID') or 'local'}:{number}"
    body = outcome_comment(
        kind, issue=number, key=key, detail=detail, run_link=_run_link(repository)
    )
    return client.comment(number, body, marker=body[body.rindex("<!-- chimera:outcome") :])


# -- the handler ---------------------------------------------------------------------------


def _handle(args: argparse.Namespace) -> int:
    from chimera.github.settings import ActionSettings

    settings = ActionSettings.from_env()
    if args.mode == "check" and not args.dry_run:
        return _check(args, settings)
    name, payload = _event(args)
    from chimera.github.events import decide

    decision = decide(name, payload, settings)
    if args.dry_run:
        out = decision.to_json() | {"mode": args.mode, "dry_run": True}
        _print(out)
        return 0
    try:
        if args.mode == "decide":
            return _decide(decision, payload, settings)
        if args.mode == "drain":
            return _drain(decision, payload, settings)
        root = _root(args)
        if args.mode == "agent":
            return _agent(decision, payload, settings, root, _artifacts(args, root))
        return _publish(payload, settings, root, _artifacts(args, root))
    except GitHubError as exc:
        err(f"chimera action: {exc}")
        _set_outputs({"status": "github-error"})
        return EXIT_GITHUB


def _check(args: argparse.Namespace, settings: ActionSettings) -> int:
    from chimera.cli import main

    root = _root(args)
    return main(
        ["check", "--root", str(root), "--format", "github", str(root / settings.spec_path)]
    )


# -- decide (gate) ---------------------------------------------------------------------------


def _decide(decision: Decision, payload: Mapping[str, Any], settings: ActionSettings) -> int:
    from chimera.github.events import Act
    from chimera.github.permissions import resolve

    repository = _repository(payload)
    client = _client(repository)
    outputs: dict[str, Any] = {
        "decision": decision.action.value,
        "issue": decision.issue or "",
        "pull": decision.pull or "",
        "proceed": "false",
        "status": decision.action.value,
    }
    if decision.action in (Act.RUN, Act.RESUME, Act.RERUN):
        res = resolve(decision, client, settings)
        final = res.decision
        if final.action is Act.IGNORE:
            if final.explain and (final.issue or final.pull):
                _post(
                    client,
                    int(final.pull or final.issue or 0),
                    "refused",
                    f"Nothing was done: {final.reason}.",
                    repository,
                )
            outputs |= {"decision": "ignore", "status": "refused"}
        elif final.action is Act.RUN:
            assert final.issue is not None and final.actor is not None
            admission = _queue(client, settings).admit(
                final.issue, final.actor, claimed=final.from_queue
            )
            if admission.admitted:
                outputs |= {"proceed": "true", "status": "running"}
            else:
                outputs |= {"status": "queued"}
            final_reason = admission.reason
            _print(final.to_json() | {"admission": final_reason})
            _set_outputs(outputs)
            return 0
        else:
            outputs |= {"proceed": "true", "status": final.action.value}
        _print(final.to_json())
        _set_outputs(outputs)
        return 0
    if decision.action is Act.CANCEL:
        _cancel(decision, client, settings, repository)
    elif decision.action is Act.IGNORE and decision.explain and decision.issue:
        _post(
            client, decision.issue, "refused", f"Nothing was done: {decision.reason}.", repository
        )
    _print(decision.to_json())
    _set_outputs(outputs)
    return 0


def _cancel(
    decision: Decision, client: GitHubClient, settings: ActionSettings, repository: str
) -> None:
    from chimera.github.permissions import chimera_pull
    from chimera.github.summary import code

    if decision.issue is None:
        return
    queue = _queue(client, settings)
    done = queue.cancel(decision.issue)
    pull, marker = chimera_pull(client, settings, decision.issue)
    if (
        pull is not None
        and marker is not None
        and marker.get("status") == "awaiting_approval"
        and decision.event == "issues"
    ):
        client.update_pull(pull.number, state="closed")
        done.append(f"its paused draft PR #{pull.number} (closed)")
    if decision.event in ("pull_request", "pull_request_target"):
        from chimera.github.queue import LABEL_PR_OPEN

        queue.release(decision.issue)
        client.remove_label(decision.issue, LABEL_PR_OPEN)
        text = (
            f"PR #{decision.pull} was closed without merging by {code(decision.actor or '?', 60)}"
            + (f"; cancelled: {', '.join(done)}" if done else "")
            + ". Add the label again to start over."
        )
    elif done:
        text = (
            f"{code(decision.actor or '?', 60)} removed the label; cancelled: {', '.join(done)}. "
            "Add the label again to start over."
        )
    else:
        return  # nothing was queued or paused: no comment needed for a plain label removal
    _post(client, decision.issue, "cancelled", text, repository)


# -- drain ---------------------------------------------------------------------------------


def _drain(decision: Decision, payload: Mapping[str, Any], settings: ActionSettings) -> int:
    from chimera.github.events import Act

    repository = _repository(payload)
    client = _client(repository)
    if decision.action is Act.CANCEL:
        _cancel(decision, client, settings, repository)
    if decision.action is Act.IGNORE and decision.event not in (
        "issues",
        "pull_request",
        "pull_request_target",
    ):
        _print(decision.to_json() | {"started": []})
        _set_outputs({"status": "ignored", "started": ""})
        return 0
    queue = _queue(client, settings)
    default_branch = str((payload.get("repository") or {}).get("default_branch") or "main")
    ref = _env("CHIMERA_DISPATCH_REF") or default_branch

    def dispatch(entry: Any) -> None:
        client.dispatch_workflow(
            settings.fix_workflow,
            ref,
            {"issue-number": str(entry.issue), "labeller": entry.labeller},
        )

    started = queue.drain(dispatch)
    _print(decision.to_json() | {"started": started})
    _set_outputs({"status": "drained", "started": ",".join(map(str, started))})
    return 0


# -- agent ---------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ChimeraError(f"git {args[0]} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _checkout(root: Path, rev: str, branch: str) -> str:
    """Check out ``rev`` detached (fetching ``branch`` from origin when it is not local);
    returns the commit. The workflow's checkout usually has it already (``fetch-depth: 0``)."""
    have = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if have.returncode != 0:
        _git(
            root, "fetch", "--quiet", "origin", f"+refs/heads/{branch}:refs/remotes/origin/{branch}"
        )
    sha = _git(root, "rev-parse", f"{rev}^{{commit}}")
    if _git(root, "rev-parse", "HEAD") != sha:
        _git(root, "checkout", "--quiet", "--force", "--detach", sha)
    return sha


def _chimera(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run the ``chimera`` command in a child process, without any GitHub token in its
    environment (the run never needs one; the sandbox would not pass it on either)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GITHUB_TOKEN", "CHIMERA_GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN")
    }
    code = "import sys; from chimera.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, check=False
    )


def _run_args(settings: ActionSettings) -> list[str]:
    out: list[str] = []
    if settings.model:
        out += ["--model", settings.model]
    if settings.max_iterations:
        out += ["--max-iterations", str(settings.max_iterations)]
    if settings.max_attempts:
        out += ["--max-attempts", str(settings.max_attempts)]
    if settings.budget_usd:
        out += ["--budget-usd", str(settings.budget_usd)]
    if settings.budget_tokens:
        out += ["--budget-tokens", str(settings.budget_tokens)]
    if settings.diff_feedback:
        out += ["--diff-feedback"]
    return out


def _agent(
    decision: Decision,
    payload: Mapping[str, Any],
    settings: ActionSettings,
    root: Path,
    artifacts: Path,
) -> int:
    from chimera.github.artifacts import Outcome, write_outcome
    from chimera.github.events import Act
    from chimera.github.permissions import resolve

    artifacts.mkdir(parents=True, exist_ok=True)
    workflow_run = _env("GITHUB_RUN_ID") or None
    base = Outcome(
        kind="ignored",
        issue=decision.issue,
        pull=decision.pull,
        decision=decision.to_json(),
        workflow_run=workflow_run,
        artifact=settings.artifact_name,
        detail=decision.reason,
    )
    if decision.action not in (Act.RUN, Act.RESUME, Act.RERUN):
        write_outcome(artifacts, base)
        _print({"outcome": "ignored", "reason": decision.reason})
        _set_outputs({"status": "ignored", "run-id": ""})
        return 0
    repository = _repository(payload)
    client = _client(repository)
    res = resolve(decision, client, settings)
    if res.decision.action is Act.IGNORE:
        # The gate job explained it already (same outcome key: publish will not repeat it).
        write_outcome(
            artifacts,
            base.model_copy(
                update={"detail": res.decision.reason, "explain": res.decision.explain}
            ),
        )
        _print({"outcome": "ignored", "reason": res.decision.reason})
        _set_outputs({"status": "ignored", "run-id": ""})
        return 0
    try:
        outcome = _agent_run(res, client, settings, root, artifacts, base)
    except (ChimeraError, OSError) as exc:
        outcome = base.model_copy(update={"kind": "crashed", "detail": str(exc)[:2000]})
    write_outcome(artifacts, outcome)
    _print(outcome.model_dump(mode="json"))
    _set_outputs({"status": outcome.status or outcome.kind, "run-id": outcome.run_id or ""})
    return 0


def _agent_run(
    res: Any,
    client: GitHubClient,
    settings: ActionSettings,
    root: Path,
    artifacts: Path,
    base: Any,
) -> Any:
    from chimera.github.artifacts import collect_run, make_patch, restore_run, write_summary
    from chimera.github.events import Act

    decision: Decision = res.decision
    assert decision.issue is not None and decision.actor is not None
    issue = client.issue(decision.issue)
    mode = {Act.RUN: "new", Act.RESUME: "resume", Act.RERUN: "rerun"}[decision.action]
    base_ref: str | None = None
    branch_head: str | None = None
    if decision.action is Act.RUN:
        base_sha = _git(root, "rev-parse", "HEAD")
        base_ref = str(_env("CHIMERA_BASE_REF") or "") or None
    elif decision.action is Act.RESUME:
        # The paused run continues on the PR's head (its verified change is there).
        pull = res.pull
        base_sha = branch_head = pull.head_sha
        base_ref = pull.base_ref
        _checkout(root, base_sha, pull.head_ref)
    else:
        # A re-run is a fresh attempt from the base branch, with the review as feedback; it
        # replaces the PR branch's content (pushed with a lease on the current head).
        pull = res.pull
        branch_head = pull.head_sha
        base_ref = pull.base_ref
        base_sha = _checkout(root, f"origin/{pull.base_ref}", pull.base_ref)
    tmp = Path(_env("RUNNER_TEMP") or tempfile.gettempdir())
    run_tail = _env("GITHUB_RUN_ID") or uuid.uuid4().hex[:8]
    common = ["--root", str(root), "--json", "--quiet"]
    if decision.action is Act.RESUME:
        marker = res.marker or {}
        run_id = str(marker.get("run_id") or "")
        source_run = marker.get("workflow_run")
        if not run_id or not source_run:
            raise ChimeraError(f"PR #{decision.pull}: its marker names no run or workflow run")
        download = tmp / f"chimera-resume-{run_id}"
        client.download_artifact(
            int(source_run), str(marker.get("artifact") or settings.artifact_name), download
        )
        restore_run(download, root, run_id)
        model_args = ["--model", settings.model] if settings.model else []
        proc = _chimera("approve", run_id, "--by", decision.actor, *model_args, *common)
        started_by = str(marker.get("started_by") or "")
    else:
        run_id = f"gh-{decision.issue}-{run_tail}"
        task = f"{issue.title}\n\n{issue.body}"
        if decision.action is Act.RERUN:
            task += (
                "\n\nA reviewer requested changes on the previous pull request for this issue. "
                "Their review follows (untrusted text):\n\n" + (decision.feedback or "")
            )
        task_file = tmp / f"chimera-task-{run_id}.md"
        task_file.write_text(task, encoding="utf-8")
        proc = _chimera(
            "run",
            "--task-file",
            str(task_file),
            "--untrusted",
            "--run-id",
            run_id,
            "--started-by",
            decision.actor,
            "--spec",
            settings.spec_path.rstrip("/"),
            *_run_args(settings),
            *common,
        )
        started_by = decision.actor
    state_path = root / ".chimera" / "runs" / run_id / "state.json"
    if not state_path.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise ChimeraError(
            f"chimera exited {proc.returncode} without a run state: " + " / ".join(tail)
        )
    state = json.loads(state_path.read_text(encoding="utf-8"))
    patch = make_patch(root, base_sha)
    (artifacts / "patch.diff").write_text(patch, encoding="utf-8")
    collect_run(root, run_id, artifacts)
    summary = _audit_summary(root / ".chimera" / "runs" / run_id, state.get("audit_head"))
    write_summary(artifacts, summary)
    _step_summary(summary)
    risk = [
        reason
        for card in state.get("cards") or []
        if card.get("status") == "awaiting_approval"
        for reason in card.get("risk_reasons") or []
    ]
    return base.model_copy(
        update={
            "kind": "run",
            "mode": mode,
            "run_id": run_id,
            "started_by": started_by,
            "status": state.get("status"),
            "stop_reason": state.get("stop_reason"),
            "stop_detail": state.get("stop_detail") or "",
            "exit_code": proc.returncode,
            "base_sha": base_sha,
            "base_ref": base_ref,
            "branch": settings.branch(decision.issue),
            "branch_head": branch_head,
            "empty_patch": not patch.strip(),
            "risk_reasons": risk,
            "tainted": bool(state.get("tainted", True)),
            "detail": "",
        }
    )


def _audit_summary(run_dir: Path, head: str | None) -> str:
    audit = run_dir / "audit.jsonl"
    if not audit.is_file():
        return "_No audit log was written._\n"
    try:
        from chimera.cli.audit import render_audit_summary

        return render_audit_summary(audit, head=head)
    except (ChimeraError, OSError, ValueError) as exc:
        return f"_The audit summary could not be rendered: {exc}_\n"


# -- publish -------------------------------------------------------------------------------


def _publish(
    payload: Mapping[str, Any], settings: ActionSettings, root: Path, artifacts: Path
) -> int:
    from chimera.github.publish import PublishContext, publish

    repository = _repository(payload)
    client = _client(repository)
    default_branch = str((payload.get("repository") or {}).get("default_branch") or "main")
    ctx = PublishContext(
        root=root,
        artifacts=artifacts,
        repository=repository,
        server_url=_env("GITHUB_SERVER_URL", "https://github.com"),
        workflow_run=_env("GITHUB_RUN_ID") or None,
        default_branch=default_branch,
    )
    result = publish(ctx, client, settings, _queue(client, settings))
    _print(result.to_json())
    link = f" — {result.pr_url}" if result.pr_url else ""
    _step_summary(f"**Chimera publish:** {result.outcome}{link}")
    _set_outputs(
        {
            "status": result.outcome,
            "pr-number": result.pr_number or "",
            "pr-url": result.pr_url or "",
        }
    )
    return 0
