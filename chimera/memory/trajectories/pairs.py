"""Preference pairs: an accepted and a failed attempt of the same card, over a shared prompt.

A retry's prompt carries the earlier attempts (the carried-forward history), so it never
equals the first attempt's prompt byte for byte. Two ways to pair anyway:

* ``task`` (default): the shared prompt is the card's task messages with the history section
  removed; each attempt's assistant and tool turns are its completion. The prompts must then
  be equal (a replan that changed the plan makes them differ: skipped).
* ``strict``: the two conversations must agree byte for byte (tool-call ids numbered per
  attempt) up to their first difference, which must be a model turn; the shared part is the
  prompt, the rest of each conversation the completion. Within one run this never pairs a
  retry (its history differs); across runs of the same task it does.

With ``one_turn`` (OpenAI's DPO format, one assistant message per side) both modes also skip
turns the two attempts share, and each completion is the first assistant message that differs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import Literal

from chimera.core.attempts import HISTORY_HEADING
from chimera.memory.trajectories.collect import Message, Trajectory

Mode = Literal["task", "strict"]
MODES: tuple[Mode, ...] = ("task", "strict")

PROMPTS_DIFFER = "prompts differ beyond the carried-forward history (another plan)"
HISTORY_DIFFERS = "prompts differ: carried-forward history"
PROMPT_DIFFERS = "prompts differ"
NO_HEADING = "carried-forward history not found in the prompt"
TOOLS_DIFFER = "the tools shown differ"
IDENTICAL = "identical completions"
AT_TOOL_RESULT = "the attempts first differ at a tool result, not a model turn"
PREFIX = "one attempt's turns are a prefix of the other's"


@dataclass(frozen=True)
class Pair:
    """A preference pair: ``prompt`` shared, then each side's completion."""

    chosen: Trajectory
    rejected: Trajectory
    mode: Mode
    prompt: tuple[Message, ...]
    chosen_turns: tuple[Message, ...]
    rejected_turns: tuple[Message, ...]


def candidates(trajectories: Sequence[Trajectory]) -> list[tuple[Trajectory, Trajectory]]:
    """Every (accepted, failed) combination of the same card and task, in a stable order."""
    groups: dict[tuple[str, str], list[Trajectory]] = {}
    for t in trajectories:
        groups.setdefault((t.card, t.task_digest), []).append(t)
    out: list[tuple[Trajectory, Trajectory]] = []
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda t: t.sort_key)
        good = [t for t in members if t.accepted]
        bad = [t for t in members if not t.accepted]
        out.extend(product(good, bad))
    return out


def make_pair(
    chosen: Trajectory, rejected: Trajectory, mode: Mode, *, one_turn: bool
) -> Pair | str:
    """The pair in ``mode``, or the reason it cannot be made (one of this module's constants)."""
    if chosen.tools != rejected.tools:
        return TOOLS_DIFFER
    if mode == "task":
        prompt_c, prompt_r = _task_prompt(chosen), _task_prompt(rejected)
        if prompt_c is None or prompt_r is None:
            return NO_HEADING
        if _canon(prompt_c) != _canon(prompt_r):
            return PROMPTS_DIFFER
        turns_c = list(chosen.messages[chosen.prompt_size :])
        turns_r = list(rejected.messages[rejected.prompt_size :])
        if not one_turn:
            if _canon(turns_c) == _canon(turns_r):
                return IDENTICAL
            return Pair(chosen, rejected, mode, tuple(prompt_c), tuple(turns_c), tuple(turns_r))
        return _split(chosen, rejected, mode, prompt_c, turns_c, turns_r, one_turn=True)
    full_c, full_r = list(chosen.messages), list(rejected.messages)
    k = _divergence(full_c, full_r)
    if k is not None and k < max(chosen.prompt_size, rejected.prompt_size):
        history = chosen.history_injected or rejected.history_injected
        return HISTORY_DIFFERS if history else PROMPT_DIFFERS
    return _split(chosen, rejected, mode, [], full_c, full_r, one_turn=one_turn)


def _split(
    chosen: Trajectory,
    rejected: Trajectory,
    mode: Mode,
    prompt: list[Message],
    turns_c: list[Message],
    turns_r: list[Message],
    *,
    one_turn: bool,
) -> Pair | str:
    """Shared turns join the prompt; the completions start at the first difference."""
    k = _divergence(turns_c, turns_r)
    if k is None:
        return IDENTICAL
    if k >= len(turns_c) or k >= len(turns_r):
        return PREFIX
    if turns_c[k].get("role") != "assistant" or turns_r[k].get("role") != "assistant":
        return AT_TOOL_RESULT
    end_c, end_r = (k + 1, k + 1) if one_turn else (len(turns_c), len(turns_r))
    return Pair(
        chosen,
        rejected,
        mode,
        tuple([*prompt, *turns_c[:k]]),
        tuple(turns_c[k:end_c]),
        tuple(turns_r[k:end_r]),
    )


def _task_prompt(t: Trajectory) -> list[Message] | None:
    """The prompt without the carried-forward history; ``None`` if it cannot be found.

    The history is the last section of the user message and is cut only when the audit log
    says it was injected, so task text quoting the heading is never cut.
    """
    prompt = [dict(m) for m in t.messages[: t.prompt_size]]
    if not t.history_injected:
        return prompt
    marker = f"\n\n## {HISTORY_HEADING}\n"
    for m in reversed(prompt):
        content = m.get("content")
        if m.get("role") == "user" and isinstance(content, str) and marker in content:
            m["content"] = content[: content.rindex(marker)]
            return prompt
    return None


def _divergence(a: Sequence[Message], b: Sequence[Message]) -> int | None:
    """The first index where ``a`` and ``b`` differ; ``None`` when they are equal."""
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b) or _canon(a[i]) != _canon(b[i]):
            return i
    return None


def _canon(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


__all__ = ["MODES", "Mode", "Pair", "candidates", "make_pair"]
