"""A backend that replays a script of turns: tests, demos and dry runs without a key.

Use it anywhere a model name is taken: ``--model scripted:PATH``.

Script format (YAML or JSON). The file is a list of turns, or a mapping with ``turns:``
(and an optional ``model:`` name reported in completions)::

    turns:
      - purpose: plan                 # optional: this turn answers only a call with this
        text: |                       #   purpose (act, plan, review, replan, summarize)
          1. Add the function. 2. Run the tests.
      - text: ""                      # optional assistant text (default "")
        tool_calls:                   # optional tool calls, in order
          - name: write_file
            arguments: {path: calc.py, content: "def add(a, b):\\n    return a + b\\n"}
          - name: run_command
            arguments: '{"command": "pytest -q"}'   # a JSON string is passed through as is
            id: call-7                # optional; default "call_<turn>_<index>"
        usage: {prompt_tokens: 900, completion_tokens: 120}   # optional
        expect: ["Why earlier attempts failed"]   # optional: substrings the request must hold
      - when: ["Lessons from earlier"]   # optional: answer only a request holding all of these
        unless: ["do NOT repeat"]        # optional: ...and none of these
        text: ...

Semantics:

* Turns are consumed strictly in order; ``position`` is the index of the next turn. A turn
  with a ``purpose`` that differs from the call's is an error, not skipped, so a script that
  drifts from the agent's behaviour fails loudly at the turn where it drifted.
* ``when`` / ``unless`` make a turn conditional on the request. A run of consecutive
  conditional turns with the same ``purpose`` is **one choice** (if / elif / else): the
  first whose condition holds answers, and the position moves past the whole run; when none
  holds, the call fails naming the turns. So a script can model a model that behaves one way
  when, say, a memory item is in its prompt and another way when it is not. The position
  stays one integer (restore works).
* ``expect`` lists substrings that must occur in the request's messages (any role); a miss
  raises :class:`~chimera.errors.ProviderError` naming the turn and the missing text.
* ``usage`` omitted: 0 tokens and cost 0.0 (nothing was spent). ``usage`` given without
  ``cost_usd``: cost ``None``, so a :class:`~chimera.providers.BudgetedBackend` prices it with
  its model's price.
* Past the last turn, a call raises ``ProviderError("script exhausted at turn N")``.
* ``position`` belongs in a run's durable state; :meth:`ScriptedBackend.restore` puts it back
  so a resumed run replays the same turns.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from chimera.errors import ConfigError, ProviderError
from chimera.protocols import Completion, Message, Purpose, ToolCall, ToolSchema, Usage

__all__ = ["ScriptTurn", "ScriptedBackend", "ScriptedCall"]


class _ScriptToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class _ScriptUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)


class ScriptTurn(BaseModel):
    """One scripted model answer (see the module docstring for the file format)."""

    model_config = ConfigDict(extra="forbid")

    purpose: Purpose | None = None
    text: str = ""
    tool_calls: list[_ScriptToolCall] = Field(default_factory=list)
    usage: _ScriptUsage | None = None
    expect: list[str] = Field(default_factory=list)
    when: list[str] = Field(default_factory=list)
    unless: list[str] = Field(default_factory=list)

    @property
    def conditional(self) -> bool:
        return bool(self.when or self.unless)

    def applies(self, request: str) -> bool:
        """Whether this turn answers a request with this text (``when``/``unless``)."""
        return all(w in request for w in self.when) and not any(u in request for u in self.unless)

    @field_validator("expect", "when", "unless", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class _ScriptFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    turns: list[ScriptTurn]


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """A call the backend received (for tests to inspect prompts)."""

    turn: int
    purpose: Purpose
    messages: list[Message]
    tools: list[ToolSchema] | None
    max_tokens: int | None


@dataclass
class _State:
    position: int = 0
    calls: list[ScriptedCall] = field(default_factory=list)


def _request_text(messages: Sequence[Message]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif content is not None:
            parts.append(json.dumps(content, ensure_ascii=False, default=str))
        if message.get("tool_calls"):
            parts.append(json.dumps(message["tool_calls"], ensure_ascii=False, default=str))
    return "\n".join(parts)


class ScriptedBackend:
    """Replays scripted turns in order; implements :class:`~chimera.protocols.SupportsComplete`.

    Args:
        turns: the script (``ScriptTurn`` objects or mappings in the file format).
        name: reported as ``Completion.model`` (``scripted:<name>``).
        source: where the script came from, for error messages.

    Raises:
        ConfigError: a turn does not follow the format.
    """

    def __init__(
        self,
        turns: Sequence[ScriptTurn | Mapping[str, Any]],
        *,
        name: str = "script",
        source: str = "script",
    ) -> None:
        parsed: list[ScriptTurn] = []
        for index, turn in enumerate(turns):
            if isinstance(turn, ScriptTurn):
                parsed.append(turn)
                continue
            try:
                parsed.append(ScriptTurn.model_validate(turn))
            except ValidationError as exc:
                error = exc.errors()[0]
                key = ".".join(str(p) for p in error["loc"])
                raise ConfigError(
                    f"{source}: turns.{index}{'.' + key if key else ''}: {error['msg']}"
                ) from exc
        self.turns: tuple[ScriptTurn, ...] = tuple(parsed)
        self.model = f"scripted:{name}"
        self.source = source
        self._lock = threading.Lock()
        self._state = _State()

    @classmethod
    def from_file(cls, path: Path) -> ScriptedBackend:
        """Load a YAML (``.yaml``/``.yml``) or JSON script.

        Raises:
            ConfigError: ``file:line:col: message`` for a file that cannot be read or does not
                follow the format.
        """
        from chimera.spec.yamlmodel import load_yaml_model

        path = Path(path)
        # JSON is a subset of YAML 1.2 for every script this format allows, so one parser
        # (with line numbers) reads both.
        script = load_yaml_model(
            path, _ScriptFile, what="the script", expected="a list of turns", list_key="turns"
        )
        return cls(script.turns, name=script.model or path.stem, source=str(path))

    @property
    def position(self) -> int:
        """Index of the next turn to replay (save it with the run's state)."""
        with self._lock:
            return self._state.position

    def restore(self, position: int) -> None:
        """Continue from ``position`` (a value read from :attr:`position` earlier).

        Raises:
            ValueError: ``position`` is outside ``0..len(turns)``.
        """
        if not 0 <= position <= len(self.turns):
            raise ValueError(f"position {position} is outside 0..{len(self.turns)}")
        with self._lock:
            self._state.position = position

    @property
    def remaining(self) -> int:
        """Turns not replayed yet."""
        with self._lock:
            return len(self.turns) - self._state.position

    @property
    def calls(self) -> list[ScriptedCall]:
        """Every call received so far, in order (a copy)."""
        with self._lock:
            return list(self._state.calls)

    def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema] | None = None
    ) -> int:
        """A script has no tokenizer: four characters a token, without importing LiteLLM
        (:func:`chimera.providers.pricing.count_tokens` says the same of a ``scripted:``
        name)."""
        chars = sum(len(json.dumps(m, ensure_ascii=False, default=str)) for m in messages)
        chars += sum(len(json.dumps(t, default=str)) for t in tools or ())
        return max(1, (chars + 3) // 4)

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """0.0: a script is replayed locally and nothing is paid (a turn may still state a
        cost, which its completion carries)."""
        return 0.0

    def check_credentials(self) -> None:
        """Nothing to check: a script needs no key."""

    def with_reasoning_effort(self, effort: str) -> None:
        """Declined: a script replays fixed turns, so there is no effort to send."""
        return None

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        """Return the next scripted turn as a :class:`~chimera.protocols.Completion`.

        Raises:
            ProviderError: the script is exhausted, or the next turn's ``purpose`` or
                ``expect`` does not match this call (the position does not advance).
        """
        with self._lock:
            index = self._state.position
            request: str | None = None
            after = index + 1
            if index < len(self.turns) and self.turns[index].conditional:
                request = _request_text(messages)
                end = index
                first = self.turns[index]
                while (
                    end < len(self.turns)
                    and self.turns[end].conditional
                    and self.turns[end].purpose == first.purpose
                ):
                    end += 1
                chosen = next(
                    (i for i in range(index, end) if self.turns[i].applies(request)), None
                )
                if chosen is None:
                    raise ProviderError(
                        f"script turns {index + 1}-{end} ({self.source}) are alternatives and "
                        "none of their when/unless conditions holds for this request"
                    )
                index, after = chosen, end
            number = index + 1
            if index >= len(self.turns):
                raise ProviderError(
                    f"script exhausted at turn {number} ({self.source} has "
                    f"{len(self.turns)} turns; the call's purpose was '{purpose}')"
                )
            turn = self.turns[index]
            if turn.purpose is not None and turn.purpose != purpose:
                raise ProviderError(
                    f"script turn {number} ({self.source}) is for purpose '{turn.purpose}' "
                    f"but the call's purpose is '{purpose}'"
                )
            if turn.expect:
                text = _request_text(messages) if request is None else request
                for wanted in turn.expect:
                    if wanted not in text:
                        raise ProviderError(
                            f"script turn {number} ({self.source}) expects the request to "
                            f"contain {wanted!r}, and it does not"
                        )
            self._state.calls.append(
                ScriptedCall(
                    number,
                    purpose,
                    [dict(m) for m in messages],
                    [dict(t) for t in tools] if tools is not None else None,
                    max_tokens,
                )
            )
            self._state.position = after
        calls = tuple(
            ToolCall(
                id=call.id or f"call_{number}_{i}",
                name=call.name,
                arguments=call.arguments
                if isinstance(call.arguments, str)
                else json.dumps(call.arguments, ensure_ascii=False),
            )
            for i, call in enumerate(turn.tool_calls)
        )
        if turn.usage is None:
            usage = Usage(0, 0, 0.0)
        else:
            usage = Usage(
                turn.usage.prompt_tokens, turn.usage.completion_tokens, turn.usage.cost_usd
            )
        return Completion(
            text=turn.text,
            tool_calls=calls,
            usage=usage,
            model=self.model,
            raw={"script": self.source, "turn": number},
        )
