"""The act turns of ``transcript.jsonl``, grouped per attempt and checked against the audit log.

The transcript is appended line by line as the agent works (``label``, ``attempt``,
``purpose``, ``kind``; ``kind: tools`` records the tool schemas of an attempt, ``kind:
message`` one message with its ``index``). It is not hash-chained, so every use goes through
:func:`confirm`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

Message = dict[str, Any]

AUDITED_CHARS = 2000
"""How much of a tool call's arguments and output the ``tool_call`` audit event keeps."""


@dataclass
class Sequence:
    """One attempt's act conversation, as the transcript holds it."""

    tools: list[dict[str, Any]] | None = None
    messages: list[Message] = field(default_factory=list)
    broken: bool = False
    """A line is missing, out of order or malformed: the sequence cannot be trusted."""


def read_transcript(path: Path) -> dict[tuple[str, int], Sequence]:
    """The last act sequence of every (card, attempt): a resumed attempt starts over.

    A missing or unreadable file gives ``{}``; a torn line is dropped (the audit check then
    catches what it lost); a line of the wrong shape marks its sequence broken.
    """
    out: dict[tuple[str, int], Sequence] = {}
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return out
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("purpose") != "act":
            continue
        attempt = entry.get("attempt")
        if not isinstance(attempt, int):
            continue
        key = (str(entry.get("label")), attempt)
        if entry.get("kind") == "tools":
            tools = entry.get("tools")
            out[key] = Sequence(
                tools=[t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else None
            )
        elif entry.get("kind") == "message":
            seq = out.get(key)
            if entry.get("index") == 0 and (seq is None or seq.messages):
                seq = out[key] = Sequence()
            if seq is None:
                continue
            message = entry.get("message")
            if entry.get("index") == len(seq.messages) and _well_formed(message):
                seq.messages.append(message)
            else:
                seq.broken = True
    return out


def _well_formed(message: object) -> TypeGuard[Message]:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return False
    calls = message.get("tool_calls")
    if calls is None:
        return True
    return isinstance(calls, list) and all(
        isinstance(c, dict)
        and isinstance(c.get("function"), dict)
        and isinstance(c["function"].get("name"), str)
        for c in calls
    )


def confirm(
    messages: list[Message],
    model_calls: list[list[str]],
    tool_calls: list[tuple[str, str, str]],
) -> str | None:
    """Why ``messages`` disagree with the audit log's ``model_call`` tool names (one list per
    assistant turn) and ``tool_call`` events (name, arguments, output; capped at
    :data:`AUDITED_CHARS`), or ``None`` when they agree."""
    turns = [m for m in messages if m.get("role") == "assistant"]
    names = [[str(c["function"]["name"]) for c in m.get("tool_calls") or []] for m in turns]
    if names != model_calls:
        return "transcript does not match the audit log (model turns differ)"
    calls = [
        (
            str(call["function"]["name"]),
            str(call["function"].get("arguments"))[:AUDITED_CHARS],
            str(result.get("content", ""))[:AUDITED_CHARS],
        )
        for call, result in calls_with_results(messages)
    ]
    same = len(calls) == len(tool_calls) and all(
        name == audited[0] and _audited(audited[1], args) and _audited(audited[2], output)
        for (name, args, output), audited in zip(calls, tool_calls, strict=False)
    )
    if not same:
        return "transcript does not match the audit log (tool calls differ)"
    return None


_REDACTED = re.compile(r"\[REDACTED:[^\]\n]*\]")


def _audited(recorded: str, written: str) -> bool:
    """Whether the transcript's ``written`` text is what the audit log ``recorded``: equal, or
    equal but for the spans the audit's SecretRedactor replaced (``[REDACTED:<name>]``, each
    standing for the same marker — a transcript redacted when written — or for some text
    without a marker, which a transcript written before that kept verbatim)."""
    if recorded == written:
        return True
    markers = _REDACTED.findall(recorded)
    if not markers:
        return False
    parts = _REDACTED.split(recorded)
    # A marker never stands for text holding another marker: "[REDACTED:x] extra" is an edit.
    spans = [rf"(?:{re.escape(m)}|(?:(?!\[REDACTED:).)+?)" for m in markers]
    pattern = re.escape(parts[0]) + "".join(
        span + re.escape(part) for span, part in zip(spans, parts[1:], strict=True)
    )
    return re.fullmatch(pattern, written, re.DOTALL) is not None


def calls_with_results(messages: list[Message]) -> list[tuple[Message, Message]]:
    """Each tool call with its result: the agent appends the results right after the turn,
    in call order (paired by position, so a model's duplicate call ids do not confuse it)."""
    out: list[tuple[Message, Message]] = []
    pending: list[Message] = []
    for m in messages:
        if m.get("role") == "assistant":
            pending = list(m.get("tool_calls") or [])
        elif m.get("role") == "tool" and pending:
            out.append((pending.pop(0), m))
    return out


def renumber(messages: list[Message]) -> list[Message]:
    """Copies with tool-call ids ``call_1``, ``call_2`` ... in order; results follow by
    position (as :func:`calls_with_results` pairs them), so equal turns compare equal."""
    out: list[Message] = []
    pending: list[str] = []
    count = 0
    for m in messages:
        m = dict(m)
        if m.get("role") == "assistant":
            calls = []
            for c in m.get("tool_calls") or []:
                count += 1
                calls.append({**c, "id": f"call_{count}"})
            if calls:
                m["tool_calls"] = calls
            pending = [c["id"] for c in calls]
        elif m.get("role") == "tool" and pending:
            m["tool_call_id"] = pending.pop(0)
        out.append(m)
    return out


__all__ = [
    "AUDITED_CHARS",
    "Message",
    "Sequence",
    "calls_with_results",
    "confirm",
    "read_transcript",
    "renumber",
]
