"""The Agent: a tool-calling (ReAct) loop whose whole state is an explicit Transcript.

The loop is deliberately short (mini-swe-agent style): ask the model, run the tool calls it
asked for, append the results, repeat; stop on a text turn without tool calls. State lives in
a :class:`Transcript` (plain messages plus per-step records), not in the model or in Python
objects, so a transcript can be written to disk, inspected and resumed.

Limits hold whatever the model returns. Every model turn is a step — a turn with unparseable
tool-call arguments, an unknown tool, or nothing at all counts like any other, and the error
is fed back to the model as the tool result (or as a user note for an empty turn) so it can
correct itself. ``max_steps`` therefore bounds the calls even for a model that only produces
garbage. ``token_limit`` is checked before every call against the tokens used so far; the
hard, refuse-before-sending budget is the backend's (:class:`~chimera.providers.BudgetedBackend`),
and its refusal ends the loop with outcome ``budget``.

Context: when the transcript grows past ``context_tokens``, the oldest tool outputs are elided
(replaced by a one-line marker). The first ``pinned`` messages — the system prompt and the
task with its carried-forward failure history — are never touched: a compactor that drops the
history it was given would undo the carry-forward it was paid for.

A call the governance layer refused is marked in its step record (``refused``), so a result
can say how many calls were blocked (:attr:`AgentResult.blocked_calls`), resumed transcripts
included. The module is a little over 400 lines: the loop, its records and its result are one
idea and read top to bottom.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from chimera.errors import BudgetExceeded, ChimeraError, ProviderError
from chimera.governance.redactor import cut_redacted
from chimera.protocols import (
    Completion,
    EventSink,
    Message,
    Purpose,
    SupportsComplete,
    ToolCall,
    ToolCaller,
    ToolResult,
    Usage,
)
from chimera.runner import clip_words

Outcome = Literal["finished", "step_limit", "token_limit", "budget", "error"]

EMPTY_TURN_NOTE = (
    "Your last reply had no text and no tool call. Call one of the tools, or, when the work "
    "is done, reply with a short summary and no tool call."
)
MAX_CALLS_PER_TURN = 16
"""Tool calls run per model turn; more are answered with an error (so the turn stays valid)."""
_RECORD_CHARS = 400


@dataclass
class UsageTotals:
    """Running token and cost totals; ``cost_usd`` turns ``None`` once any call's cost is
    unknown (a partial sum would understate the spend)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, usage: Usage | UsageTotals) -> None:
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.calls += usage.calls if isinstance(usage, UsageTotals) else 1
        if self.cost_usd is None or usage.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += usage.cost_usd

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost_usd,
            "calls": self.calls,
        }


@dataclass
class StepRecord:
    """One model turn and what came of it.

    Attributes:
        index: 1-based step number.
        kind: ``tools`` (tool calls ran), ``final`` (text, no tool calls), ``empty``.
        ok: False when any tool call failed or the turn was empty.
        calls: per tool call ``{"name", "arguments", "ok", "output"}`` (capped strings), and
            ``"refused": "block"|"review"`` for a call the governance layer did not run.
        tokens: tokens of the model call.
        model: the model that answered.
    """

    index: int
    kind: str
    ok: bool
    calls: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0
    model: str = ""

    def describe(self) -> str:
        """One line, e.g. ``step 3: edit_file: old text not found``."""
        if self.kind == "empty":
            return f"step {self.index}: empty reply (no text, no tool call)"
        if self.kind == "final":
            return f"step {self.index}: final answer"
        bad = next((c for c in self.calls if not c["ok"]), None)
        if bad is not None:
            first = str(bad["output"]).strip().splitlines()[0] if bad["output"] else "failed"
            # Redacted before the cut: a cut through a token keeps a piece no redactor finds.
            # Arguments are code or JSON: cut at their limit. The message is prose: between words.
            args = cut_redacted(str(bad["arguments"]), 120)
            first = clip_words(cut_redacted(first, 400), 200)
            return f"step {self.index}: {bad['name']}({args}): {first}"
        names = ", ".join(c["name"] for c in self.calls)
        return f"step {self.index}: {names}"


@dataclass
class Transcript:
    """The Agent's whole state: chat messages and step records.

    ``pinned`` leading messages are never elided. Serialise with :meth:`to_json` (a dict of
    plain JSON values) and restore with :meth:`from_json`.
    """

    messages: list[Message]
    steps: list[StepRecord] = field(default_factory=list)
    pinned: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": [dict(m) for m in self.messages],
            "steps": [s.__dict__.copy() for s in self.steps],
            "pinned": self.pinned,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Transcript:
        return cls(
            messages=[dict(m) for m in data["messages"]],
            steps=[StepRecord(**s) for s in data.get("steps", [])],
            pinned=int(data.get("pinned", 0)),
        )


@dataclass
class AgentResult:
    """How a run of the loop ended.

    Attributes:
        outcome: ``finished`` | ``step_limit`` | ``token_limit`` | ``budget`` | ``error``.
        steps: model turns taken.
        first_failing_step: the first step whose tool call failed or which was empty/garbled
            (``None`` when none did), with ``first_failure`` its one-line description.
        transcript: the full transcript.
        usage: tokens and cost of every call of this run.
        final_text: the model's last text (its summary, when finished).
        error: the error message for ``budget`` / ``error``.
        budget_limit: for ``budget``, the ceiling that refused the call (``tokens``/``usd``).
    """

    outcome: Outcome
    steps: int
    first_failing_step: int | None
    transcript: Transcript
    usage: UsageTotals
    final_text: str = ""
    first_failure: str | None = None
    error: str = ""
    budget_limit: Literal["tokens", "usd"] | None = None

    @property
    def blocked_calls(self) -> int:
        """Tool calls of the whole transcript that governance blocked (verdict ``block``)."""
        return sum(c.get("refused") == "block" for s in self.transcript.steps for c in s.calls)


def _refusal(result: ToolResult) -> str:
    """``block`` / ``review`` when the governance layer refused the call (its
    ``GovernedTool`` marks the result's ``meta``), else ``""``."""
    if result.meta.get("error") != "governance_denied":
        return ""
    decision = result.meta.get("governance")
    verdict = decision.get("verdict") if isinstance(decision, Mapping) else None
    return verdict if verdict in ("block", "review") else "review"


def approx_message_tokens(messages: Sequence[Message]) -> int:
    """≈ 4 characters per token over contents and tool-call arguments."""
    chars = 0
    for m in messages:
        chars += len(str(m.get("content") or "")) + 8
        for tc in m.get("tool_calls") or []:
            chars += len(json.dumps(tc))
    return chars // 4


class Agent:
    """A tool-calling loop over any :class:`SupportsComplete` backend.

    Args:
        backend: the model.
        tools: the registry whose tools the model may call.
        max_steps: model turns allowed (every turn counts, garbage ones included).
        token_limit: stop with ``token_limit`` once this many tokens were used (checked
            before each call); ``None`` for no limit.
        max_tokens: completion cap per call (passed to the backend).
        context_tokens: past this transcript size, old tool outputs are elided.
        purpose: the purpose of the loop's calls (``act``).
        on_event: receives ``("model_call"|"tool_call"|"step"|"message", fields)``; a
            ``tool_call``'s ``arguments`` and ``output`` are whole (a sink that records them
            redacts first, then caps, so its record matches the redacted transcript).
    """

    def __init__(
        self,
        backend: SupportsComplete,
        tools: ToolCaller,
        *,
        max_steps: int = 30,
        token_limit: int | None = None,
        max_tokens: int | None = None,
        context_tokens: int = 60_000,
        purpose: Purpose = Purpose.ACT,
        on_event: EventSink | None = None,
    ) -> None:
        self.backend = backend
        self.tools = tools
        self.max_steps = max_steps
        self.token_limit = token_limit
        self.max_tokens = max_tokens
        self.context_tokens = context_tokens
        self.purpose = purpose
        self.on_event = on_event

    def _emit(self, event: str, **fields: Any) -> None:
        if self.on_event is not None:
            self.on_event(event, fields)

    def _append(self, t: Transcript, message: Message) -> None:
        t.messages.append(message)
        self._emit("message", index=len(t.messages) - 1, message=message)

    def run(
        self, messages: Sequence[Message] | None = None, *, transcript: Transcript | None = None
    ) -> AgentResult:
        """Run until a final text turn or a limit; resumes ``transcript`` when given."""
        if transcript is None:
            if not messages:
                raise ValueError("Agent.run needs messages or a transcript")
            transcript = Transcript(messages=[], pinned=len(messages))
            for m in messages:
                self._append(transcript, dict(m))
        t = transcript
        usage = UsageTotals()
        schemas = self.tools.schemas()
        known = {s["function"]["name"] for s in schemas if "function" in s}
        first_bad: StepRecord | None = next((s for s in t.steps if not s.ok), None)

        def result(outcome: Outcome, text: str = "", error: str = "") -> AgentResult:
            return AgentResult(
                outcome=outcome,
                steps=len(t.steps),
                first_failing_step=first_bad.index if first_bad else None,
                transcript=t,
                usage=usage,
                final_text=text,
                first_failure=first_bad.describe() if first_bad else None,
                error=error,
            )

        while len(t.steps) < self.max_steps:
            if self.token_limit is not None and usage.total_tokens >= self.token_limit:
                return result("token_limit", error=f"{usage.total_tokens} tokens used")
            self._elide(t)
            try:
                completion = self.backend.complete(
                    t.messages, tools=schemas, purpose=self.purpose, max_tokens=self.max_tokens
                )
            except BudgetExceeded as exc:
                self._emit("budget_stop", reason=str(exc), step=len(t.steps) + 1)
                refused = result("budget", error=str(exc))
                refused.budget_limit = exc.limit
                return refused
            except ProviderError as exc:
                self._emit("provider_error", error=str(exc), kind=type(exc).__name__)
                return result("error", error=f"{type(exc).__name__}: {exc}")
            usage.add(completion.usage)
            step = self._step(t, completion, known)
            t.steps.append(step)
            if first_bad is None and not step.ok:
                first_bad = step
            self._emit(
                "step", index=step.index, kind=step.kind, ok=step.ok, summary=step.describe()
            )
            if step.kind == "final":
                return result("finished", text=completion.text)
        return result("step_limit", error=f"{self.max_steps} steps used")

    def _step(self, t: Transcript, c: Completion, known: set[str]) -> StepRecord:
        index = len(t.steps) + 1
        self._emit(
            "model_call",
            step=index,
            purpose=self.purpose.value,
            model=c.model,
            prompt_tokens=c.usage.prompt_tokens,
            completion_tokens=c.usage.completion_tokens,
            cost_usd=c.usage.cost_usd,
            tool_calls=[tc.name for tc in c.tool_calls],
        )
        calls = [
            ToolCall(tc.id or f"call_{index}_{i}", tc.name, tc.arguments)
            for i, tc in enumerate(c.tool_calls)
        ]
        fixed = Completion(c.text or "", tuple(calls), c.usage, c.model)
        self._append(t, fixed.as_message())
        if not calls:
            if (c.text or "").strip():
                return StepRecord(index, "final", True, tokens=c.usage.total_tokens, model=c.model)
            self._append(t, {"role": "user", "content": EMPTY_TURN_NOTE})
            return StepRecord(index, "empty", False, tokens=c.usage.total_tokens, model=c.model)
        records: list[dict[str, Any]] = []
        for i, call in enumerate(calls):
            if i >= MAX_CALLS_PER_TURN:
                res = ToolResult(
                    f"error: not run — at most {MAX_CALLS_PER_TURN} tool calls per turn",
                    ok=False,
                )
            else:
                res = self._call(call, known)
            self._emit(
                "tool_call",
                step=index,
                name=call.name,
                arguments=call.arguments,
                ok=res.ok,
                output=res.output,
            )
            self._append(
                t,
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "name": call.name,
                    "content": res.output,
                },
            )
            record: dict[str, Any] = {
                "name": call.name,
                "arguments": cut_redacted(call.arguments, _RECORD_CHARS),
                "ok": res.ok,
                "output": cut_redacted(res.output, _RECORD_CHARS),
            }
            refused = _refusal(res)
            if refused:
                record["refused"] = refused
            records.append(record)
        ok = all(r["ok"] for r in records)
        return StepRecord(index, "tools", ok, records, c.usage.total_tokens, c.model)

    def _call(self, call: ToolCall, known: set[str]) -> ToolResult:
        """Run one tool call; every model mistake becomes an error result, never an exception."""
        if call.name not in known:
            names = ", ".join(sorted(known)) or "(none)"
            return ToolResult(f"error: unknown tool {call.name!r}; available: {names}", ok=False)
        raw = call.arguments.strip() or "{}"
        try:
            args = json.loads(raw)
        except json.JSONDecodeError as exc:
            return ToolResult(
                f"error: the arguments of {call.name} are not valid JSON ({exc.msg} at "
                f"position {exc.pos}); send a JSON object",
                ok=False,
            )
        if not isinstance(args, dict):
            return ToolResult(
                f"error: the arguments of {call.name} must be a JSON object, "
                f"got {type(args).__name__}",
                ok=False,
            )
        try:
            return self.tools.call(call.name, args)
        except (BudgetExceeded, ProviderError):
            raise
        except ChimeraError as exc:
            return ToolResult(f"error: {exc}", ok=False)
        except Exception as exc:  # a tool bug must not end the run; the model sees it
            return ToolResult(f"error: {call.name} failed: {type(exc).__name__}: {exc}", ok=False)

    def _elide(self, t: Transcript) -> None:
        if approx_message_tokens(t.messages) <= self.context_tokens:
            return
        for i in range(t.pinned, len(t.messages) - 2):
            m = t.messages[i]
            content = str(m.get("content") or "")
            if m.get("role") == "tool" and not content.startswith("[elided") and len(content) > 200:
                m["content"] = f"[elided: {len(content):,} characters of earlier tool output]"
                if approx_message_tokens(t.messages) <= self.context_tokens:
                    return


__all__ = [
    "EMPTY_TURN_NOTE",
    "Agent",
    "AgentResult",
    "EventSink",
    "Outcome",
    "StepRecord",
    "ToolCaller",
    "Transcript",
    "UsageTotals",
]
