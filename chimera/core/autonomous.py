"""AutonomousAgent: verify-or-revert with the failure carried forward.

One ``solve`` call (DESIGN.md, "Flow of one autonomous change", step 4)::

    base = check_drift(spec)                 # what passes now must keep passing
    targets = red now (or the given ids)
    context = Spine(targets)                 # ownership-scoped files, within a budget
    plan = model(PLAN)
    for attempt in 1..max_attempts:
        snapshot workspace
        Agent(model(ACT), sandboxed tools)   # the tool-calling loop
        diff = real diff from the snapshot
        review = model(REVIEW)               # may send the attempt back
        report = check_drift(targets + base-green, runner=sandbox)
        passed and diff non-empty and review approved -> solved
        passed with an empty diff -> hollow (reported, never success)
        otherwise: record (verifier output, real diff, first failing step), revert, and
            carry the history into the next prompt; on a repeated failure signature make a
            structural change (below)

Structural change on a repeated signature (the carry-forward note, rule 6) — decided here:
the first repeat on a rung **replans** on that rung (``Purpose.REPLAN`` with
``TaskLedger.context()``); a repeat after that replan **escalates** to the next rung of the
ladder, which replans too (a stronger model should not inherit a weaker one's plan). With no
rung left, each further repeat replans again. A repeated record is never appended twice: it
is counted on its first occurrence.

What is *not* an attempt: a provider failure that survives the gateway's transport retries
(LiteLLM's own) ends the run with outcome ``error``; the attempt in flight is reverted and
carries nothing forward. A budget refusal ends the run with outcome ``budget`` after the
revert.

Every model call, tool call, attempt, check result, review, history injection, revert,
replan, escalation and budget refusal is an audit event; ``history_injected`` is the countable
event the benchmark arm uses to prove injection happened.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chimera.atomic import atomic_write_bytes
from chimera.config import AgentConfig
from chimera.core.agent import Agent, AgentResult, ToolCaller, Transcript, UsageTotals
from chimera.core.attempts import (
    AttemptHistory,
    AttemptRecord,
    FailureSignature,
    TaskLedger,
    Verdict,
    approx_tokens,
    cap_text,
)
from chimera.core.checkpoint import SolveCheckpoint
from chimera.core.deps import AgentDeps, Reviewer
from chimera.core.heldout.suspicion import Suspicion, checked_paths, edited_checks
from chimera.core.heldout.verdict import HELD_OUTCOME, PUBLIC_MESSAGE
from chimera.core.spine import Spine
from chimera.core.supervisor import ManagerReview, ReviewVerdict
from chimera.errors import BudgetExceeded, ChimeraError, ProviderError, UsageError
from chimera.governance.sanitize import fence_untrusted, sanitize
from chimera.protocols import (
    Completion,
    Experience,
    Message,
    Purpose,
    SupportsComplete,
)
from chimera.spec.drift import check_drift
from chimera.spec.model import Risk, Spec
from chimera.spec.results import DriftReport, RequirementResult

if TYPE_CHECKING:
    from chimera.core.heldout import HeldOutVerdict
    from chimera.core.workspace import Snapshot, WorkspaceDiff, WorkspaceGuard

SolveOutcome = Literal["solved", "hollow", "failed", "held", "budget", "error"]
BudgetLimit = Literal["tokens", "usd"]
_RISK_ORDER = [Risk.LOW, Risk.MEDIUM, Risk.HIGH]
# The plan prompt's tokens for persona and recalled memories (a reader with its own
# ContextBudget uses that instead).
MEMORY_TOKENS = 2000

ACT_SYSTEM = """\
You are Chimera's worker: you change a software repository until the requirements listed \
below pass. You work only through the tools; every path is relative to the repository root \
and commands run in a sandbox without network.
Rules:
- The Spec decides when the work is done: executable checks run after you. Do the real \
work; never game a check (writing the searched-for text into a comment, hard-coding \
expected output, editing the Spec or the tests).
- Do not change files under specs/, CI workflows, or anything unrelated to the task.
- Read before you edit; keep changes small; run the relevant checks or tests yourself.
- When the change is complete, reply with a short summary of what you changed and no tool \
call."""

PLAN_SYSTEM = """\
You are Chimera's planner. Given a task, the requirements that must pass and the relevant \
files, write a short numbered plan (at most 8 steps) naming the files to change and how. \
Do not write code. Reply with the plan only."""

REPLAN_SYSTEM = """\
You are Chimera's planner. Earlier attempts at this task failed the same way more than \
once; more of the same will fail again. Write a new, structurally different numbered plan \
(at most 8 steps) that avoids every cause listed. Reply with the plan only."""


@dataclass
class SolveResult:
    """How a ``solve`` call ended.

    Attributes:
        outcome: ``solved`` (verification passed with a real change), ``hollow`` (passed
            with no change, or nothing to change), ``failed`` (attempts exhausted),
            ``held`` (attempts exhausted, the last passing the visible requirements and
            failing a held-out one),
            ``budget`` (a budget refused a call), ``error`` (a provider failure or bad input).
        attempts: every attempt's record, in order (the passing one included).
        final_report: a human, multi-line summary.
        files_changed, added, removed: stats of the change left in the workspace (0 unless
            solved).
        usage: tokens and cost over every model call (``usage.cost_usd`` ``None`` = unknown).
        sandbox_mode: the runner's mode (``bwrap``, ``scrubbed``, ``local``...).
        sandbox_weaker: True when the sandbox ran in a mode weaker than bubblewrap.
        targets: the requirement ids the run had to turn green.
        history_injections: how many prompts carried the attempt history.
        reviews_unparsed: manager reviews whose answer held no verdict (no review took place).
        budget_limit: for outcome ``budget``, the ceiling that refused (``tokens`` / ``usd``).
        model: the model of the rung that made the last attempt.
        run_dir: the run's folder (transcript, audit log, snapshots).
        tainted: the task text came from outside (``untrusted=True``).
        suspicion: the last attempt's suspicion line (held-out failures, edited checks, the
            review's verdict; :class:`chimera.core.heldout.Suspicion`).
    """

    outcome: SolveOutcome
    attempts: list[AttemptRecord]
    final_report: str
    files_changed: int = 0
    added: int = 0
    removed: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)
    sandbox_mode: str = ""
    sandbox_weaker: bool = False
    targets: tuple[str, ...] = ()
    history_injections: int = 0
    reviews_unparsed: int = 0
    budget_limit: BudgetLimit | None = None
    model: str = ""
    run_dir: Path | None = None
    tainted: bool = False
    suspicion: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "solved"

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens

    @property
    def cost_usd(self) -> float | None:
        return self.usage.cost_usd

    def diff_stats(self) -> str:
        return f"{self.files_changed} file(s), +{self.added} -{self.removed}"

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "attempts": [a.to_json() for a in self.attempts],
            "final_report": self.final_report,
            "files_changed": self.files_changed,
            "added": self.added,
            "removed": self.removed,
            "usage": self.usage.to_json(),
            "sandbox_mode": self.sandbox_mode,
            "sandbox_weaker": self.sandbox_weaker,
            "targets": list(self.targets),
            "history_injections": self.history_injections,
            "reviews_unparsed": self.reviews_unparsed,
            "budget_limit": self.budget_limit,
            "model": self.model,
            "tainted": self.tainted,
            "suspicion": self.suspicion,
        }


@dataclass
class _Run:
    """What one ``solve`` carries between attempts."""

    guard: WorkspaceGuard
    tools: ToolCaller
    task_block: str
    spine: str
    goal: list[str]
    keep_green: list[str]
    ledger: TaskLedger
    spine_scope: list[str] = field(default_factory=list)
    spine_overflow: bool = False
    history: AttemptHistory = field(default_factory=AttemptHistory)
    plan: str = ""
    checked: set[str] = field(default_factory=set)
    """Paths the visible checks run (for the suspicion line)."""
    suspicion: Suspicion | None = None


@dataclass(frozen=True)
class _Seen:
    """What an attempt produced before the verdict: the loop's result, the real diff, the
    review and the verification report."""

    acted: AgentResult
    diff: WorkspaceDiff
    diff_rel: Path
    review: ReviewVerdict | None
    report: DriftReport
    secrets: tuple[str, ...] = ()
    """Names (never values) of the secrets the change held; its text is redacted."""
    heldout: HeldOutVerdict | None = None
    """Held-out requirements' verdict, asked only when the visible ones all pass."""
    config_changed: bool = False
    """The attempt changed Chimera's own configuration (never accepted)."""


class _Stop(Exception):
    """Ends the attempt loop early with an outcome (budget refusal, provider failure)."""

    def __init__(
        self, outcome: SolveOutcome, reason: str, budget_limit: BudgetLimit | None = None
    ) -> None:
        super().__init__(reason)
        self.outcome = outcome
        self.reason = reason
        self.budget_limit = budget_limit


def model_name(backend: SupportsComplete) -> str:
    """The model a backend speaks for (its ``model`` attribute, else its class name)."""
    name = getattr(backend, "model", None)
    return str(name) if name else type(backend).__name__


class AutonomousAgent:
    """Verify-or-revert over an escalation ladder, with failure carry-forward.

    Args:
        deps: the collaborators (ladder, sandbox runner, audit log, guard, tool governance,
            reviewer, experience store, event sink, big planner): see :class:`AgentDeps`.
            Rung 0 of ``deps.ladder`` makes the first attempt; an escalation moves to the next.
        workspace: the repository root the agent changes.
        spec: the Spec that decides "done".
        run_dir: the run's folder; ``transcript.jsonl`` and ``snapshots/`` go here.
        config: attempts, steps, carry-forward settings.
        review: run the manager review (on by default).
        spine_tokens: token budget of the ownership-scoped context.
        output_limit: bytes of tool output kept (passed to the native tools).
        label: names this agent's files under ``run_dir/attempts/<label>/`` and tags its
            transcript lines, so several agents (one per orchestrator card) can share a run
            folder.

    Raises:
        UsageError: the ladder is empty.
    """

    def __init__(
        self,
        deps: AgentDeps,
        *,
        workspace: Path,
        spec: Spec,
        run_dir: Path,
        config: AgentConfig,
        review: bool = True,
        spine_tokens: int = 8000,
        output_limit: int = 20_000,
        label: str = "solve",
    ) -> None:
        if not deps.ladder:
            raise UsageError("the escalation ladder needs at least one model")
        self.deps = deps
        self.ladder = list(deps.ladder)
        self.workspace = Path(workspace)
        self.spec = spec
        self.runner = deps.runner
        self.run_dir = Path(run_dir)
        self.audit = deps.audit
        self.config = config
        self.experience = deps.experience
        self.on_event = deps.events
        self.review_enabled = review
        self.spine_tokens = spine_tokens
        self.output_limit = output_limit
        self.label = label
        self.tool_wrapper = deps.tool_wrapper
        self.big_planner = deps.big_planner
        self.cursor = deps.cursor
        self.reviewer: Reviewer = deps.reviewer or ManagerReview()
        self.usage = UsageTotals()
        self._attempt = 0
        self._injections = 0
        self._reviews_unparsed = 0
        self._untrusted = self._tainted = False
        self._model = model_name(self.ladder[0])
        self._purpose: Purpose = Purpose.PLAN
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.transcript_path = self.run_dir / "transcript.jsonl"
        self._attempt_dir = self.run_dir / "attempts" / label

    # -- plumbing ------------------------------------------------------------------------------

    def _event(self, event: str, **fields: Any) -> None:
        self.audit.append(event, **fields)
        if self.on_event is not None:
            self.on_event(event, fields)

    def _transcript(self, kind: str, **fields: Any) -> None:
        line = {
            "label": self.label,
            "attempt": self._attempt,
            "purpose": self._purpose.value,
            "kind": kind,
            **fields,
        }
        data = (json.dumps(line, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        fd = os.open(self.transcript_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def _count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by LiteLLM's counter for the current rung's model.

        Falls back to the 4-characters-per-token estimate when LiteLLM is not installed or
        cannot count for the model, so the ceiling still holds approximately.
        """
        try:
            from chimera.providers.pricing import count_tokens

            return count_tokens(self._model, [{"role": "user", "content": text}])
        except Exception:
            return approx_tokens(text)

    def _call(
        self,
        backend: SupportsComplete,
        messages: list[Message],
        purpose: Purpose,
        max_tokens: int | None = None,
    ) -> Completion:
        """One tool-less call (plan, replan, review), audited and written to the transcript.

        ``max_tokens`` ``None`` leaves the cap to the backend: ``models.max_tokens``, or the
        effort level under ``[tool.chimera.effort]`` (a fixed cap here would bound both).
        """
        self._purpose = purpose
        for i, m in enumerate(messages):
            self._transcript("request", index=i, message=m)
        try:
            completion = backend.complete(messages, purpose=purpose, max_tokens=max_tokens)
        except BudgetExceeded as exc:
            self._event("budget_stop", purpose=purpose.value, reason=str(exc))
            raise _Stop(
                "budget", f"budget refused the {purpose.value} call: {exc}", exc.limit
            ) from exc
        except ProviderError as exc:
            self._event("provider_error", purpose=purpose.value, error=str(exc))
            raise _Stop("error", f"{type(exc).__name__}: {exc}") from exc
        self.usage.add(completion.usage)
        self._transcript("response", message=completion.as_message(), model=completion.model)
        self._event(
            "model_call",
            attempt=self._attempt,
            purpose=purpose.value,
            model=completion.model,
            prompt_tokens=completion.usage.prompt_tokens,
            completion_tokens=completion.usage.completion_tokens,
            cost_usd=completion.usage.cost_usd,
            transcript=self.transcript_path.name,
        )
        return completion

    def _check(self, ids: Sequence[str] | None, phase: str) -> DriftReport:
        report = check_drift(
            self.spec,
            self.workspace,
            runner=self.runner,
            only=ids,
            options=self.deps.check_options,
        )
        return self._checked(report, phase)

    def _checked(self, report: DriftReport, phase: str) -> DriftReport:
        """Record a check's results (computed here, or received as the base report)."""
        self._event(
            "check",
            phase=phase,
            attempt=self._attempt,
            results=[
                {"id": r.id, "status": r.status.value, "message": r.message[:300]} for r in report
            ],
        )
        return report

    # -- the loop ------------------------------------------------------------------------------

    def solve(
        self,
        task: str,
        targets: Sequence[str] | None = None,
        *,
        untrusted: bool = False,
        base: DriftReport | None = None,
        resume: bool = False,
    ) -> SolveResult:
        """Make ``targets`` pass without turning any base-green requirement red.

        Args:
            task: what to do, in words (issue text, a user's request).
            targets: requirement ids that must pass; default: every requirement red now.
            untrusted: the task came from outside; the run is recorded as tainted. The task
                is sanitized and fenced as data either way.
            base: the whole Spec's report on the tree as it is now, when the caller holds
                it (the orchestrator checks before every card); default: checked here.
            resume: continue an interrupted solve of the same ``label`` from its checkpoint
                (its attempts, plan and ledger; the workspace must already be reverted to
                where that solve started). Without a checkpoint it starts afresh.

        Raises:
            UsageError: a target id is not in the Spec.
            ChimeraError: ``resume`` and the checkpoint is unreadable.
        """
        unknown = [t for t in targets or () if t not in self.spec.by_id()]
        if unknown:
            raise UsageError(f"--target: unknown requirement id(s): {', '.join(unknown)}")
        self._config_before = _config_fingerprint(self.workspace)
        mode = str(getattr(self.runner, "mode", "unknown"))
        weaker = bool(getattr(self.runner, "weaker", mode != "bwrap"))
        self.usage = UsageTotals()
        self._attempt = self._injections = self._reviews_unparsed = 0
        self._untrusted = self._tainted = untrusted
        result = SolveResult(
            outcome="failed",
            attempts=[],
            final_report="",
            sandbox_mode=mode,
            sandbox_weaker=weaker,
            model=model_name(self.ladder[0]),
            run_dir=self.run_dir,
            tainted=untrusted,
            usage=self.usage,
        )
        self._event(
            "run_started",
            task=sanitize(task)[:4000],
            tainted=untrusted,
            sandbox=mode,
            sandbox_weaker=weaker,
            ladder=[model_name(b) for b in self.ladder],
            max_attempts=self.config.max_attempts,
            diff_feedback=self.config.diff_feedback,
        )
        try:
            run = self._prepare(task, targets, base)
            result.targets = tuple(run.goal)
            if run.goal:
                try:
                    self._loop(run, result, resume=resume)
                finally:
                    if run.suspicion is not None:
                        result.suspicion = run.suspicion.line()
            else:
                result.outcome = "hollow"
                result.final_report = (
                    "Nothing to change: every target requirement already passes. "
                    "A pass without a change is hollow, not a success."
                )
        except _Stop as stop:
            result.outcome = stop.outcome
            result.final_report = stop.reason
            result.budget_limit = stop.budget_limit
        result.history_injections = self._injections
        result.reviews_unparsed = self._reviews_unparsed
        self._finish(result)
        return result

    def _prepare(
        self, task: str, targets: Sequence[str] | None, held: DriftReport | None = None
    ) -> _Run:
        """Base check, goal, tools, snapshot store and the Spine: everything before the plan."""
        from chimera.core.workspace import WorkspaceGuard
        from chimera.tools import native_tools

        base = self._check(None, "base") if held is None else self._checked(held, "base")
        red_now = {r.id for r in base.red}
        wanted = list(dict.fromkeys(targets)) if targets else [r.id for r in base.red]
        goal = [t for t in wanted if t in red_now]
        keep_green = sorted(base.green_ids - set(goal))
        already = [t for t in wanted if t not in red_now]
        self._event("targets", targets=goal, already_passing=already, keep_green=keep_green)
        hidden = self.deps.heldout.hidden if self.deps.heldout is not None else ()
        spine = Spine(self.workspace, token_budget=self.spine_tokens, hidden=hidden).build(
            self.spec, base, goal
        )
        self._event(
            "spine",
            tokens=spine.tokens,
            files=[f.path for f in spine.files],
            truncated=[f.path for f in spine.files if f.truncated],
            omitted=list(spine.omitted),
        )
        registry = native_tools(
            self.workspace,
            self.runner,
            command_timeout=self.config.command_timeout,
            output_limit=self.output_limit,
            hidden=hidden,
        )
        tools: ToolCaller = registry
        if self.tool_wrapper is not None:
            # Governance (GovernedTool / taint) wraps the tools without changing the loop.
            tools = self.tool_wrapper(registry)
        return _Run(
            guard=self.deps.guard or WorkspaceGuard(self.workspace, self.run_dir / "snapshots"),
            tools=tools,
            task_block=fence_untrusted(task, "task"),
            spine=spine.text,
            goal=goal,
            keep_green=keep_green,
            ledger=TaskLedger(sanitize(task)),
            spine_scope=list(dict.fromkeys([*(f.path for f in spine.files), *spine.omitted])),
            spine_overflow=bool(spine.omitted) or any(f.truncated for f in spine.files),
            checked=checked_paths(self.spec, self.workspace),
        )

    def _loop(self, run: _Run, result: SolveResult, *, resume: bool = False) -> None:
        """The attempts. A repeated failure signature replans, then escalates (module doc).

        Every call runs under a :func:`~chimera.context.call_context` naming
        the targets' highest risk, the attempt number and a repeated signature, so routers
        and effort policies can spend more where it matters without new parameters. Before
        each attempt the solve's state is checkpointed (:class:`SolveCheckpoint`).
        """
        from chimera.context import call_context

        by_id = self.spec.by_id()
        risks = [by_id[t].risk for t in run.goal if t in by_id]
        risk = max(risks, key=_RISK_ORDER.index) if risks else Risk.LOW
        saved = SolveCheckpoint.load(self._attempt_dir) if resume else None
        rung = 0
        replanned_on_rung = False
        repeated: str | None = None
        first = 1
        if saved is None:
            with call_context(risk=risk, attempt=1):
                run.plan = self._plan(rung, run, replan=False)
        else:
            first = self._restore(saved, run, result)
            rung = min(saved.rung, len(self.ladder) - 1)
            replanned_on_rung, repeated = saved.replanned_on_rung, saved.repeated
        for number in range(first, self.config.max_attempts + 1):
            self._checkpoint(number, run, rung, replanned_on_rung, repeated)
            self._attempt = number
            result.model = self._model = model_name(self.ladder[rung])
            with call_context(risk=risk, attempt=number, repeated_signature=repeated):
                record = self._one_attempt(number, self.ladder[rung], run)
            result.attempts.append(record)
            self._remember(run, record)
            if record.verdict is Verdict.PASSED:
                result.outcome = "solved"
                result.files_changed, result.added = record.files_changed, record.added
                result.removed = record.removed
                return
            if record.verdict is Verdict.HOLLOW:
                result.outcome = "hollow"
                return
            # Exhausted on a held-out failure: "held", whatever the earlier attempts did.
            result.outcome = "held" if record.verdict is Verdict.HELD_OUT else "failed"
            is_new = run.history.add(record)
            run.ledger.note_attempt(record)
            if is_new or number == self.config.max_attempts:
                continue
            # More feedback about the same dead end will not get out of it: change something.
            repeated = record.signature.digest
            if replanned_on_rung and rung + 1 < len(self.ladder):
                rung += 1
                replanned_on_rung = False
                self._event(
                    "escalate",
                    attempt=number,
                    signature=record.signature.digest,
                    to_rung=rung,
                    model=model_name(self.ladder[rung]),
                )
            with call_context(risk=risk, attempt=number + 1, repeated_signature=repeated):
                run.plan = self._plan(rung, run, replan=True)
            replanned_on_rung = True

    def _checkpoint(
        self, number: int, run: _Run, rung: int, replanned_on_rung: bool, repeated: str | None
    ) -> None:
        SolveCheckpoint(
            next_attempt=number,
            history=run.history,
            ledger=run.ledger,
            plan=run.plan,
            rung=rung,
            replanned_on_rung=replanned_on_rung,
            repeated=repeated,
            usage=self.usage.to_json(),
            history_injections=self._injections,
            reviews_unparsed=self._reviews_unparsed,
            backend_position=self.cursor.checkpoint() if self.cursor is not None else None,
        ).save(self._attempt_dir)

    def _restore(self, saved: SolveCheckpoint, run: _Run, result: SolveResult) -> int:
        """Take up an interrupted solve where its checkpoint stood; returns the next attempt."""
        run.history, run.ledger, run.plan = saved.history, saved.ledger, saved.plan
        result.attempts = list(saved.history.records)
        usage = saved.usage
        self.usage.prompt_tokens = int(usage.get("prompt_tokens", 0))
        self.usage.completion_tokens = int(usage.get("completion_tokens", 0))
        self.usage.cost_usd = usage.get("cost_usd", 0.0)
        self.usage.calls = int(usage.get("calls", 0))
        self._injections = saved.history_injections
        self._reviews_unparsed = saved.reviews_unparsed
        if self.cursor is not None:
            self.cursor.rewind(saved.backend_position)
        self._event(
            "history_resumed",
            attempt=saved.next_attempt,
            records=len(saved.history.records),
            distinct=len(saved.history.entries()),
            rung=saved.rung,
        )
        return saved.next_attempt

    def _plan(self, rung: int, run: _Run, *, replan: bool) -> str:
        purpose = Purpose.REPLAN if replan else Purpose.PLAN
        if self.big_planner is not None and run.spine_overflow:
            return self._plan_delegated(rung, run, replan=replan)
        parts = [f"# Task\n{run.task_block}", run.spine]
        lessons = self._lessons(run.ledger.task)
        if lessons:
            parts.append(lessons)
        recalled = self._recall(run.ledger.task)
        if recalled:
            parts.append(recalled)
        if replan:
            parts.append(run.ledger.context())
        messages: list[Message] = [
            {"role": "system", "content": REPLAN_SYSTEM if replan else PLAN_SYSTEM},
            {"role": "user", "content": "\n\n".join(parts)},
        ]
        completion = self._call(self.ladder[rung], messages, purpose)
        plan = completion.text.strip() or "(the planner returned no plan)"
        run.ledger.note_plan(plan)
        self._event(
            purpose.value,
            attempt=self._attempt,
            rung=rung,
            model=model_name(self.ladder[rung]),
            plan=cap_text(plan, 2000),
            ledger=run.ledger.context() if replan else None,
        )
        return plan

    def _plan_delegated(self, rung: int, run: _Run, *, replan: bool) -> str:
        """The plan step over a Spine too big for one context: delegated reading."""
        assert self.big_planner is not None
        purpose = Purpose.REPLAN if replan else Purpose.PLAN
        self._purpose = purpose
        failures = run.ledger.context() if replan else ""
        try:
            plan = self.big_planner(run.task_block, run.spine_scope, failures).strip()
        except BudgetExceeded as exc:
            self._event("budget_stop", purpose=purpose.value, reason=str(exc))
            raise _Stop("budget", f"budget refused the delegated plan: {exc}", exc.limit) from exc
        except ChimeraError as exc:
            self._event("provider_error", purpose=purpose.value, error=str(exc))
            raise _Stop("error", f"{type(exc).__name__}: {exc}") from exc
        plan = plan or "(the planner returned no plan)"
        run.ledger.note_plan(plan)
        self._event(
            purpose.value,
            attempt=self._attempt,
            rung=rung,
            model="hierarchy",
            via="hierarchy",
            files=len(run.spine_scope),
            plan=cap_text(plan, 2000),
            ledger=failures or None,
        )
        return plan

    def _recall(self, task: str) -> str:
        """Persona and memories for the plan (the memory part's reader, within its budget)."""
        if self.deps.memory is None:
            return ""
        found = self.deps.memory.recall_block(task, budget_tokens=MEMORY_TOKENS)
        if found.tainted and not self._tainted:
            # A tainted memory was read: what this run writes next is tainted too.
            self._tainted = True
            self._event("memory_tainted", ids=list(found.ids))
        return found.text

    def _lessons(self, task: str) -> str:
        if self.experience is None:
            return ""
        found = [exp for _, exp in self.experience.similar(task, 3, failures_only=True)]
        if not found:
            return ""
        trusted = [e for e in found if not e.tainted]
        tainted = [e for e in found if e.tainted]
        blocks = ["## Lessons from earlier, similar tasks (approaches that failed)"]
        if trusted:
            text = "\n".join(e.lesson() for e in trusted)
            blocks.append(fence_untrusted(text, "experience from trusted runs"))
        if tainted:
            # An untrusted run's task text must not reach this prompt as advice: it stays
            # data with its provenance, and reading it taints this run (what it writes next
            # is tainted too).
            self._tainted = True
            self._event(
                "memory_read",
                source="experience",
                provenance="tainted",
                runs=sorted({e.run_id for e in tainted}),
            )
            text = "\n".join(
                f"{e.lesson()} [provenance: tainted; run {e.run_id or '?'}; sources "
                f"{', '.join(e.taint_sources) or 'unknown'}]"
                for e in tainted
            )
            blocks.append(fence_untrusted(text, "experience from untrusted runs - tainted"))
        return "\n".join(blocks)

    def _prompt(self, number: int, run: _Run) -> list[Message]:
        """The attempt's messages: task, Spine, plan and — from attempt 2 — the history."""
        user = [f"# Task\n{run.task_block}", run.spine, f"# Plan\n{run.plan}"]
        if run.history.records:
            rendered = run.history.render(
                diff_feedback=self.config.diff_feedback,
                token_ceiling=self.config.history_token_ceiling,
                count_tokens=self._count_tokens,
            )
            user.append(rendered.text)
            self._injections += 1
            self._event(
                "history_injected",
                attempt=number,
                diff_feedback=self.config.diff_feedback,
                **rendered.audit_fields(),
            )
        return [
            {"role": "system", "content": ACT_SYSTEM},
            {"role": "user", "content": "\n\n".join(user)},
        ]

    def _one_attempt(self, number: int, backend: SupportsComplete, run: _Run) -> AttemptRecord:
        """Snapshot, act, review, verify; revert unless it passed. Returns the record."""
        self._event("attempt_started", attempt=number, model=model_name(backend), label=self.label)
        messages = self._prompt(number, run)
        snapshot = run.guard.snapshot(f"{self.label}-attempt-{number}")
        # A crash from here on is undone on resume with WorkspaceGuard.load(store, id).
        self._event("snapshot", attempt=number, snapshot=snapshot.id, store="snapshots")
        tokens_before, cost_before = self.usage.total_tokens, self.usage.cost_usd
        try:
            seen = self._act_review_verify(number, backend, run, messages, snapshot)
        except BaseException as exc:
            # A budget refusal, provider failure or crash is not an attempt: undo and stop.
            run.guard.restore(snapshot)
            reason = exc.outcome if isinstance(exc, _Stop) else "exception"
            self._event("revert", attempt=number, reason=reason)
            raise
        cost = None
        if self.usage.cost_usd is not None and cost_before is not None:
            cost = self.usage.cost_usd - cost_before
        record = self._judge(number, model_name(backend), run, seen)
        record = dataclasses.replace(
            record, tokens=self.usage.total_tokens - tokens_before, cost_usd=cost
        )
        self._event("attempt", **record.to_json())
        if record.verdict is Verdict.PASSED:
            run.guard.discard(snapshot)
        else:
            # The diff was captured before this revert: after it, nothing on disk remembers
            # the bad path.
            run.guard.restore(snapshot)
            self._event("revert", attempt=number, reason=record.verdict.value)
        return record

    def _act_review_verify(
        self,
        number: int,
        backend: SupportsComplete,
        run: _Run,
        messages: list[Message],
        snapshot: Snapshot,
    ) -> _Seen:
        self._purpose = Purpose.ACT
        # The tools as the model saw them: a trajectory export's `tools` column.
        self._transcript("tools", tools=run.tools.schemas())
        agent = Agent(
            backend, run.tools, max_steps=self.config.max_steps, on_event=self._agent_event
        )
        acted = agent.run(messages)
        self.usage.add(acted.usage)
        _write_json(self._attempt_dir / f"{number}.transcript.json", acted.transcript)
        if acted.outcome in ("budget", "error"):
            raise _Stop(
                acted.outcome, f"attempt {number} stopped: {acted.error}", acted.budget_limit
            )
        diff, leaked = self._redact_diff(run.guard.diff(snapshot))
        if leaked:
            self._event("secret_in_change", attempt=number, names=list(leaked))
        # The sandbox mode, environment allowlist and budgets are read again by later runs:
        # an agent must never loosen them (``chimera run`` blocks the same at card acceptance).
        config_changed = _config_fingerprint(self.workspace) != getattr(
            self, "_config_before", None
        )
        if config_changed:
            self._event("config_changed", attempt=number)
        diff_rel = Path("attempts") / self.label / f"{number}.diff"
        atomic_write_bytes(self.run_dir / diff_rel, diff.text.encode("utf-8"))
        review: ReviewVerdict | None = None
        if self.review_enabled and not diff.is_empty:
            review = self.reviewer.review(
                _ReviewBackend(self, backend),
                task=run.task_block,
                targets=run.goal,
                diff=diff.text,
                summary=acted.final_text,
                plan=run.plan,
            )
            if review.parsed:
                self._event(
                    "review",
                    attempt=number,
                    approved=review.approved,
                    parsed=True,
                    reason=review.reason[:500],
                )
            else:
                # No verdict in the answer: no review took place (never an approval).
                self._reviews_unparsed += 1
                self._event(
                    "review_unparsed",
                    attempt=number,
                    model=review.model,
                    answer=cap_text(sanitize(review.raw), 300),
                )
                review = None
        report = self._check([*run.goal, *run.keep_green], f"attempt-{number}")
        heldout = None
        gate = self.deps.heldout
        visible_pass = set(run.goal) | set(run.keep_green) <= report.green_ids
        if gate is not None and not diff.is_empty and not leaked and visible_pass:
            # Acceptance alone asks; the agent hears only PUBLIC_MESSAGE (see _judge).
            label = f"{self.label}-attempt-{number}"
            heldout = gate.check(self.spec, report.green_ids, label=label)
        return _Seen(acted, diff, diff_rel, review, report, leaked, heldout, config_changed)

    def _redact_diff(self, diff: WorkspaceDiff) -> tuple[WorkspaceDiff, tuple[str, ...]]:
        """``diff`` with secret values replaced, and their names (never values).

        A command of the run (a test the agent wrote, a spec check) may copy a credential into
        a file where no tool output passed the governance redactor — under the weaker
        scrubbed sandbox the workspace's ``.env`` stays readable. The diff is what the record,
        the review, the retry prompt, the run folder and the pull request would carry, so it
        is redacted here and the attempt is judged ``secret_in_change``.
        """
        from chimera.governance.guard import SecretRedactor

        redactor = SecretRedactor.from_environment(workspace=self.workspace)
        text, names = redactor.redact(diff.text)
        if not names:
            return diff, ()
        return dataclasses.replace(diff, text=text), tuple(dict.fromkeys(names))

    def _judge(self, number: int, model: str, run: _Run, seen: _Seen) -> AttemptRecord:
        """The verdict: a secret in the change first (never accepted), then the checks (they
        decide), then emptiness, then the review."""
        results = seen.report.by_id()
        still_red = [results[t] for t in run.goal if t in results and not results[t].passed]
        broke = [results[t] for t in run.keep_green if t in results and not results[t].passed]
        reason = ""
        if seen.secrets:
            verdict, reason = Verdict.SECRET_IN_CHANGE, ", ".join(seen.secrets)
        elif seen.config_changed:
            verdict = Verdict.CONFIG_CHANGED
        elif broke:
            verdict = Verdict.REGRESSION
        elif still_red and seen.acted.outcome != "finished":
            verdict, reason = Verdict.AGENT_STOPPED, seen.acted.outcome
        elif still_red:
            verdict = Verdict.VERIFY_FAILED
        elif seen.diff.is_empty:
            verdict = Verdict.HOLLOW
        elif seen.heldout is not None and not seen.heldout.passed:
            verdict = Verdict.HELD_OUT
        elif seen.review is not None and not seen.review.approved:
            verdict = Verdict.REVIEW_REJECTED
        else:
            verdict = Verdict.PASSED
        red = [*broke, *still_red]
        rejected = seen.review is not None and not seen.review.approved
        run.suspicion = _suspicion(self.deps.heldout is not None, run, seen)
        return AttemptRecord.build(
            number=number,
            verdict=verdict,
            signature=FailureSignature.from_results(verdict, red, reason=reason),
            cause=_cause(verdict, still_red, broke, seen.acted, seen.review, seen.secrets),
            verifier_output=(
                PUBLIC_MESSAGE
                if verdict is Verdict.HELD_OUT
                else "\n".join(_render(r) for r in red)
            ),
            diff=seen.diff.text,
            record_diff_chars=self.config.record_diff_chars,
            files_changed=seen.diff.files_changed,
            added=seen.diff.added,
            removed=seen.diff.removed,
            first_failing_step=seen.acted.first_failure,
            agent_outcome=seen.acted.outcome,
            review=seen.review.reason if seen.review is not None and rejected else None,
            model=model,
            diff_path=seen.diff_rel.as_posix(),
        )

    def _agent_event(self, event: str, fields: dict[str, Any]) -> None:
        if event == "message":
            self._transcript("message", index=fields["index"], message=fields["message"])
            return
        fields = {"attempt": self._attempt, **fields}
        if event == "model_call":
            fields["transcript"] = self.transcript_path.name
        if event == "step":
            # Steps are progress, not decisions; the tool and model calls are audited.
            if self.on_event is not None:
                self.on_event("step", fields)
            return
        self._event(event, **fields)

    def _remember(self, run: _Run, record: AttemptRecord) -> None:
        if self.experience is None:
            return
        failed = record.verdict is not Verdict.PASSED
        self.experience.append(
            Experience(
                task=run.ledger.task,
                verdict=record.verdict.value,
                signature=record.signature.digest if failed else "",
                cause=record.cause if failed else "",
                files_changed=record.files_changed,
                added=record.added,
                removed=record.removed,
                tokens=record.tokens,
                cost_usd=record.cost_usd,
                model=record.model,
                run_id=self.audit.run_id,
                attempt=record.number,
                targets=tuple(run.goal),
                provenance="tainted" if self._tainted else "trusted",
                taint_sources=tuple(self._taint_sources()),
            )
        )

    def _taint_sources(self) -> list[str]:
        if not self._tainted:
            return []
        return ["untrusted_task"] if self._untrusted else ["memory"]

    def _finish(self, result: SolveResult) -> None:
        result.tainted = result.tainted or self._tainted
        if not result.final_report:
            result.final_report = _report(result)
        else:
            result.final_report = result.final_report + "\n" + _report(result)
        self._event(
            "run_finished",
            outcome=result.outcome,
            attempts=len(result.attempts),
            tokens=result.tokens,
            cost_usd=result.cost_usd,
            diff=result.diff_stats(),
            sandbox=result.sandbox_mode,
            history_injections=result.history_injections,
        )


class _ReviewBackend:
    """Routes the reviewer's call through the agent's audited, transcribed call path."""

    def __init__(self, owner: AutonomousAgent, inner: SupportsComplete) -> None:
        self.owner = owner
        self.inner = inner
        self.model = model_name(inner)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Any = None,
        purpose: Purpose = Purpose.REVIEW,
        max_tokens: int | None = None,
    ) -> Completion:
        return self.owner._call(self.inner, list(messages), purpose, max_tokens)


def _write_json(path: Path, transcript: Transcript) -> None:
    """The attempt's whole Agent transcript, written atomically (resumable, inspectable)."""
    data = json.dumps(transcript.to_json(), ensure_ascii=False, default=str, indent=1)
    atomic_write_bytes(path, data.encode("utf-8"))


def _suspicion(configured: bool, run: _Run, seen: _Seen) -> Suspicion:
    """The attempt's three signals (see :mod:`chimera.core.heldout.suspicion`)."""
    if not configured:
        heldout: Literal["failed", "passed", "not configured", "not checked"] = "not configured"
    elif seen.heldout is None:
        heldout = "not checked"
    else:
        heldout = "passed" if seen.heldout.passed else "failed"
    changed = {p for f in seen.diff.files for p in (f.path, f.source) if p}
    review = seen.review
    return Suspicion(
        heldout=heldout,
        edited=edited_checks(sorted(changed), seen.diff.text, run.checked),
        review="none" if review is None else "approved" if review.approved else "rejected",
    )


def _render(result: RequirementResult) -> str:
    return f"[{result.id}] {result.status.value}: " + result.render(max_evidence=3)


def _cause(
    verdict: Verdict,
    still_red: list[RequirementResult],
    broke: list[RequirementResult],
    run: AgentResult,
    review: ReviewVerdict | None,
    secrets: Sequence[str] = (),
) -> str:
    def names(rs: list[RequirementResult]) -> str:
        return "; ".join(f"{r.id} ({r.status.value}: {r.message[:160]})" for r in rs)

    if verdict is Verdict.CONFIG_CHANGED:
        return (
            "the change edits Chimera's own configuration ([tool.chimera] / chimera.toml); "
            "an agent never changes it (the attempt was reverted)"
        )
    if verdict is Verdict.SECRET_IN_CHANGE:
        return (
            f"the change holds secret value(s) ({', '.join(secrets)}); a secret never goes "
            "into a change (it was redacted from this record and the attempt reverted)"
        )
    if verdict is Verdict.REGRESSION:
        text = f"broke requirement(s) that passed before: {names(broke)}"
        return text + (f"; still red: {names(still_red)}" if still_red else "")
    if verdict is Verdict.AGENT_STOPPED:
        return f"the tool loop stopped ({run.outcome} after {run.steps} steps); still red: " + (
            names(still_red)
        )
    if verdict is Verdict.VERIFY_FAILED:
        return f"verification failed; still red: {names(still_red)}"
    if verdict is Verdict.REVIEW_REJECTED:
        return f"the manager review sent it back: {review.reason if review else ''}"
    if verdict is Verdict.HOLLOW:
        return "verification passed but the attempt changed nothing (hollow)"
    if verdict is Verdict.HELD_OUT:
        return PUBLIC_MESSAGE
    return "passed"


def _report(result: SolveResult) -> str:
    cost = "unknown" if result.cost_usd is None else f"${result.cost_usd:.4f}"
    sandbox = result.sandbox_mode + (" (weaker: no bubblewrap)" if result.sandbox_weaker else "")
    lines = [
        f"outcome: {result.outcome}",
        f"attempts: {len(result.attempts)}"
        + (
            " (" + ", ".join(f"{a.number}: {a.verdict.value}" for a in result.attempts) + ")"
            if result.attempts
            else ""
        ),
        f"targets: {', '.join(result.targets) or '(none)'}",
        f"tokens: {result.tokens}",
        f"cost: {cost}",
        f"diff: {result.diff_stats()}",
        f"sandbox: {sandbox}",
        f"history injections: {result.history_injections}",
    ]
    if result.reviews_unparsed:
        lines.append(
            f"reviews unparsed: {result.reviews_unparsed} (no verdict in the reviewer's answer: "
            "no review took place, the checks alone decided)"
        )
    if result.tainted:
        lines.append("task: untrusted (tainted run)")
    if result.outcome == "held":
        lines.insert(1, HELD_OUTCOME)
    if result.suspicion:
        lines.append(result.suspicion)
    return "\n".join(lines)


__all__ = ["ACT_SYSTEM", "AutonomousAgent", "SolveOutcome", "SolveResult", "model_name"]


def _config_fingerprint(root: Path) -> str:
    """Chimera's effective configuration at ``root`` as text (or the error that stops it
    loading): what a later run would read."""
    from chimera.config import load_config
    from chimera.errors import ChimeraError

    try:
        return load_config(root).model_dump_json()
    except ChimeraError as exc:
        return f"invalid: {exc}"
