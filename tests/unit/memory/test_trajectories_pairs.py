"""Why a candidate pair is skipped, mode by mode (hand-built trajectories: the pairing is pure
logic over messages)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from chimera.core.attempts import HISTORY_HEADING
from chimera.memory.trajectories import Trajectory
from chimera.memory.trajectories.pairs import (
    AT_TOOL_RESULT,
    HISTORY_DIFFERS,
    IDENTICAL,
    NO_HEADING,
    PREFIX,
    PROMPT_DIFFERS,
    PROMPTS_DIFFER,
    TOOLS_DIFFER,
    Pair,
    candidates,
    make_pair,
)

SYSTEM = {"role": "system", "content": "Work."}
USER = {"role": "user", "content": "# Task\nAdd total().\n\n# Plan\n1. Edit calc.py."}
HISTORY = f"\n\n## {HISTORY_HEADING}\n### Attempt 1 — verdict: verify_failed"


def _call(name: str, n: int) -> dict[str, Any]:
    fn = {"name": name, "arguments": "{}"}
    return {"role": "assistant", "content": "", "tool_calls": [{"id": f"call_{n}", "function": fn}]}


def _result(text: str, n: int) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"call_{n}", "name": "x", "content": text}


DONE = {"role": "assistant", "content": "Done."}
BASE = Trajectory(
    run_id="r",
    source="local",
    card="c",
    task_digest="t",
    number=1,
    verdict="passed",
    accepted=True,
    why="",
    messages=(SYSTEM, USER, _call("read_file", 1), _result("1", 1), DONE),
    prompt_size=2,
    history_injected=False,
    tools=None,
    model="m",
    tokens=0,
    cost_usd=None,
    files_changed=1,
    added=1,
    removed=0,
    tainted=False,
)


def _bad(*turns: dict[str, Any], user: dict[str, Any] = USER, **kw: Any) -> Trajectory:
    return replace(
        BASE,
        number=2,
        verdict="verify_failed",
        accepted=False,
        messages=(SYSTEM, user, *turns),
        **kw,
    )


def test_candidates_pair_only_the_same_card_and_task() -> None:
    other_card = replace(_bad(DONE), card="d")
    other_task = replace(_bad(DONE), task_digest="u")
    same = _bad(DONE)
    assert candidates([other_card, BASE, other_task, same]) == [(BASE, same)]


@pytest.mark.parametrize(
    ("rejected", "mode", "one_turn", "reason"),
    [
        (_bad(DONE, tools=({"type": "function"},)), "task", False, TOOLS_DIFFER),
        (
            _bad(DONE, user={"role": "user", "content": "# Task\nAdd total().\n\n# Plan\n2."}),
            "task",
            False,
            PROMPTS_DIFFER,
        ),
        (_bad(DONE, history_injected=True), "task", False, NO_HEADING),
        (_bad(_call("read_file", 1), _result("1", 1), DONE), "task", False, IDENTICAL),
        (_bad(_call("read_file", 1), _result("2", 1), DONE), "task", True, AT_TOOL_RESULT),
        (_bad(_call("read_file", 1), _result("1", 1)), "strict", False, PREFIX),
        (_bad(DONE, user={"role": "user", "content": "other"}), "strict", False, PROMPT_DIFFERS),
        (
            _bad(
                DONE,
                user={"role": "user", "content": USER["content"] + HISTORY},
                history_injected=True,
            ),
            "strict",
            False,
            HISTORY_DIFFERS,
        ),
    ],
)
def test_skip_reasons(rejected: Trajectory, mode: Any, one_turn: bool, reason: str) -> None:
    assert make_pair(BASE, rejected, mode, one_turn=one_turn) == reason


def test_task_mode_strips_only_the_last_history_section() -> None:
    user = {"role": "user", "content": USER["content"] + HISTORY}
    rejected = _bad(DONE, user=user, history_injected=True)
    pair = make_pair(BASE, rejected, "task", one_turn=False)
    assert isinstance(pair, Pair)
    assert pair.prompt == (SYSTEM, USER)
    assert pair.rejected_turns == (DONE,)
