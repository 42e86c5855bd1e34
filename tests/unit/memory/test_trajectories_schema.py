"""The row schemas reject what TRL or OpenAI would: unknown keys, wrong argument types, more
than one assistant message per side, tool results that answer no call."""

from __future__ import annotations

from typing import Any

import pytest

from chimera.errors import ChimeraError
from chimera.memory.trajectories import validate_row

SYSTEM = {"role": "system", "content": "You are a worker."}
USER = {"role": "user", "content": "Add total()."}
CALL = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
OPENAI_CALL = {"role": "assistant", "tool_calls": [CALL]}
OPENAI_RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "1\tdef add(): ..."}
TRL_CALL = {
    "role": "assistant",
    "tool_calls": [{"type": "function", "function": {"name": "read_file", "arguments": {}}}],
}
TRL_RESULT = {"role": "tool", "name": "read_file", "content": "1\tdef add(): ..."}
DONE = {"role": "assistant", "content": "Done."}
TOOL = {
    "type": "function",
    "function": {"name": "read_file", "description": "Read.", "parameters": {"type": "object"}},
}


def _openai(**change: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "input": {"messages": [SYSTEM, USER, OPENAI_CALL, OPENAI_RESULT], "tools": [TOOL]},
        "preferred_output": [DONE],
        "non_preferred_output": [{"role": "assistant", "content": "Gave up."}],
    }
    row.update(change)
    return row


def test_well_formed_rows_pass() -> None:
    validate_row("openai-dpo", _openai())
    validate_row("sft", {"messages": [SYSTEM, USER, TRL_CALL, TRL_RESULT, DONE], "tools": [TOOL]})
    validate_row(
        "dpo",
        {"prompt": [SYSTEM, USER], "chosen": [TRL_CALL, TRL_RESULT, DONE], "rejected": [DONE]},
    )


@pytest.mark.parametrize(
    ("fmt", "row", "message"),
    [
        ("openai-dpo", _openai(preferred_output=[DONE, DONE]), "preferred_output"),
        ("openai-dpo", _openai(non_preferred_output=[USER]), "non_preferred_output"),
        ("openai-dpo", _openai(metadata={"run": "a"}), "metadata"),
        (
            "openai-dpo",
            _openai(input={"messages": [SYSTEM, USER, OPENAI_RESULT]}),
            "answers no earlier tool call",
        ),
        ("sft", {"messages": [SYSTEM, USER, OPENAI_CALL, DONE]}, "messages"),
        ("sft", {"messages": [SYSTEM, USER]}, "no assistant turn"),
        ("sft", {"messages": [SYSTEM, USER, {"role": "assistant"}]}, "content or tool_calls"),
        ("dpo", {"prompt": [USER], "chosen": [TRL_RESULT], "rejected": [DONE]}, "chosen"),
        ("dpo", {"prompt": [USER], "chosen": [DONE], "rejected": [DONE], "extra": 1}, "extra"),
    ],
)
def test_malformed_rows_fail_with_where(fmt: str, row: dict[str, Any], message: str) -> None:
    with pytest.raises(ChimeraError, match=message):
        validate_row(fmt, row)
