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

from collections.abc import Sequence
from pathlib import Path

from chimera.config import AgentConfig
from chimera.core.agent import ToolCaller
from chimera.core.attempts import TaskLedger, Verdict
from chimera.core.checkpoint import SolveCheckpoint
from chimera.core.deps import AgentDeps
from chimera.core.heldout.suspicion import checked_paths
from chimera.core.solve_attempt import Attempt, config_fingerprint
from chimera.core.solve_context import SolveContext
from chimera.core.solve_planning import Planner
from chimera.core.solve_prompts import ACT_SYSTEM
from chimera.core.solve_result import SolveOutcome, SolveResult, render_report
from chimera.core.solve_state import SolveRun, SolveStop, model_name
from chimera.core.spine import Spine
from chimera.errors import UsageError
from chimera.governance.sanitize import fence_untrusted, sanitize
from chimera.spec.model import Risk, Spec
from chimera.spec.results import DriftReport

_RISK_ORDER = [Risk.LOW, Risk.MEDIUM, Risk.HIGH]


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
        # The run context the planner and each attempt share (SWE-agent's retry agent owns a
        # fresh agent per attempt; this agent owns its planner and builds an Attempt each time).
        self.ctx = SolveContext(
            deps,
            workspace=workspace,
            spec=spec,
            run_dir=run_dir,
            config=config,
            review=review,
            spine_tokens=spine_tokens,
            output_limit=output_limit,
            label=label,
        )
        self.planner = Planner(self.ctx)
        self.deps = deps
        self.ladder = self.ctx.ladder
        self.workspace = self.ctx.workspace
        self.spec = spec
        self.runner = deps.runner
        self.run_dir = self.ctx.run_dir
        self.config = config
        self.tool_wrapper = deps.tool_wrapper
        self.cursor = deps.cursor

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
        ctx = self.ctx
        ctx.start(untrusted=untrusted, config_before=config_fingerprint(self.workspace))
        mode = str(getattr(self.runner, "mode", "unknown"))
        weaker = bool(getattr(self.runner, "weaker", mode != "bwrap"))
        describe = getattr(self.runner, "describe", None)
        result = SolveResult(
            outcome="failed",
            attempts=[],
            final_report="",
            sandbox_mode=mode,
            sandbox_weaker=weaker,
            sandbox_description=str(describe()) if callable(describe) else "",
            model=model_name(self.ladder[0]),
            run_dir=self.run_dir,
            tainted=untrusted,
            usage=ctx.usage,
        )
        ctx.event(
            "run_started",
            task=ctx.redactor().cut(sanitize(task), 4000),  # redacted before the cut
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
        except SolveStop as stop:
            result.outcome = stop.outcome
            result.final_report = stop.reason
            result.budget_limit = stop.budget_limit
        result.history_injections = ctx.injections
        result.reviews_unparsed = ctx.reviews_unparsed
        self._finish(result)
        return result

    def _prepare(
        self, task: str, targets: Sequence[str] | None, held: DriftReport | None = None
    ) -> SolveRun:
        """Base check, goal, tools, snapshot store and the Spine: everything before the plan."""
        from chimera.core.workspace import WorkspaceGuard
        from chimera.tools import native_tools

        ctx = self.ctx
        base = ctx.check(None, "base") if held is None else ctx.checked(held, "base")
        red_now = {r.id for r in base.red}
        wanted = list(dict.fromkeys(targets)) if targets else [r.id for r in base.red]
        goal = [t for t in wanted if t in red_now]
        keep_green = sorted(base.green_ids - set(goal))
        already = [t for t in wanted if t not in red_now]
        ctx.event("targets", targets=goal, already_passing=already, keep_green=keep_green)
        hidden = self.deps.heldout.hidden if self.deps.heldout is not None else ()
        spine = Spine(self.workspace, token_budget=ctx.spine_tokens, hidden=hidden).build(
            self.spec, base, goal
        )
        ctx.event(
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
            output_limit=ctx.output_limit,
            hidden=hidden,
        )
        tools: ToolCaller = registry
        if self.tool_wrapper is not None:
            # Governance (GovernedTool / taint) wraps the tools without changing the loop.
            tools = self.tool_wrapper(registry)
        return SolveRun(
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

    def _loop(self, run: SolveRun, result: SolveResult, *, resume: bool = False) -> None:
        """The attempts. A repeated failure signature replans, then escalates (module doc).

        Every call runs under a :func:`~chimera.call_context.call_context` naming
        the targets' highest risk, the attempt number and a repeated signature, so routers
        and effort policies can spend more where it matters without new parameters. Before
        each attempt the solve's state is checkpointed (:class:`SolveCheckpoint`).
        """
        from chimera.call_context import call_context

        by_id = self.spec.by_id()
        risks = [by_id[t].risk for t in run.goal if t in by_id]
        risk = max(risks, key=_RISK_ORDER.index) if risks else Risk.LOW
        ctx = self.ctx
        saved = SolveCheckpoint.load(ctx.attempt_dir) if resume else None
        rung = 0
        replanned_on_rung = False
        repeated: str | None = None
        first = 1
        if saved is None:
            with call_context(risk=risk, attempt=1):
                run.plan = self.planner.plan(rung, run, replan=False)
        else:
            first = self._restore(saved, run, result)
            rung = min(saved.rung, len(self.ladder) - 1)
            replanned_on_rung, repeated = saved.replanned_on_rung, saved.repeated
        for number in range(first, self.config.max_attempts + 1):
            self._checkpoint(number, run, rung, replanned_on_rung, repeated)
            ctx.attempt = number
            result.model = ctx.model = model_name(self.ladder[rung])
            with call_context(risk=risk, attempt=number, repeated_signature=repeated):
                record = Attempt(ctx, number, self.ladder[rung], run).perform()
            result.attempts.append(record)
            self.planner.remember(run, record)
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
                ctx.event(
                    "escalate",
                    attempt=number,
                    signature=record.signature.digest,
                    to_rung=rung,
                    model=model_name(self.ladder[rung]),
                )
            with call_context(risk=risk, attempt=number + 1, repeated_signature=repeated):
                run.plan = self.planner.plan(rung, run, replan=True)
            replanned_on_rung = True

    def _checkpoint(
        self, number: int, run: SolveRun, rung: int, replanned_on_rung: bool, repeated: str | None
    ) -> None:
        ctx = self.ctx
        SolveCheckpoint(
            next_attempt=number,
            history=run.history,
            ledger=run.ledger,
            plan=run.plan,
            rung=rung,
            replanned_on_rung=replanned_on_rung,
            repeated=repeated,
            usage=ctx.usage.to_json(),
            history_injections=ctx.injections,
            reviews_unparsed=ctx.reviews_unparsed,
            backend_position=self.cursor.checkpoint() if self.cursor is not None else None,
        ).save(ctx.attempt_dir, ctx.redactor())

    def _restore(self, saved: SolveCheckpoint, run: SolveRun, result: SolveResult) -> int:
        """Take up an interrupted solve where its checkpoint stood; returns the next attempt."""
        run.history, run.ledger, run.plan = saved.history, saved.ledger, saved.plan
        result.attempts = list(saved.history.records)
        usage, ctx = saved.usage, self.ctx
        ctx.usage.prompt_tokens = int(usage.get("prompt_tokens", 0))
        ctx.usage.completion_tokens = int(usage.get("completion_tokens", 0))
        ctx.usage.cost_usd = usage.get("cost_usd", 0.0)
        ctx.usage.calls = int(usage.get("calls", 0))
        ctx.injections = saved.history_injections
        ctx.reviews_unparsed = saved.reviews_unparsed
        if self.cursor is not None:
            self.cursor.rewind(saved.backend_position)
        ctx.event(
            "history_resumed",
            attempt=saved.next_attempt,
            records=len(saved.history.records),
            distinct=len(saved.history.entries()),
            rung=saved.rung,
        )
        return saved.next_attempt

    def _finish(self, result: SolveResult) -> None:
        result.tainted = result.tainted or self.ctx.tainted
        if not result.final_report:
            result.final_report = render_report(result)
        else:
            result.final_report = result.final_report + "\n" + render_report(result)
        self.ctx.event(
            "run_finished",
            outcome=result.outcome,
            attempts=len(result.attempts),
            tokens=result.tokens,
            cost_usd=result.cost_usd,
            diff=result.diff_stats(),
            sandbox=result.sandbox_mode,
            history_injections=result.history_injections,
        )


__all__ = ["ACT_SYSTEM", "AutonomousAgent", "SolveOutcome", "SolveResult", "model_name"]
