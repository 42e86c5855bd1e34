"""One Attempt of the AutonomousAgent: prompt, snapshot, act, review, verify, judge and
revert unless it passed (:mod:`chimera.core.autonomous`, flow step 4). The agent builds a fresh
:class:`Attempt` per attempt over its run context.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chimera.atomic import atomic_write_bytes
from chimera.core.agent import Agent, AgentResult
from chimera.core.attempts import AttemptRecord, FailureSignature, Verdict, cap_text
from chimera.core.heldout.suspicion import Suspicion, edited_checks
from chimera.core.heldout.verdict import PUBLIC_MESSAGE
from chimera.core.supervisor import ReviewVerdict
from chimera.errors import ChimeraError
from chimera.governance.sanitize import sanitize
from chimera.protocols import Completion, Message, Purpose, SupportsComplete
from chimera.spec.results import RequirementResult

if TYPE_CHECKING:
    from chimera.core.workspace import Snapshot, WorkspaceDiff
from chimera.core.solve_context import SolveContext
from chimera.core.solve_prompts import ACT_SYSTEM
from chimera.core.solve_state import AttemptSeen, SolveRun, SolveStop, model_name, write_transcript

_AUDITED_CHARS = 2000
"""How much of a tool call's arguments and output its audit event keeps (the trajectory
exporter's ``AUDITED_CHARS`` caps the transcript side alike)."""


class Attempt:
    """One attempt and its verdict: built by the agent per attempt, run once by :meth:`perform`.

    Args:
        ctx: the agent's run context (audit, transcript, usage, checks).
        number: the attempt's number (1-based) in the solve.
        backend: the ladder rung's model that acts.
        run: the solve's state (tools, guard, goal, plan, history).
    """

    def __init__(
        self, ctx: SolveContext, number: int, backend: SupportsComplete, run: SolveRun
    ) -> None:
        self.ctx = ctx
        self.number = number
        self.backend = backend
        self.run = run

    def _prompt(self) -> list[Message]:
        """The attempt's messages: task, Spine, plan and — from attempt 2 — the history."""
        ctx, run, config = self.ctx, self.run, self.ctx.config
        user = [f"# Task\n{run.task_block}", run.spine, f"# Plan\n{run.plan}"]
        if run.history.records:
            rendered = run.history.render(
                diff_feedback=config.diff_feedback,
                token_ceiling=config.history_token_ceiling,
                count_tokens=ctx.count_tokens,
            )
            user.append(rendered.text)
            ctx.injections += 1
            ctx.event(
                "history_injected",
                attempt=self.number,
                diff_feedback=config.diff_feedback,
                **rendered.audit_fields(),
            )
        return [
            {"role": "system", "content": ACT_SYSTEM},
            {"role": "user", "content": "\n\n".join(user)},
        ]

    def perform(self) -> AttemptRecord:
        """Snapshot, act, review, verify; revert unless it passed. Returns the record.

        Raises:
            SolveStop: the budget refused a call or the provider failed (the workspace reverted).
        """
        ctx, run, number = self.ctx, self.run, self.number
        ctx.event(
            "attempt_started", attempt=number, model=model_name(self.backend), label=ctx.label
        )
        messages = self._prompt()
        snapshot = run.guard.snapshot(f"{ctx.label}-attempt-{number}")
        # A crash from here on is undone on resume with WorkspaceGuard.load(store, id).
        ctx.event("snapshot", attempt=number, snapshot=snapshot.id, store="snapshots")
        tokens_before, cost_before = ctx.usage.total_tokens, ctx.usage.cost_usd
        try:
            seen = self._act_review_verify(messages, snapshot)
        except BaseException as exc:
            # A budget refusal, provider failure or crash is not an attempt: undo and stop.
            run.guard.restore(snapshot)
            reason = exc.outcome if isinstance(exc, SolveStop) else "exception"
            ctx.event("revert", attempt=number, reason=reason)
            raise
        cost = None
        if ctx.usage.cost_usd is not None and cost_before is not None:
            cost = ctx.usage.cost_usd - cost_before
        record = self._judge(model_name(self.backend), seen)
        record = dataclasses.replace(
            record, tokens=ctx.usage.total_tokens - tokens_before, cost_usd=cost
        )
        ctx.event("attempt", **record.to_json())
        if record.verdict is Verdict.PASSED:
            run.guard.discard(snapshot)
        else:
            # The diff was captured before this revert: after it, nothing on disk remembers
            # the bad path.
            run.guard.restore(snapshot)
            ctx.event("revert", attempt=number, reason=record.verdict.value)
        return record

    def _act_review_verify(self, messages: list[Message], snapshot: Snapshot) -> AttemptSeen:
        ctx, run, number, backend = self.ctx, self.run, self.number, self.backend
        ctx.purpose = Purpose.ACT
        # The tools as the model saw them: a trajectory export's `tools` column.
        ctx.transcript("tools", tools=run.tools.schemas())
        # Per attempt: a dotenv file written by an earlier attempt's command counts too.
        ctx.renew_redactor()
        agent = Agent(
            backend, run.tools, max_steps=ctx.config.max_steps, on_event=self._agent_event
        )
        acted = agent.run(messages)
        ctx.usage.add(acted.usage)
        saved, _ = ctx.redactor().redact_json(acted.transcript.to_json())
        write_transcript(ctx.attempt_dir / f"{number}.transcript.json", saved)
        if acted.outcome in ("budget", "error"):
            raise SolveStop(
                acted.outcome, f"attempt {number} stopped: {acted.error}", acted.budget_limit
            )
        diff, leaked = self._redact_diff(run.guard.diff(snapshot))
        if leaked:
            ctx.event("secret_in_change", attempt=number, names=list(leaked))
        # The sandbox mode, environment allowlist and budgets are read again by later runs:
        # an agent must never loosen them (``chimera run`` blocks the same at card acceptance).
        config_changed = config_fingerprint(ctx.workspace) != ctx.config_before
        if config_changed:
            ctx.event("config_changed", attempt=number)
        diff_rel = Path("attempts") / ctx.label / f"{number}.diff"
        atomic_write_bytes(ctx.run_dir / diff_rel, diff.text.encode("utf-8"))
        review: ReviewVerdict | None = None
        if ctx.review_enabled and not diff.is_empty:
            review = ctx.reviewer.review(
                _ReviewBackend(ctx, backend),
                task=run.task_block,
                targets=run.goal,
                diff=diff.text,
                summary=acted.final_text,
                plan=run.plan,
            )
            if review.parsed:
                ctx.event(
                    "review",
                    attempt=number,
                    approved=review.approved,
                    parsed=True,
                    reason=ctx.redactor().cut(review.reason, 500),
                )
            else:
                # No verdict in the answer: no review took place (never an approval).
                ctx.reviews_unparsed += 1
                ctx.event(
                    "review_unparsed",
                    attempt=number,
                    model=review.model,
                    answer=cap_text(sanitize(review.raw), 300),
                )
                review = None
        report = ctx.check([*run.goal, *run.keep_green], f"attempt-{number}")
        heldout = None
        gate = ctx.deps.heldout
        visible_pass = set(run.goal) | set(run.keep_green) <= report.green_ids
        if gate is not None and not diff.is_empty and not leaked and visible_pass:
            # Acceptance alone asks; the agent hears only PUBLIC_MESSAGE (see _judge).
            label = f"{ctx.label}-attempt-{number}"
            heldout = gate.check(ctx.spec, report.green_ids, label=label)
        return AttemptSeen(acted, diff, diff_rel, review, report, leaked, heldout, config_changed)

    def _redact_diff(self, diff: WorkspaceDiff) -> tuple[WorkspaceDiff, tuple[str, ...]]:
        """``diff`` with secret values replaced, and their names (never values).

        A command of the run (a test the agent wrote, a spec check) may copy a credential into
        a file where no tool output passed the governance redactor — under the weaker
        scrubbed sandbox the workspace's ``.env`` stays readable. The diff is what the record,
        the review, the retry prompt, the run folder and the pull request would carry, so it
        is redacted here and the attempt is judged ``secret_in_change``.
        """
        from chimera.governance.redactor import SecretRedactor

        redactor = SecretRedactor.from_environment(workspace=self.ctx.workspace)
        text, names = redactor.redact(diff.text)
        if not names:
            return diff, ()
        return dataclasses.replace(diff, text=text), tuple(dict.fromkeys(names))

    def _judge(self, model: str, seen: AttemptSeen) -> AttemptRecord:
        """The verdict: a secret in the change first (never accepted), then the checks (they
        decide), then emptiness, then the review."""
        run = self.run
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
        run.blocked += seen.acted.blocked_calls
        run.suspicion = _suspicion(self.ctx.deps.heldout is not None, run, seen)
        return AttemptRecord.build(
            number=self.number,
            verdict=verdict,
            signature=FailureSignature.from_results(verdict, red, reason=reason),
            cause=_cause(verdict, still_red, broke, seen.acted, seen.review, seen.secrets),
            verifier_output=(
                PUBLIC_MESSAGE
                if verdict is Verdict.HELD_OUT
                else "\n".join(_render(r) for r in red)
            ),
            diff=seen.diff.text,
            record_diff_chars=self.ctx.config.record_diff_chars,
            files_changed=seen.diff.files_changed,
            added=seen.diff.added,
            removed=seen.diff.removed,
            first_failing_step=seen.acted.first_failure,
            agent_outcome=seen.acted.outcome,
            review=seen.review.reason if seen.review is not None and rejected else None,
            model=model,
            diff_path=seen.diff_rel.as_posix(),
        )

    def _redacted_call(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A ``tool_call`` event's arguments and output with secrets replaced, their names
        (never values) under ``redacted``.

        The model writes the arguments: a token it read or was given lands there verbatim (a
        pasted ``Authorization`` header, a key written into a file), and the audit log keeps
        what it is handed, so known credential formats and the run's secret values are
        replaced before the write. The tool itself ran with what the model wrote (governance
        judged that); only the record is redacted.
        """
        redactor = self.ctx.redactor()
        names: list[str] = []
        for key in ("arguments", "output"):
            value = fields.get(key)
            if isinstance(value, str):
                text, found = redactor.redact(value)
                # Capped after redaction, as the exporter caps the (redacted) transcript.
                fields[key] = text[:_AUDITED_CHARS]
                names.extend(found)
        if names:
            fields["redacted"] = sorted(set(names))
        return fields

    def _agent_event(self, event: str, fields: dict[str, Any]) -> None:
        ctx = self.ctx
        if event == "message":
            ctx.transcript("message", index=fields["index"], message=fields["message"])
            return
        fields = {"attempt": ctx.attempt, **fields}
        if event == "tool_call":
            fields = self._redacted_call(fields)
        if event == "model_call":
            fields["transcript"] = ctx.transcript_path.name
        if event == "step":
            # Steps are progress, not decisions; the tool and model calls are audited.
            if ctx.on_event is not None:
                ctx.on_event("step", fields)
            return
        ctx.event(event, **fields)


class _ReviewBackend:
    """Routes the reviewer's call through the agent's audited, transcribed call path."""

    def __init__(self, owner: SolveContext, inner: SupportsComplete) -> None:
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
        return self.owner.call(self.inner, list(messages), purpose, max_tokens)


def _suspicion(configured: bool, run: SolveRun, seen: AttemptSeen) -> Suspicion:
    """The attempt's signals (see :mod:`chimera.core.heldout.suspicion`); blocked calls
    count over every attempt of the solve so far."""
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
        blocked=run.blocked,
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


def config_fingerprint(root: Path) -> str:
    """Chimera's effective configuration at ``root`` as text (or the error that stops it
    loading): what a later run would read."""
    from chimera.config import load_config

    try:
        return load_config(root).model_dump_json()
    except ChimeraError as exc:
        return f"invalid: {exc}"
