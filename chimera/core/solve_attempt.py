"""One attempt of the AutonomousAgent: prompt, snapshot, act, review, verify, judge and
revert unless it passed (:mod:`chimera.core.autonomous`, flow step 4).
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
from chimera.core.solve_base import SolveBase
from chimera.core.solve_planning import Planning
from chimera.core.solve_prompts import ACT_SYSTEM
from chimera.core.solve_state import (
    AttemptSeen as _Seen,
)
from chimera.core.solve_state import (
    SolveRun as _Run,
)
from chimera.core.solve_state import (
    StopSolve as _Stop,
)
from chimera.core.solve_state import (
    model_name,
)
from chimera.core.solve_state import (
    write_transcript_json as _write_json,
)

_AUDITED_CHARS = 2000
"""How much of a tool call's arguments and output its audit event keeps (the trajectory
exporter's ``AUDITED_CHARS`` caps the transcript side alike)."""


class Attempting(Planning):
    """One attempt and its verdict (a layer of AutonomousAgent)."""

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
        from chimera.governance.redactor import SecretRedactor

        # Per attempt: a dotenv file written by an earlier attempt's command counts too.
        self._audit_redactor = SecretRedactor.from_environment(workspace=self.workspace)
        agent = Agent(
            backend, run.tools, max_steps=self.config.max_steps, on_event=self._agent_event
        )
        acted = agent.run(messages)
        self.usage.add(acted.usage)
        saved, _ = self._redactor().redact_json(acted.transcript.to_json())
        _write_json(self._attempt_dir / f"{number}.transcript.json", saved)
        if acted.outcome in ("budget", "error"):
            raise _Stop(
                acted.outcome, f"attempt {number} stopped: {acted.error}", acted.budget_limit
            )
        diff, leaked = self._redact_diff(run.guard.diff(snapshot))
        if leaked:
            self._event("secret_in_change", attempt=number, names=list(leaked))
        # The sandbox mode, environment allowlist and budgets are read again by later runs:
        # an agent must never loosen them (``chimera run`` blocks the same at card acceptance).
        config_changed = config_fingerprint(self.workspace) != getattr(self, "_config_before", None)
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
                    reason=self._redactor().cut(review.reason, 500),
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
        from chimera.governance.redactor import SecretRedactor

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
        run.blocked += seen.acted.blocked_calls
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

    def _redacted_call(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A ``tool_call`` event's arguments and output with secrets replaced, their names
        (never values) under ``redacted``.

        The model writes the arguments: a token it read or was given lands there verbatim (a
        pasted ``Authorization`` header, a key written into a file), and the audit log keeps
        what it is handed, so known credential formats and the run's secret values are
        replaced before the write. The tool itself ran with what the model wrote (governance
        judged that); only the record is redacted.
        """
        redactor = self._redactor()
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
        if event == "message":
            self._transcript("message", index=fields["index"], message=fields["message"])
            return
        fields = {"attempt": self._attempt, **fields}
        if event == "tool_call":
            fields = self._redacted_call(fields)
        if event == "model_call":
            fields["transcript"] = self.transcript_path.name
        if event == "step":
            # Steps are progress, not decisions; the tool and model calls are audited.
            if self.on_event is not None:
                self.on_event("step", fields)
            return
        self._event(event, **fields)


class _ReviewBackend:
    """Routes the reviewer's call through the agent's audited, transcribed call path."""

    def __init__(self, owner: SolveBase, inner: SupportsComplete) -> None:
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


def _suspicion(configured: bool, run: _Run, seen: _Seen) -> Suspicion:
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
