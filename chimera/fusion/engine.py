"""FusionEngine: a panel of models, a judge's structured analysis, and a synthesizer.

One request runs through every panel member concurrently (threads: the calls are I/O-bound);
the judge maps the answers into a :class:`~chimera.fusion.analysis.FusionAnalysis`; the
synthesizer writes the final answer grounded in that map. The engine is itself a
``SupportsComplete`` backend, so it plugs in wherever a model is expected — for turns without
tools: fusion does not call tools, and a request with tool schemas is refused
(:class:`~chimera.errors.FusionToolsRefused`); :class:`~chimera.fusion.routing.RoutedBackend`
sends tool turns to one model instead. (Design after OpenRouter Fusion and AURORA-AI.)

Accounting: the returned ``Completion.usage`` is the sum of every call made — each panel
member (failed ones included, at the usage they reported, zero when they reported none), the
judge, its repair round, and the synthesizer — and ``Completion.raw["fusion"]["calls"]``
itemises them per member.
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from chimera.errors import (
    BudgetExceeded,
    FusionError,
    FusionToolsRefused,
    JudgeOutputInvalid,
    ProviderError,
    QuorumLost,
    StructuredOutputError,
)
from chimera.fusion.accounting import (
    CallRecord,
    SupportsAudit,
    describe_error,
    recorded_call,
    require_distinct,
    sum_records,
    usage_fields,
)
from chimera.fusion.analysis import (
    SCHEMA_HINT,
    FusionAnalysis,
    judge_messages,
    synthesis_messages,
)
from chimera.fusion.structured import ask_structured
from chimera.protocols import Completion, Message, Purpose, SupportsComplete, ToolSchema


@dataclass(frozen=True, slots=True)
class PanelMember:
    """A named backend on the panel (or in the judge / synthesizer seat).

    ``name`` labels the member's answer for the judge and in the cost itemisation; ``model`` is
    the model name recorded when a call fails before the backend names its model.
    """

    name: str
    backend: SupportsComplete
    model: str = ""


class FusionEngine:
    """Panel → judge's structured analysis → synthesizer, as one ``SupportsComplete``.

    Args:
        panel: the members, at least one, with distinct names.
        judge: the backend that writes the analysis (JSON, one repair round on invalid output).
        synthesizer: the backend that writes the final answer.
        quorum: how many members must answer; default a strict majority of the panel.
        judge_max_tokens: ``max_tokens`` for the judge's calls (the caller's ``max_tokens``
            applies to the members and the synthesizer).
        audit: optional audit log; events ``fusion.member``, ``fusion.quorum_lost``,
            ``fusion.judge`` and ``fusion.done``.
        name: the model name reported on the returned completion.

    Raises:
        ValueError: an empty panel, duplicate member names, or a quorum outside 1..len(panel).
    """

    def __init__(
        self,
        panel: Sequence[PanelMember],
        judge: PanelMember,
        synthesizer: PanelMember,
        *,
        quorum: int | None = None,
        judge_max_tokens: int | None = None,
        audit: SupportsAudit | None = None,
        name: str = "fusion",
    ) -> None:
        if not panel:
            raise ValueError("a fusion panel needs at least one member")
        require_distinct([m.name for m in panel], "fusion panel member")
        self.quorum = quorum if quorum is not None else len(panel) // 2 + 1
        if not 1 <= self.quorum <= len(panel):
            raise ValueError(f"fusion quorum {self.quorum} is outside 1..{len(panel)}")
        self.panel = tuple(panel)
        self.judge = judge
        self.synthesizer = synthesizer
        self.judge_max_tokens = judge_max_tokens
        self.audit = audit
        self.name = name
        self.model = name
        """What this backend reports as its model (summaries, the agent's progress lines)."""

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        """Fuse the panel's answers to ``messages`` into one answer.

        Returns:
            The synthesizer's text, with ``usage`` summed over every call and ``raw["fusion"]``
            holding ``calls`` (itemised), ``answers`` (member → text), ``failed`` (member →
            error), and ``analysis`` (the judge's map as JSON).

        Raises:
            FusionToolsRefused: ``tools`` were given.
            QuorumLost: fewer than ``quorum`` members answered (``calls`` attached).
            JudgeOutputInvalid: the analysis was invalid after the repair round.
            FusionError: the judge's or synthesizer's provider failed (``calls`` attached, the
                provider error chained as ``__cause__``).
            BudgetExceeded: a budget refused the judge's or synthesizer's call.
        """
        if tools:
            raise FusionToolsRefused(
                f"{self.name}: fusion does not call tools ({len(tools)} tool schema(s) given); "
                "route tool-calling turns to a single model (RoutedBackend does this)"
            )
        calls: list[CallRecord] = []
        answers, failed = self._run_panel(messages, purpose, max_tokens, calls)
        if len(answers) < self.quorum:
            detail = "; ".join(f"{k}: {v}" for k, v in failed.items())
            self._log(
                "fusion.quorum_lost",
                answered=len(answers),
                quorum=self.quorum,
                failed=failed,
                calls=[c.to_json() for c in calls],
            )
            raise QuorumLost(
                f"{self.name}: {len(answers)} of {len(self.panel)} panel members answered, "
                f"quorum is {self.quorum} ({detail})",
                calls=tuple(calls),
            )
        member_names = list(answers)
        try:
            analysis, _ = ask_structured(
                self.judge.backend,
                judge_messages(messages, answers),
                FusionAnalysis,
                schema_hint=SCHEMA_HINT,
                role="judge",
                name=self.judge.name,
                model_name=self.judge.model,
                purpose=Purpose.REVIEW,
                max_tokens=self.judge_max_tokens,
                extra_check=lambda a: a.member_problems(member_names),
                ledger=calls,
            )
        except StructuredOutputError as exc:
            self._log("fusion.judge", ok=False, error=str(exc))
            raise JudgeOutputInvalid(f"{self.name}: {exc}", calls=tuple(calls)) from exc
        except ProviderError as exc:
            self._log("fusion.judge", ok=False, error=describe_error(exc))
            raise FusionError(
                f"{self.name}: the judge failed: {describe_error(exc)}", calls=tuple(calls)
            ) from exc
        self._log("fusion.judge", ok=True, analysis=analysis.model_dump(mode="json"))
        syn = self.synthesizer
        rec, final, failure = recorded_call(
            partial(
                syn.backend.complete,
                synthesis_messages(messages, answers, analysis),
                purpose=purpose,
                max_tokens=max_tokens,
            ),
            role="synthesizer",
            name=syn.name,
            model=syn.model,
        )
        calls.append(rec)
        if isinstance(failure, BudgetExceeded):
            raise failure
        if failure is not None or final is None:
            raise FusionError(
                f"{self.name}: the synthesizer failed: {rec.error}", calls=tuple(calls)
            ) from failure
        usage = sum_records(calls)
        report: dict[str, Any] = {
            "calls": [c.to_json() for c in calls],
            "answers": dict(answers),
            "failed": dict(failed),
            "analysis": analysis.model_dump(mode="json"),
            "quorum": self.quorum,
        }
        self._log(
            "fusion.done",
            **usage_fields(usage),
            calls=report["calls"],
        )
        return Completion(text=final.text, usage=usage, model=self.name, raw={"fusion": report})

    def _run_panel(
        self,
        messages: Sequence[Message],
        purpose: Purpose,
        max_tokens: int | None,
        calls: list[CallRecord],
    ) -> tuple[dict[str, str], dict[str, str]]:
        def ask(member: PanelMember) -> tuple[CallRecord, str | None]:
            rec, out, _ = recorded_call(
                partial(member.backend.complete, messages, purpose=purpose, max_tokens=max_tokens),
                role="panel",
                name=member.name,
                model=member.model,
            )
            if out is None:
                return rec, None
            if not out.text.strip():
                error = "EmptyAnswer: the member returned no text"
                return dataclasses.replace(rec, ok=False, error=error), None
            return rec, out.text

        with ThreadPoolExecutor(max_workers=len(self.panel), thread_name_prefix="fusion") as pool:
            # Each member runs in a copy of the caller's context, so call_context() facts
            # (risk, attempt) reach the members' own routers and effort policies.
            futures = [pool.submit(contextvars.copy_context().run, ask, m) for m in self.panel]
            results = [f.result() for f in futures]
        answers: dict[str, str] = {}
        failed: dict[str, str] = {}
        for rec, text in results:
            calls.append(rec)
            self._log("fusion.member", **rec.to_json())
            if text is None:
                failed[rec.name] = rec.error
            else:
                answers[rec.name] = text
        return answers, failed

    def _log(self, event: str, **fields: Any) -> None:
        if self.audit is not None:
            self.audit.append(event, engine=self.name, **fields)


def itemise(completion: Completion) -> Mapping[str, Any] | None:
    """The fusion report of a completion produced by a :class:`FusionEngine`, else ``None``."""
    if completion.raw is None:
        return None
    report = completion.raw.get("fusion")
    return report if isinstance(report, Mapping) else None
