"""Component contracts of the engine, as small Protocols in one module.

(The shape follows mini-swe-agent: every part the agent loop touches is a Protocol here, so
backends, tools and verifiers can be swapped — scripted in tests, sandboxed in runs.)

Message shapes are OpenAI-style chat dictionaries, since that is what LiteLLM speaks:
``{"role": "system"|"user"|"assistant"|"tool", "content": str, ...}``; assistant messages may
carry ``tool_calls`` and tool messages carry ``tool_call_id``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]
"""One chat message in OpenAI format."""

ToolSchema = dict[str, Any]
"""One tool in OpenAI function-calling format: ``{"type": "function", "function": {...}}``."""


class Risk(StrEnum):
    """How much human attention a requirement's change needs (``high`` pauses for approval)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Purpose(StrEnum):
    """Why a model call is made; routers, cascades and effort policies key on it."""

    ACT = "act"
    PLAN = "plan"
    REVIEW = "review"
    REPLAN = "replan"
    SUMMARIZE = "summarize"
    MEMORY = "memory"
    """Memory upkeep: what a finished run learned, and ADD / UPDATE / DELETE / NOOP."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call requested by the model.

    ``arguments`` is the raw JSON text the model produced (it may be invalid: the agent loop
    reports that back to the model rather than crashing).
    """

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one call; ``cost_usd`` is ``None`` when the model's price is unknown."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class Completion:
    """A model's answer: text and/or tool calls, usage, and the model that produced it."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    raw: Mapping[str, Any] | None = None

    def as_message(self) -> Message:
        """The assistant message to append to a transcript."""
        msg: Message = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return msg


@runtime_checkable
class SupportsComplete(Protocol):
    """The one protocol every model backend implements.

    Raises:
        BudgetExceeded: the call was refused before sending (budgeted backends).
        ProviderError: the provider failed (subclasses name how).
    """

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion: ...


@runtime_checkable
class SupportsReasoningEffort(Protocol):
    """A backend that can send a reasoning effort (``"low"``, ``"medium"``, ``"high"``) with
    every request.

    A backend without the knob either does not implement this or answers ``None`` (declines):
    callers then keep the backend they had.
    """

    def with_reasoning_effort(self, effort: str) -> SupportsComplete | None:
        """A copy of this backend that sends ``effort``; ``None`` when it has no such knob.
        The original is left unchanged."""
        ...


@runtime_checkable
class SupportsMetering(Protocol):
    """A backend that knows its model's tokenizer and price (what a budget reserves with).

    Attributes:
        model: the model name the counts and prices are for.
    """

    model: str

    def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema] | None = None
    ) -> int:
        """Prompt tokens of ``messages`` (and tool schemas), an estimate where the tokenizer
        is unknown; at least 1."""
        ...

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD for that many tokens; ``None`` when the price is unknown (never a guess)."""
        ...


@runtime_checkable
class SupportsCredentialCheck(Protocol):
    """A backend that can tell, before its first call, that its credentials are missing."""

    def check_credentials(self) -> None:
        """Return when the key is available (or none is needed).

        Raises:
            AuthenticationError: one line naming the missing variable.
        """
        ...


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returns to the model; ``ok=False`` marks a failed or refused call."""

    output: str
    ok: bool = True
    meta: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Tool(Protocol):
    """A tool the agent can call. Metadata are instance attributes, so generated tools work.

    Attributes:
        name: the function name the model calls.
        description: shown to the model.
        parameters: JSON Schema of the arguments object.
    """

    name: str
    description: str
    parameters: dict[str, Any]

    def __call__(self, **kwargs: Any) -> ToolResult: ...


class ToolCaller(Protocol):
    """What the Agent needs from a tool registry (:class:`chimera.tools.ToolRegistry`)."""

    def schemas(self) -> list[ToolSchema]: ...

    def call(self, name: str, arguments: Any) -> ToolResult: ...


class AuditSink(Protocol):
    """The part of :class:`chimera.governance.audit.AuditLog` lower layers use: one event per
    call, ``fields`` JSON-serialisable; returns the written record."""

    def append(self, event: str, /, **fields: Any) -> Any: ...


EventSink = Callable[[str, dict[str, Any]], None]
"""A progress listener: ``(event name, fields)``; progress only, never a decision."""


@dataclass(frozen=True)
class Experience:
    """One attempt as the buffer stores it.

    Attributes:
        task: the task text (sanitized by the caller when it came from outside).
        verdict: ``passed``, ``verify_failed``, ``regression``, ``review_rejected``,
            ``hollow`` or ``agent_stopped``.
        signature: the failure signature digest ('' for a pass).
        cause: one line naming why it failed ('' for a pass).
        evidence: the gist of the failure's evidence — the failing requirement ids, the first
            error line, the first failing tool step — bounded ('' for a pass; see
            :meth:`chimera.core.attempt_record.AttemptRecord.gist`).
        files_changed, added, removed: diff stats.
        tokens: tokens spent by the attempt.
        cost_usd: USD spent, ``None`` when unknown.
        model: the model that made the attempt.
        run_id, attempt: where it came from.
        targets: the requirement ids the attempt aimed at.
        ts: ISO-8601 UTC time of writing.
        provenance: ``trusted``, or ``tainted`` when the run had read untrusted text (an
            ``--untrusted`` task, an issue, a tainted memory); a record written before
            provenance existed reads back as ``tainted`` (fail closed).
        taint_sources: what tainted it (``untrusted_task``, ``memory``, ``legacy``...).
    """

    task: str
    verdict: str
    signature: str = ""
    cause: str = ""
    evidence: str = ""
    files_changed: int = 0
    added: int = 0
    removed: int = 0
    tokens: int = 0
    cost_usd: float | None = None
    model: str = ""
    run_id: str = ""
    attempt: int = 0
    targets: tuple[str, ...] = ()
    ts: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    provenance: str = "trusted"
    taint_sources: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.verdict != "passed"

    @property
    def tainted(self) -> bool:
        return self.provenance != "trusted"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["targets"] = list(self.targets)
        data["taint_sources"] = list(self.taint_sources)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Experience:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["targets"] = tuple(known.get("targets", ()))
        if "provenance" not in known:
            # Written before provenance was recorded: an untrusted run's task text may hide
            # here, so it never reads back as trusted.
            known["provenance"] = "tainted"
            known["taint_sources"] = ("legacy",)
        known["taint_sources"] = tuple(known.get("taint_sources", ()))
        return cls(**known)

    def lesson(self) -> str:
        """One line for a prompt: what was tried on which task and how it ended."""
        task = " ".join(self.task.split())[:120]
        if not self.failed:
            return f"- passed ({self.files_changed} file(s) changed) on: {task}"
        why = self.cause or self.signature
        return f"- {self.verdict} on: {task} — {why}" + (
            f"; {self.evidence}" if self.evidence else ""
        )


class ExperienceStore(Protocol):
    """How the AutonomousAgent reaches the experience store (:mod:`chimera.memory`) without
    importing it: append one attempt, and retrieve similar past attempts, best first, as
    ``(score in [0, 1], Experience)`` pairs."""

    def append(self, experience: Experience) -> None: ...

    def similar(
        self, task: str, k: int = 5, *, failures_only: bool = False, min_score: float = 0.1
    ) -> list[tuple[float, Experience]]: ...


@dataclass(frozen=True, slots=True)
class Recall:
    """What a memory read hands a prompt builder.

    Attributes:
        text: the rendered block (trusted items as notes, tainted items fenced as data with
            their provenance); '' when nothing was found.
        ids: the recalled item ids, best first.
        tainted: True when any recalled item is tainted: the reading run is tainted from now.
        tokens: the block's size in tokens (as counted by the reader).
    """

    text: str = ""
    ids: tuple[str, ...] = ()
    tainted: bool = False
    tokens: int = 0


class MemoryReader(Protocol):
    """How core reads the MemoryManager (:mod:`chimera.memory`) without importing it: recall
    the items nearest ``query`` rendered within ``budget_tokens``; a tainted item marks the
    reading run tainted (the reader records that in the run's taint ledger and audit log)."""

    def recall_block(self, query: str, *, budget_tokens: int) -> Recall: ...


class StepProgress(Protocol):
    """Where long work measured in steps reports how far it is (``chimera bench continuous``,
    ``meta design``, ``evolve``): called as each step starts, with ``done`` steps finished of
    ``total`` (an upper bound when the work may stop early) and a short ``label`` of the step
    starting. The CLI draws it as a bar on a terminal and as plain lines otherwise."""

    def __call__(self, done: int, total: int, label: str) -> None: ...
