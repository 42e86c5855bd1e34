"""Rows in the three export shapes (:mod:`chimera.memory.trajectories.schema` has them) and
the metadata line kept beside each row.

The training file holds only what the trainer reads; what Chimera knows about a row (run,
card, attempts, verdicts, model, tokens, cost, taint, provenance, pairing mode, and the
memory, skill and playbook text the attempt's plan prompt held) goes to a
metadata file, one line per row in the same order, so neither trainer sees unknown keys.
"""

from __future__ import annotations

import json
from typing import Any

from chimera.memory.trajectories.collect import Message, Trajectory
from chimera.memory.trajectories.pairs import Pair

Row = dict[str, Any]

CONTEXT = {"task": "history-stripped", "strict": "strict-prefix"}
"""The ``context`` of a pair's metadata: how its shared prompt was made."""


class Unfit(Exception):
    """A trajectory that cannot be written in a format (the message says why)."""


def sft_row(t: Trajectory) -> tuple[Row, Row]:
    """TRL's conversational row of an accepted attempt, and its metadata.

    Raises:
        Unfit: a tool call's arguments are not a JSON object (TRL's chat templates need one).
    """
    row: Row = {"messages": [_trl(m) for m in t.messages]}
    if t.tools is not None:
        row["tools"] = [dict(s) for s in t.tools]
    meta = {**_attempt(t), "tainted": t.tainted, "verified": t.verified, "source": t.source}
    return row, meta


def dpo_row(pair: Pair) -> tuple[Row, Row]:
    """TRL's conversational preference row (``prompt``, ``chosen``, ``rejected``).

    Raises:
        Unfit: as :func:`sft_row`.
    """
    row: Row = {
        "prompt": [_trl(m) for m in pair.prompt],
        "chosen": [_trl(m) for m in pair.chosen_turns],
        "rejected": [_trl(m) for m in pair.rejected_turns],
    }
    if pair.chosen.tools is not None:
        row["tools"] = [dict(s) for s in pair.chosen.tools]
    return row, _pair_meta(pair)


def openai_dpo_row(pair: Pair) -> tuple[Row, Row]:
    """OpenAI's preference row: ``input`` (messages, tools) and one assistant message each
    in ``preferred_output`` / ``non_preferred_output`` (``pair`` made with ``one_turn``)."""
    inp: Row = {"messages": [_openai(m) for m in pair.prompt]}
    if pair.chosen.tools is not None:
        inp["tools"] = [dict(s) for s in pair.chosen.tools]
    row: Row = {
        "input": inp,
        "preferred_output": [_openai(m) for m in pair.chosen_turns],
        "non_preferred_output": [_openai(m) for m in pair.rejected_turns],
    }
    return row, _pair_meta(pair)


# -- messages ------------------------------------------------------------------------------------


def _text(m: Message) -> str:
    content = m.get("content")
    return content if isinstance(content, str) else ""


def _calls(m: Message) -> list[dict[str, Any]]:
    calls = m.get("tool_calls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _trl(m: Message) -> Row:
    role = m.get("role")
    if role == "tool":
        return {"role": "tool", "name": str(m.get("name") or "tool"), "content": _text(m)}
    if role != "assistant":
        return {"role": role, "content": _text(m)}
    out: Row = {"role": "assistant"}
    calls = _calls(m)
    if _text(m) or not calls:
        out["content"] = _text(m)
    if calls:
        out["tool_calls"] = [
            {
                "type": "function",
                "function": {
                    "name": str(c["function"]["name"]),
                    "arguments": _arguments(c["function"].get("arguments")),
                },
            }
            for c in calls
        ]
    return out


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(str(raw))
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise Unfit("tool-call arguments are not a JSON object")
    return value


def _openai(m: Message) -> Row:
    role = m.get("role")
    if role == "tool":
        return {"role": "tool", "tool_call_id": str(m.get("tool_call_id")), "content": _text(m)}
    if role != "assistant":
        return {"role": role, "content": _text(m)}
    out: Row = {"role": "assistant"}
    calls = _calls(m)
    if _text(m) or not calls:
        out["content"] = _text(m)
    if calls:
        out["tool_calls"] = [
            {
                "id": str(c["id"]),
                "type": "function",
                "function": {
                    "name": str(c["function"]["name"]),
                    "arguments": _arguments_text(c["function"].get("arguments")),
                },
            }
            for c in calls
        ]
    return out


def _arguments_text(raw: object) -> str:
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


# -- metadata ------------------------------------------------------------------------------------


def _attempt(t: Trajectory) -> Row:
    return {
        "run_id": t.run_id,
        "card": t.card,
        "attempt": t.number,
        "verdict": t.verdict,
        "model": t.model,
        "tokens": t.tokens,
        "cost_usd": t.cost_usd,
        "files_changed": t.files_changed,
        "added": t.added,
        "removed": t.removed,
        # The memory, skills and playbook the attempt's plan prompt held (redacted on export).
        "prompt_context": dict(t.prompt_context),
    }


def _pair_meta(pair: Pair) -> Row:
    c, r = pair.chosen, pair.rejected
    return {
        "card": c.card,
        "context": CONTEXT[pair.mode],
        "chosen": _attempt(c),
        "rejected": {**_attempt(r), "why": r.why},
        "tainted": c.tainted or r.tainted,
        "verified": c.verified and r.verified,
        "source": c.source if c.source == r.source else "mixed",
    }


__all__ = ["CONTEXT", "Row", "Unfit", "dpo_row", "openai_dpo_row", "sft_row"]
