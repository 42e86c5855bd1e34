"""Component contracts of the engine, as small Protocols in one module.

(The shape follows mini-swe-agent: every part the agent loop touches is a Protocol here, so
backends, tools and verifiers can be swapped — scripted in tests, sandboxed in runs.)

Message shapes are OpenAI-style chat dictionaries, since that is what LiteLLM speaks:
``{"role": "system"|"user"|"assistant"|"tool", "content": str, ...}``; assistant messages may
carry ``tool_calls`` and tool messages carry ``tool_call_id``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]
"""One chat message in OpenAI format."""

ToolSchema = dict[str, Any]
"""One tool in OpenAI function-calling format: ``{"type": "function", "function": {...}}``."""


class Purpose(StrEnum):
    """Why a model call is made; routers, cascades and effort policies key on it."""

    ACT = "act"
    PLAN = "plan"
    REVIEW = "review"
    REPLAN = "replan"
    SUMMARIZE = "summarize"


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
