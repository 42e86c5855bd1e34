"""The AutonomousAgent's plumbing: its state, the audit and transcript writers, the
audited tool-less model call and the checks (:mod:`chimera.core.autonomous`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.config import AgentConfig
from chimera.core.agent import UsageTotals
from chimera.core.attempts import approx_tokens
from chimera.core.deps import AgentDeps, Reviewer
from chimera.core.solve_state import StopSolve as _Stop
from chimera.core.solve_state import model_name
from chimera.core.supervisor import ManagerReview
from chimera.errors import BudgetExceeded, ProviderError, UsageError
from chimera.localstate import make_dirs
from chimera.protocols import Completion, Message, Purpose, SupportsComplete
from chimera.spec.drift import check_drift
from chimera.spec.model import Spec
from chimera.spec.results import DriftReport

if TYPE_CHECKING:
    from chimera.governance.redactor import SecretRedactor


class SolveBase:
    """The agent's state and plumbing; :class:`~chimera.core.autonomous.AutonomousAgent` documents
    the constructor's arguments and errors."""

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
        # Redacts tool calls on their way to the audit log (built per attempt, see Attempting).
        self._audit_redactor: SecretRedactor | None = None
        make_dirs(self.run_dir)
        self.transcript_path = self.run_dir / "transcript.jsonl"
        self._attempt_dir = self.run_dir / "attempts" / label

    def _redactor(self) -> SecretRedactor:
        """The attempt's redactor (built on first use; rebuilt per attempt, see Attempting)."""
        if self._audit_redactor is None:
            from chimera.governance.redactor import SecretRedactor

            self._audit_redactor = SecretRedactor.from_environment(workspace=self.workspace)
        return self._audit_redactor

    def _event(self, event: str, **fields: Any) -> None:
        # An attempt record carries a failing call's arguments, a review its model's words:
        # every audited field passes the redactor, not only the tool calls'.
        from chimera.governance.audit_chain import jsonable

        fields, _ = self._redactor().redact_json(fields, default=jsonable)
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
        # The run folder is uploaded as an artifact: a token the model wrote into a call, or a
        # secret value a tool read back, is replaced here as in the audit log (both sides
        # redacted alike, so the trajectory exporter's transcript/audit check still holds).
        line, _ = self._redactor().redact_json(line)
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
                {
                    "id": r.id,
                    "status": r.status.value,
                    "message": self._redactor().cut(r.message, 300),
                }
                for r in report
            ],
        )
        return report
