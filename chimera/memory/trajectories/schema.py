"""The shape of every exported row, checked before it is written (no trainer needed).

* ``sft`` — TRL's conversational language-modeling rows with tool calling: ``messages``
  (assistant turns may carry ``tool_calls`` whose ``arguments`` are a JSON object; tool
  results are ``{"role": "tool", "name", "content"}``) and an optional ``tools`` column of
  JSON schemas (``{"type": "function", "function": {name, description, parameters}}``).
* ``dpo`` — TRL's conversational preference rows: ``prompt``, ``chosen``, ``rejected`` (lists of
  the same messages; each completion starts with an assistant turn), optional ``tools``.
* ``openai-dpo`` — OpenAI's preference fine-tuning JSONL: ``input`` (``messages`` as in the
  Chat Completions API — tool calls with ``id`` and JSON-text ``arguments``, tool results
  with ``tool_call_id`` — and optional ``tools`` / ``parallel_tool_calls``), and
  ``preferred_output`` / ``non_preferred_output``, each exactly one assistant message.

Every model forbids unknown keys, so a row with anything else fails here, not at upload.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chimera.errors import ChimeraError


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ToolFunction(_Shape):
    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, Any]


class ToolSchema(_Shape):
    type: Literal["function"]
    function: ToolFunction


class System(_Shape):
    role: Literal["system"]
    content: str


class User(_Shape):
    role: Literal["user"]
    content: str


# -- TRL -------------------------------------------------------------------------------------


class TrlFunction(_Shape):
    name: str = Field(min_length=1)
    arguments: dict[str, Any]


class TrlCall(_Shape):
    type: Literal["function"]
    function: TrlFunction


class TrlAssistant(_Shape):
    role: Literal["assistant"]
    content: str | None = None
    tool_calls: list[TrlCall] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _says_something(self) -> TrlAssistant:
        if self.content is None and not self.tool_calls:
            raise ValueError("an assistant turn needs content or tool_calls")
        return self


class TrlTool(_Shape):
    role: Literal["tool"]
    name: str = Field(min_length=1)
    content: str


TrlMessage = Annotated[System | User | TrlAssistant | TrlTool, Field(discriminator="role")]


def _starts_with_assistant(turns: list[Any], what: str) -> None:
    if not turns or not isinstance(turns[0], TrlAssistant):
        raise ValueError(f"{what} must start with an assistant turn")


class SftRow(_Shape):
    messages: list[TrlMessage] = Field(min_length=2)
    tools: list[ToolSchema] | None = None

    @model_validator(mode="after")
    def _has_assistant(self) -> SftRow:
        if not any(isinstance(m, TrlAssistant) for m in self.messages):
            raise ValueError("messages hold no assistant turn")
        return self


class DpoRow(_Shape):
    prompt: list[TrlMessage] = Field(min_length=1)
    chosen: list[TrlMessage]
    rejected: list[TrlMessage]
    tools: list[ToolSchema] | None = None

    @model_validator(mode="after")
    def _completions(self) -> DpoRow:
        _starts_with_assistant(self.chosen, "chosen")
        _starts_with_assistant(self.rejected, "rejected")
        return self


# -- OpenAI ------------------------------------------------------------------------------------


class OpenAIFunction(_Shape):
    name: str = Field(min_length=1)
    arguments: str


class OpenAICall(_Shape):
    id: str = Field(min_length=1)
    type: Literal["function"]
    function: OpenAIFunction


class OpenAIAssistant(_Shape):
    role: Literal["assistant"]
    content: str | None = None
    tool_calls: list[OpenAICall] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _says_something(self) -> OpenAIAssistant:
        if self.content is None and not self.tool_calls:
            raise ValueError("an assistant message needs content or tool_calls")
        return self


class OpenAITool(_Shape):
    role: Literal["tool"]
    tool_call_id: str = Field(min_length=1)
    content: str


OpenAIMessage = Annotated[System | User | OpenAIAssistant | OpenAITool, Field(discriminator="role")]


class OpenAIInput(_Shape):
    messages: list[OpenAIMessage] = Field(min_length=1)
    tools: list[ToolSchema] | None = None
    parallel_tool_calls: bool | None = None

    @model_validator(mode="after")
    def _results_answer_calls(self) -> OpenAIInput:
        seen: set[str] = set()
        for m in self.messages:
            if isinstance(m, OpenAIAssistant):
                seen.update(c.id for c in m.tool_calls or [])
            elif isinstance(m, OpenAITool) and m.tool_call_id not in seen:
                raise ValueError(f"tool result {m.tool_call_id!r} answers no earlier tool call")
        return self


class OpenAIDpoRow(_Shape):
    input: OpenAIInput
    preferred_output: list[OpenAIAssistant] = Field(min_length=1, max_length=1)
    non_preferred_output: list[OpenAIAssistant] = Field(min_length=1, max_length=1)


ROW_MODELS: dict[str, type[_Shape]] = {
    "sft": SftRow,
    "dpo": DpoRow,
    "openai-dpo": OpenAIDpoRow,
}


def validate_row(fmt: str, row: dict[str, Any]) -> None:
    """Check ``row`` against the ``fmt`` schema.

    Raises:
        ChimeraError: the row does not fit (the first problem, with its location).
    """
    try:
        ROW_MODELS[fmt].model_validate(row)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ChimeraError(f"{fmt} row does not fit its schema: {where}: {first['msg']}") from exc


__all__ = ["ROW_MODELS", "DpoRow", "OpenAIDpoRow", "SftRow", "validate_row"]
