"""CascadeBackend: weak → gate → medium → gate → fusion, escalating only on a failed gate.

A cascade answers with the cheapest tier whose answer passes a cheap acceptance gate, and
escalates to the next tier only when it does not (FrugalGPT's LLM cascade: Chen, Zaharia & Zou,
2023). Gates judge *answers* — plans, reviews, final texts — never single tool calls, so a
cascade refuses tool schemas (:class:`~chimera.errors.ToolTurnRefused`); a
:class:`~chimera.fusion.routing.RoutedBackend` sends tool turns to one model.

The route log records every hop; an answer's cost is the sum over all hops tried, not only the
accepted one — escalations are paid for, and the returned ``usage`` says so.

Gates shipped here: :class:`SchemaGate` (the answer is JSON of a pydantic shape),
:class:`CriteriaGate` (acceptance criteria: patterns that must / must not occur, length), and
:class:`CommandGate` (write the answer to an artifact and run a
:class:`~chimera.verifier.CommandVerifier` on it: exit 0 passes).

One module of about 410 lines on purpose: the gates exist to be a tier's gate, and their
verdicts are the cascade's hop records; apart, neither side reads on its own.
"""

from __future__ import annotations

import shlex
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal, Protocol

import regex
from pydantic import BaseModel

from chimera.errors import (
    BudgetExceeded,
    CascadeExhausted,
    ToolTurnRefused,
)
from chimera.fusion.accounting import (
    CallRecord,
    SupportsAudit,
    recorded_call,
    require_distinct,
    spent_calls,
    sum_usage,
    usage_fields,
)
from chimera.fusion.structured import parse_structured
from chimera.governance.redactor import cut_redacted as _cut
from chimera.protocols import Completion, Message, Purpose, SupportsComplete, ToolSchema, Usage
from chimera.runner import CommandRunner, LocalRunner

PATTERN_TIMEOUT_S = 1.0
"""Seconds a criteria pattern may run on one answer before it is an error (fail closed)."""


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """One gate's judgement of one answer; ``reason`` is a short human sentence."""

    gate: str
    ok: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"gate": self.gate, "ok": self.ok, "reason": self.reason}


class Gate(Protocol):
    """A cheap acceptance check of an answer (not of a tool call)."""

    name: str

    def check(self, answer: Completion, messages: Sequence[Message]) -> GateVerdict: ...


class SchemaGate:
    """Passes when the answer holds JSON (fenced or bare) that validates as ``model``."""

    def __init__(self, model: type[BaseModel], *, name: str = "schema") -> None:
        self.model = model
        self.name = name

    def check(self, answer: Completion, messages: Sequence[Message]) -> GateVerdict:
        try:
            parse_structured(answer.text, self.model)
        except ValueError as exc:
            return GateVerdict(self.name, False, f"not a valid {self.model.__name__}: {exc}")
        return GateVerdict(self.name, True, f"valid {self.model.__name__}")


class CriteriaGate:
    """Acceptance criteria over the answer text.

    Args:
        must_match: patterns (``regex`` syntax, MULTILINE) that must each occur.
        must_not_match: patterns that must not occur.
        min_chars: the stripped answer's minimum length.
        max_chars: its maximum length, or ``None``.

    A pattern that runs past :data:`PATTERN_TIMEOUT_S` fails the gate (fail closed).

    Raises:
        ValueError: at construction, a pattern does not compile (the message names it).
    """

    def __init__(
        self,
        *,
        must_match: Sequence[str] = (),
        must_not_match: Sequence[str] = (),
        min_chars: int = 1,
        max_chars: int | None = None,
        name: str = "criteria",
    ) -> None:
        self.name = name
        self.must_match = [(p, _compile(p)) for p in must_match]
        self.must_not_match = [(p, _compile(p)) for p in must_not_match]
        self.min_chars = min_chars
        self.max_chars = max_chars

    def check(self, answer: Completion, messages: Sequence[Message]) -> GateVerdict:
        text = answer.text.strip()
        if len(text) < self.min_chars:
            return GateVerdict(self.name, False, f"answer has {len(text)} chars < {self.min_chars}")
        if self.max_chars is not None and len(text) > self.max_chars:
            return GateVerdict(self.name, False, f"answer has {len(text)} chars > {self.max_chars}")
        try:
            for source, pattern in self.must_match:
                if pattern.search(text, timeout=PATTERN_TIMEOUT_S) is None:
                    return GateVerdict(self.name, False, f"missing required pattern {source!r}")
            for source, pattern in self.must_not_match:
                if pattern.search(text, timeout=PATTERN_TIMEOUT_S) is not None:
                    return GateVerdict(self.name, False, f"forbidden pattern {source!r} occurs")
        except TimeoutError:
            return GateVerdict(
                self.name, False, f"a criteria pattern ran past {PATTERN_TIMEOUT_S}s (fail closed)"
            )
        return GateVerdict(self.name, True, "all criteria hold")


def _compile(pattern: str) -> Any:
    try:
        return regex.compile(pattern, regex.MULTILINE)
    except regex.error as exc:
        raise ValueError(f"invalid criteria pattern {pattern!r}: {exc}") from exc


_CODE_BLOCK = regex.compile(r"```[^\n]*\n(.*?)```", regex.DOTALL)


class CommandGate:
    """Writes the answer to an artifact file and runs a command on it; exit 0 passes.

    Args:
        command: a shell command; ``{artifact}`` is replaced by the artifact's quoted path.
        artifact: the artifact's file name inside ``workdir``.
        extract: ``text`` writes the whole answer; ``code`` the first fenced code block (the
            gate fails when there is none).
        workdir: where the artifact is written and the command runs (a fresh temporary
            directory per check when ``None``).
        runner: the command runner (the sandbox's during an autonomous run; a
            :class:`~chimera.runner.LocalRunner` when ``None``).
        timeout: seconds before the command is killed (a timeout fails the gate).
    """

    def __init__(
        self,
        command: str,
        *,
        artifact: str = "answer.txt",
        extract: Literal["text", "code"] = "text",
        workdir: Path | None = None,
        runner: CommandRunner | None = None,
        timeout: float = 60.0,
        name: str = "command",
    ) -> None:
        self.command = command
        self.artifact = artifact
        self.extract = extract
        self.workdir = workdir
        self.runner = runner
        self.timeout = timeout
        self.name = name

    def check(self, answer: Completion, messages: Sequence[Message]) -> GateVerdict:
        from chimera.verifier import CommandVerifier

        body = answer.text
        if self.extract == "code":
            match = _CODE_BLOCK.search(body)
            if match is None:
                return GateVerdict(self.name, False, "the answer has no fenced code block")
            body = match.group(1)
        with tempfile.TemporaryDirectory(prefix="chimera-gate-") as tmp:
            where = self.workdir if self.workdir is not None else Path(tmp)
            path = where / self.artifact
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body, encoding="utf-8")
            command = self.command.replace("{artifact}", shlex.quote(str(path)))
            runner = self.runner if self.runner is not None else LocalRunner()
            result = CommandVerifier(
                command, runner=runner, cwd=where, timeout=self.timeout
            ).verify()
        if result.ok:
            return GateVerdict(self.name, True, f"`{self.command}` exited 0")
        tail = _cut(" ".join(str(result.output_tail).split()), 200, tail=True)
        return GateVerdict(
            self.name, False, f"`{self.command}` exit {result.exit_code}: {tail}".rstrip(": ")
        )


@dataclass(frozen=True, slots=True)
class CascadeTier:
    """One rung of a cascade: a backend and the gates its answers must pass.

    A tier with no gates accepts whatever it answers (typically the last one).
    """

    name: str
    backend: SupportsComplete
    gates: Sequence[Gate] = ()
    model: str = ""
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class CascadeHop:
    """One hop of the route log: a tier tried, what it cost, and how its gates judged it."""

    tier: str
    model: str
    usage: Usage
    verdicts: tuple[GateVerdict, ...] = ()
    accepted: bool = False
    error: str = ""
    elapsed_s: float = 0.0
    calls: tuple[CallRecord, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "model": self.model,
            **usage_fields(self.usage),
            "accepted": self.accepted,
            "verdicts": [v.to_json() for v in self.verdicts],
            "error": self.error,
            "elapsed_s": round(self.elapsed_s, 4),
        }

    def record(self) -> CallRecord:
        return CallRecord(
            "tier",
            self.tier,
            self.model,
            self.usage,
            ok=not self.error,
            error=self.error,
            elapsed_s=self.elapsed_s,
        )


class CascadeBackend:
    """A ``SupportsComplete`` that tries tiers in order until one's answer passes its gates.

    Args:
        tiers: cheapest first; at least one.
        audit: optional audit log; events ``cascade.hop`` (one per hop) and ``cascade.done``.
        on_exhausted: ``raise`` (default) raises :class:`CascadeExhausted` when no tier passes;
            ``last`` returns the last tier's answer marked ``accepted: false`` in the route log.
        name: the model name reported on the returned completion's route log.

    A tier whose call fails with a provider error is a hop too (recorded with its error) and
    the cascade escalates; a budget refusal stops the cascade (the budget is a hard ceiling).
    The returned completion is the accepted tier's, with ``usage`` summed over every hop and
    ``raw["cascade"] = {"route": [hop...], "answered_by": tier, "accepted": bool}``.
    """

    def __init__(
        self,
        tiers: Sequence[CascadeTier],
        *,
        audit: SupportsAudit | None = None,
        on_exhausted: Literal["raise", "last"] = "raise",
        name: str = "cascade",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not tiers:
            raise ValueError("a cascade needs at least one tier")
        require_distinct([t.name for t in tiers], "cascade tier")
        self.tiers = tuple(tiers)
        self.audit = audit
        self.on_exhausted = on_exhausted
        self.name = name
        self.model = name
        self._clock = clock

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        """Run the cascade (see the class docstring).

        Raises:
            ToolTurnRefused: ``tools`` were given (gates judge answers, not tool calls).
            CascadeExhausted: no tier passed and ``on_exhausted="raise"`` (``calls`` holds
                every hop, so the spend is still accounted).
            BudgetExceeded: a tier's call was refused by a budget.
        """
        if tools:
            raise ToolTurnRefused(
                f"{self.name}: a cascade gates answers, not tool calls ({len(tools)} tool "
                "schema(s) given); route tool-calling turns to one model (RoutedBackend)"
            )
        hops: list[CascadeHop] = []
        last: Completion | None = None
        for tier in self.tiers:
            cap = tier.max_tokens if max_tokens is None else max_tokens
            rec, answer, failure = recorded_call(
                partial(tier.backend.complete, messages, purpose=purpose, max_tokens=cap),
                role="tier",
                name=tier.name,
                model=tier.model,
                clock=self._clock,
            )
            if failure is not None:
                hop = CascadeHop(
                    tier.name,
                    tier.model,
                    rec.usage,
                    error=rec.error,
                    elapsed_s=rec.elapsed_s,
                    calls=spent_calls(failure),
                )
                self._hop(hop, purpose)
                if isinstance(failure, BudgetExceeded):
                    raise failure  # the budget is a hard ceiling: the cascade stops
                hops.append(hop)  # a provider failure is a hop: escalate
                continue
            assert answer is not None
            verdicts = tuple(g.check(answer, messages) for g in tier.gates)
            accepted = all(v.ok for v in verdicts)
            hop = CascadeHop(
                tier.name,
                rec.model,
                rec.usage,
                verdicts,
                accepted=accepted,
                elapsed_s=rec.elapsed_s,
            )
            hops.append(hop)
            self._hop(hop, purpose)
            last = answer
            if accepted:
                return self._finish(answer, hops, tier.name, accepted=True)
        total = sum_usage(h.usage for h in hops)
        if self.on_exhausted == "last" and last is not None:
            return self._finish(last, hops, hops[-1].tier, accepted=False)
        self._done(hops, None, total)
        reasons = "; ".join(
            f"{h.tier}: {h.error or ', '.join(v.reason for v in h.verdicts if not v.ok)}"
            for h in hops
        )
        raise CascadeExhausted(
            f"{self.name}: no tier's answer passed its gates ({reasons})",
            calls=tuple(h.record() for h in hops),
        )

    def _finish(
        self, answer: Completion, hops: list[CascadeHop], tier: str, *, accepted: bool
    ) -> Completion:
        total = sum_usage(h.usage for h in hops)
        self._done(hops, tier if accepted else None, total)
        raw: dict[str, Any] = dict(answer.raw or {})
        raw["cascade"] = {
            "route": [h.to_json() for h in hops],
            "answered_by": tier,
            "accepted": accepted,
        }
        return Completion(
            text=answer.text,
            tool_calls=answer.tool_calls,
            usage=total,
            model=answer.model,
            raw=raw,
        )

    def _hop(self, hop: CascadeHop, purpose: Purpose) -> None:
        if self.audit is not None:
            self.audit.append(
                "cascade.hop", cascade=self.name, purpose=purpose.value, **hop.to_json()
            )

    def _done(self, hops: list[CascadeHop], answered_by: str | None, total: Usage) -> None:
        if self.audit is not None:
            self.audit.append(
                "cascade.done",
                cascade=self.name,
                answered_by=answered_by,
                hops=len(hops),
                **usage_fields(total),
            )


def route_log(completion: Completion) -> list[dict[str, Any]]:
    """The route log of a completion returned by a :class:`CascadeBackend` (else ``[]``)."""
    cascade = (completion.raw or {}).get("cascade")
    if not isinstance(cascade, dict):
        return []
    route = cascade.get("route")
    return list(route) if isinstance(route, list) else []
