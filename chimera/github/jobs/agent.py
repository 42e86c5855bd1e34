"""The agent job: the run (the LLM key; a read-only token; it never writes to GitHub).

A new run for an issue, a resume after an approval (the paused run's folder is downloaded from
the earlier workflow run's artifact, located through the PR body's marker, then approved), or a
re-run with a review's text as tainted feedback. The run itself happens in a child process
started from a typed request file (:mod:`chimera.github.agent.child`), with no GitHub token in
its environment. The job then writes the artifacts folder (outcome, run report, patch, run
folder, audit summary) for the publish job, and the audit summary for the job summary.

The job's steps (checkout, basis, child, artifacts) run in one order here; the git steps on
the checkout live in :mod:`~chimera.github.jobs.checkout`, the child in its own module.

It starts from decide's outputs only (:class:`~chimera.github.trust.chain.Decided`, parsed once by
``chimera action``) and does not make decide's API checks again; the PR's marker, which a
person could change after decide, it reads and parses again itself.

Why one module past ~400 lines: the job is one sequence (what decide admitted → the checkout
→ the child → the artifacts) whose steps hand each other the same few values; cut in two, a
reader would follow one run across files.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.confine import confined
from chimera.errors import ChimeraError, ConfigError, HandoffError
from chimera.github.action.context import ActionContext, JobResult
from chimera.github.agent.child import REQUEST_VERSION, AgentRequest, write_request
from chimera.github.agent.watch import AttemptProgress, attempts_table, progress_line, watch_child
from chimera.github.conversation.feedback import earlier_attempts, feedback_task, review_comments
from chimera.github.gate.events import Act, Decision, decide
from chimera.github.gate.permissions import pr_marker
from chimera.github.jobs.checkout import basis_commit, checkout_commit
from chimera.github.publish.memory import propose, recall_branch
from chimera.github.trust.artifacts import (
    Outcome,
    base_commands,
    collect_run,
    make_patch,
    restore_run,
    resumed_state,
    write_outcome,
    write_summary,
)
from chimera.github.trust.carriers import PrMarker, derived_run_id
from chimera.orchestration.graph import Card, CardStatus
from chimera.orchestration.state import RunStore

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient, PullInfo
    from chimera.github.trust.chain import Decided
    from chimera.github.trust.settings import ActionSettings

__all__ = ["AgentResult", "agent_job"]

_MODES = {Act.RUN: "new", Act.RESUME: "resume", Act.RERUN: "rerun"}
# decide's ``mode`` output → the event's action it admitted.
_DECIDED_MODES = {"run": Act.RUN, "resume": Act.RESUME, "rerun": Act.RERUN}
# The run never needs a GitHub token, and a child that has none cannot leak one; nor the
# runner's own tokens (ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_*: every ACTIONS_*).
_SECRET_ENV = (
    "GITHUB_TOKEN",
    "CHIMERA_GITHUB_TOKEN",
    "GH_TOKEN",
    "CHIMERA_LLM_API_KEY",
    "CHIMERA_HELDOUT_SPECS",  # verify's alone; never the agent's, even if a workflow errs
)
LLM_KEY_ENV = "CHIMERA_LLM_API_KEY"


@dataclass(frozen=True)
class AgentResult:
    """What the agent job handed on: the outcome it wrote, and the audit summary."""

    outcome: Outcome
    summary: str = ""
    audit_head: str | None = None
    # Chimera's own counters from the run state (never the model's words): step outputs.
    tokens: int = 0
    cost_usd: float | None = None
    sandbox: str = ""

    def to_job(self) -> JobResult:
        if self.outcome.kind == "ignored":
            return JobResult(
                outputs={"status": "ignored", "run-id": ""},
                record={"outcome": "ignored", "reason": self.outcome.detail},
            )
        return JobResult(
            outputs={
                "status": self.outcome.status or self.outcome.kind,
                "run-id": self.outcome.run_id or "",
                # Crosses to publish as a job output (not through the artifact): publish
                # records it, so a log cut in transit shows as a mismatch.
                "audit-head": self.audit_head or "",
                "outcome": self.outcome.status or self.outcome.kind,
                "tokens": str(self.tokens),
                "cost-usd": "" if self.cost_usd is None else f"{self.cost_usd:.4f}",
                "sandbox": self.sandbox,
            },
            record=self.outcome.model_dump(mode="json"),
            summary=self.summary,
        )


def child_env(llm_key_variable: str = "") -> dict[str, str]:
    """The child's environment: this one without any GitHub token or ``ACTIONS_*`` variable;
    the LLM key (``CHIMERA_LLM_API_KEY``, set only on the agent step) under
    ``llm_key_variable``, the name the provider reads."""
    env = {
        k: v for k, v in os.environ.items() if k not in _SECRET_ENV and not k.startswith("ACTIONS_")
    }
    key = os.environ.get(LLM_KEY_ENV, "")
    if key and llm_key_variable:
        env[llm_key_variable] = key
    return env


def start_child(
    request: AgentRequest,
    folder: Path,
    *,
    llm_key_variable: str = "",
    on_attempt: Callable[[AttemptProgress], None] | None = None,
    interval_s: float = 5.0,
) -> subprocess.CompletedProcess[str]:
    """Write ``request`` into ``folder`` and run :mod:`chimera.github.agent.child` on it in
    :func:`child_env`; while it runs, each attempt its audit log records goes to
    ``on_attempt`` (polled every ``interval_s`` seconds). Returns the finished process
    (output captured).

    ``-P``: the checkout is the working directory, and a ``chimera/`` folder in it must not
    shadow the installed package.
    """
    path = write_request(
        confined(folder, f"chimera-request-{request.run_id}.json", what="the run id"), request
    )
    argv = [sys.executable, "-P", "-m", "chimera.github.agent.child", str(path)]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(llm_key_variable),
    )
    audit = RunStore(request.root).run_dir(request.run_id) / "audit.jsonl"
    out, err, _seen = watch_child(
        proc, audit, on_attempt or (lambda _p: None), interval_s=interval_s
    )
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _audit_summary(run_dir: Path, head: str | None) -> str:
    from chimera.governance.audit_summary import render_audit_summary

    audit = run_dir / "audit.jsonl"
    if not audit.is_file():
        return "_No audit log was written._\n"
    try:
        return render_audit_summary(audit, head=head)
    except (ChimeraError, OSError, ValueError) as exc:
        return f"_The audit summary could not be rendered: {exc}_\n"


def agent_job(
    ctx: ActionContext, settings: ActionSettings, root: Path, artifacts: Path, decided: Decided
) -> AgentResult:
    """Run the agent job for the run decide admitted (``decided``: its outputs, parsed once)
    in the checkout ``root``; writes the artifacts folder ``artifacts``. A run that cannot
    finish is a ``crashed`` outcome (the publish job reports it), not an exception.

    decide made the gate's API checks (who may start, approve or re-run; the issue's and the
    PR's state; an approval's head commit) in this workflow run, and its outputs say what it
    admitted: they are not made again here. What the run acts on that a person could have
    changed since is read again: the PR's marker (a resume's run folder and artifact, a
    re-run's earlier attempts), parsed with each field's grammar. The event itself is read
    offline, for who approved and a review's text.

    Raises:
        ConfigError: ``decided`` is not a run, resume or re-run, or the event is not the one
            decide admitted.
        UsageError: no repository or no token.
        GitHubError: the API failed after retries.
    """
    artifacts.mkdir(parents=True, exist_ok=True)
    decision = decide(ctx.event_name, ctx.payload, settings)
    mode = _DECIDED_MODES.get(decided.mode)
    if mode is None:
        raise ConfigError(
            f"CHIMERA_DECIDED_MODE: the agent job runs run, resume or rerun, not {decided.mode!r}"
        )
    if decision.action is not mode:
        raise ConfigError(
            f"the event ({ctx.event_name}: {decision.action.value}) is not the {decided.mode} "
            "decide admitted; map decide's outputs from the same workflow run"
        )
    base = Outcome(
        kind="ignored",
        issue=decided.issue,
        pull=decided.pull,
        decision=decision.to_json(),
        workflow_run=ctx.workflow_run,
        artifact=settings.run_artifact,
        detail=decision.reason,
    )
    client = ctx.connect()
    summary = ""
    head: str | None = None
    counters: tuple[int, float | None] = (0, None)
    try:
        outcome, summary, head, counters = _run(
            ctx, decided, decision, client, settings, root, artifacts, base
        )
    except _Refused as exc:
        # The PR's state changed since decide admitted the run: nothing runs, and the outcome
        # says why (publish reports it).
        outcome = base.model_copy(update={"detail": str(exc), "explain": True})
    except (ChimeraError, OSError) as exc:
        outcome = base.model_copy(update={"kind": "crashed", "detail": str(exc)[:2000]})
    write_outcome(artifacts, outcome)
    tokens, cost = counters if outcome.kind == "run" else (0, None)
    return AgentResult(outcome, summary, head, tokens, cost, settings.sandbox)


class _Refused(ChimeraError):
    """The run cannot start on what the API shows now (one line: why)."""


def _pull_marker(
    client: GitHubClient, settings: ActionSettings, number: int
) -> tuple[PullInfo, PrMarker]:
    """PR ``number`` and its marker, read again now and parsed with each field's grammar.

    Raises:
        _Refused: the marker is gone or a field fails its grammar.
    """
    pull = client.pull(number)
    try:
        marker = pr_marker(pull, settings)
    except HandoffError as exc:
        raise _Refused(f"{exc}; nothing acts on it (close the PR and start over)") from exc
    if marker is None:
        raise _Refused(
            f"PR #{number} carries no Chimera state (not opened by Chimera's identity "
            f"{', '.join(settings.identities)}, or its marker was removed)"
        )
    return pull, marker


def _run(
    ctx: ActionContext,
    decided: Decided,
    decision: Decision,
    client: GitHubClient,
    settings: ActionSettings,
    root: Path,
    artifacts: Path,
    base: Outcome,
) -> tuple[Outcome, str, str | None, tuple[int, float | None]]:
    action = decision.action
    issue = client.issue(decided.issue)
    tmp = ctx.runner_temp or Path(tempfile.gettempdir())
    base_ref: str | None = None
    branch_head: str | None = None
    basis: str | None = None  # a re-run's: the commit its goal is judged against
    marker: PrMarker | None = None
    # Who the run is for: decide resolved it (a queued run's labeller from the issue's record,
    # never the dispatch's input); a resume's is the approver.
    actor = decision.actor if action is Act.RESUME else decided.started_by
    if not actor:
        raise ChimeraError("decide's outputs name nobody who started the run")
    if action is Act.RUN:
        base_ref = ctx.base_ref
        base_sha = checkout_commit(root, decided.base_sha, "decide's base commit")
    else:
        if decided.pull is None:
            raise ChimeraError(f"decide's outputs name no PR for the {decided.mode}")
        pull, marker = _pull_marker(client, settings, decided.pull)
        # decide's head, not the API's now: an approval named it, the workflow checked it
        # out (no later fetch: the checkout keeps no credential), publish leases on it.
        branch_head = decided.head_sha or pull.head_sha
        base_ref = decided.base_ref or pull.base_ref
        # A paused run continues on the PR's head (its verified change is there); a re-run
        # iterates on it, with the feedback (and each inline comment's file and line) as its
        # task and its goal judged against decide's base (the basis): publish adds its commit
        # on top of the PR's branch (pushed with a lease on the head decide saw).
        base_sha = checkout_commit(root, branch_head, f"PR #{decided.pull}'s head")
    if action is Act.RESUME:
        # The marker was parsed once with each field's grammar (the run store's id rule
        # among them); both folders built from it are proved to stay under their roots
        # before either is made.
        assert marker is not None
        run_id = marker.run_id
        source_run = marker.workflow_run
        if not run_id or not source_run:
            raise ChimeraError(f"PR #{decided.pull}: its marker names no run or workflow run")
        download = confined(tmp, f"chimera-resume-{run_id}", what=f"PR #{decided.pull}'s run id")
        RunStore(root).run_dir(run_id)
        client.download_artifact(
            int(source_run), marker.artifact or settings.artifact_name, download
        )
        # The artifact's state is the agent job's word: what a tainted run may execute is
        # read again from the base commit decide recorded (the marker's), never copied.
        spec_path = settings.spec_path
        allowed = base_commands(root, decided.base_sha, spec_path, download)
        restore_run(
            download, root, run_id,
            vet=lambda state: resumed_state(state, spec_path=spec_path, trusted_commands=allowed),
        )  # fmt: skip
        request = AgentRequest(
            version=REQUEST_VERSION,
            action="approve",
            root=root,
            run_id=run_id,
            actor=actor,
            model=settings.model,
            memory=settings.memory,
        )
    else:
        # The id publish derives too (never read back from this job's artifact).
        run_id = derived_run_id(decided.issue, ctx.workflow_run) or (
            f"gh-{decided.issue}-{uuid.uuid4().hex[:8]}"
        )
        task = f"{issue.title}\n\n{issue.body}"
        if action is Act.RERUN:
            assert decided.pull is not None
            inline = (
                review_comments(client, decided.pull, decision.review_id)
                if decision.review_id is not None and decision.event == "pull_request_review"
                else []
            )
            earlier = earlier_attempts(
                client,
                marker,
                settings.artifact_name,
                tmp / f"chimera-earlier-{decided.pull}-{uuid.uuid4().hex[:8]}",
            )
            task = feedback_task(
                issue.title,
                issue.body,
                reviewer=actor,
                pull=decided.pull,
                feedback=decision.feedback or "",
                inline=inline,
                earlier=earlier,
            )
            basis = basis_commit(root, decided.base_sha)
        # Unset or zero limits: the repository's configuration decides.
        request = AgentRequest(
            version=REQUEST_VERSION,
            action="start",
            root=root,
            run_id=run_id,
            actor=actor,
            task=task,
            untrusted=True,
            spec_paths=[settings.spec_path.rstrip("/") or "."],
            model=settings.model,
            max_iterations=settings.max_iterations or None,
            max_attempts=settings.max_attempts or None,
            budget_usd=settings.budget_usd or None,
            budget_tokens=settings.budget_tokens or None,
            diff_feedback=True if settings.diff_feedback else None,
            memory=settings.memory,
            basis_commit=basis,
        )
    started_by = decided.started_by
    request = request.model_copy(update=settings.run_overrides())
    attempts: list[AttemptProgress] = []

    def on_attempt(progress: AttemptProgress) -> None:
        # The job log, live (GitHub shows a step's summary only when the step ends).
        attempts.append(progress)
        sys.stderr.write(progress_line(progress) + "\n")
        sys.stderr.flush()

    # Before the child starts: the token reaches only these git processes, never the run.
    recalled_before = recall_branch(root, client, settings, token=ctx.github.token)
    proc = start_child(
        request, tmp, llm_key_variable=settings.llm_key_variable, on_attempt=on_attempt
    )
    store = RunStore(root)
    if not (store.run_dir(run_id) / "state.json").is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise ChimeraError(
            f"the run exited {proc.returncode} without a run state: " + " / ".join(tail)
        )
    state = store.load(run_id)
    # A resume or a re-run continues on the PR's head, but verify and publish judge and apply
    # the whole change from decide's base: the patch is cumulative.
    if action is Act.RERUN and basis:
        base_sha = basis
    elif action is Act.RESUME:
        base_sha = decided.base_sha
    patch = make_patch(root, base_sha)
    (artifacts / "patch.diff").write_text(patch, encoding="utf-8")
    collect_run(root, run_id, artifacts)
    propose(root, artifacts, run_id, recalled_before)
    summary = attempts_table(attempts) + _audit_summary(store.run_dir(run_id), state.audit_head)
    write_summary(artifacts, summary)
    cards = [Card.from_json(raw) for raw in state.cards]
    risk = [
        reason
        for card in cards
        if card.status is CardStatus.AWAITING_APPROVAL
        for reason in card.risk_reasons
    ]
    outcome = base.model_copy(
        update={
            "kind": "run",
            "mode": _MODES[action],
            "run_id": run_id,
            "started_by": started_by,
            "status": state.status.value,
            "stop_reason": state.stop_reason.value if state.stop_reason else None,
            "stop_detail": state.stop_detail,
            "exit_code": proc.returncode,
            "base_sha": base_sha,
            "base_ref": base_ref,
            "branch": settings.branch(decided.issue),
            "branch_head": branch_head,
            "empty_patch": not patch.strip(),
            "risk_reasons": risk,
            "tainted": state.tainted,
            "detail": "",
        }
    )
    counters = (int(state.tokens or 0), state.cost_usd)
    # The job log (stderr: stdout carries the job's one JSON record): Chimera's counters,
    # never model output.
    cost = f"${counters[1]:.4f}" if counters[1] is not None else "cost unknown"
    sys.stderr.write(f"chimera: run {run_id} {state.status.value}: {counters[0]} tokens, {cost}\n")
    return outcome, summary, state.audit_head, counters
