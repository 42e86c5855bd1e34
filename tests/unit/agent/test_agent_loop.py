"""The Agent loop: tool calls, garbage turns counted as steps, limits, serialisable transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chimera.core.agent import EMPTY_TURN_NOTE, Agent, Transcript
from chimera.providers import BudgetedBackend, ScriptedBackend, TokenBudget
from chimera.runner import LocalRunner
from chimera.tools import native_tools


def _agent(tmp_path: Path, turns: list[dict[str, Any]], **kw: Any) -> tuple[Agent, ScriptedBackend]:
    backend = ScriptedBackend(turns)
    tools = native_tools(tmp_path, LocalRunner(), command_timeout=10)
    return Agent(backend, tools, **kw), backend


def test_agent_runs_tools_until_a_final_text_turn(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    agent, backend = _agent(
        tmp_path,
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.txt", "content": "hi\n"}}
                ]
            },
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
            {"text": "Wrote a.txt."},
        ],
        on_event=lambda e, f: events.append((e, f)),
    )
    res = agent.run([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])
    assert res.outcome == "finished" and res.steps == 3
    assert res.first_failing_step is None
    assert res.final_text == "Wrote a.txt."
    assert (tmp_path / "a.txt").read_text() == "hi\n"
    tool_msgs = [m for m in res.transcript.messages if m["role"] == "tool"]
    assert "hi" in tool_msgs[1]["content"]
    assert [e for e, _ in events].count("tool_call") == 2
    assert backend.calls[0].tools is not None


def test_agent_garbage_turns_count_as_steps_and_errors_are_fed_back(tmp_path: Path) -> None:
    garbage: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_file", "arguments": "{not json"}]},
        {"tool_calls": [{"name": "no_such_tool", "arguments": {}}]},
        {"text": ""},
        {"tool_calls": [{"name": "read_file", "arguments": "[1, 2]"}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "../../etc/passwd"}}]},
        {"text": "never reached"},
    ]
    agent, backend = _agent(tmp_path, garbage, max_steps=5)
    res = agent.run([{"role": "user", "content": "go"}])
    assert res.outcome == "step_limit"
    assert res.steps == 5 and len(backend.calls) == 5
    assert res.first_failing_step == 1
    assert res.first_failure is not None and "read_file" in res.first_failure
    contents = [str(m.get("content")) for m in res.transcript.messages]
    joined = "\n".join(contents)
    assert "not valid JSON" in joined
    assert "unknown tool 'no_such_tool'" in joined
    assert EMPTY_TURN_NOTE in joined
    assert "must be a JSON object" in joined
    assert "leaves the workspace" in joined or "escape" in joined.lower()
    assert all(not s.ok for s in res.transcript.steps)


def test_agent_path_escape_is_refused_not_raised(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("TOPSECRETVALUE")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "link").symlink_to(outside)
    agent, _ = _agent(
        tmp_path / "ws",
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "/etc/hostname"}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "link"}}]},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": ".git/config", "content": "x"}}
                ]
            },
            {"text": "gave up"},
        ],
    )
    res = agent.run([{"role": "user", "content": "go"}])
    tool_out = [m["content"] for m in res.transcript.messages if m["role"] == "tool"]
    assert len(tool_out) == 3
    assert all("TOPSECRETVALUE" not in o for o in tool_out)
    assert not (tmp_path / "ws" / ".git").exists()
    assert [s.ok for s in res.transcript.steps] == [False, False, False, True]


def test_agent_token_limit_holds(tmp_path: Path) -> None:
    turn = {
        "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}],
        "usage": {"prompt_tokens": 400, "completion_tokens": 100},
    }
    agent, backend = _agent(tmp_path, [turn] * 10, token_limit=1200, max_steps=10)
    res = agent.run([{"role": "user", "content": "go"}])
    assert res.outcome == "token_limit"
    assert len(backend.calls) == 3 and res.usage.total_tokens == 1500


@pytest.mark.slow
def test_agent_budget_refusal_ends_the_loop_before_sending(tmp_path: Path) -> None:
    inner = ScriptedBackend([{"tool_calls": [{"name": "list_dir", "arguments": {}}]}] * 5)
    budget = TokenBudget(max_tokens=100)
    backend = BudgetedBackend(inner, budget, model="gpt-4o-mini", default_max_tokens=64)
    tools = native_tools(tmp_path, LocalRunner())
    res = Agent(backend, tools).run([{"role": "user", "content": "x " * 200}])
    assert res.outcome == "budget"
    assert inner.calls == []
    assert "budget" in res.error


def test_agent_transcript_round_trips_and_resumes(tmp_path: Path) -> None:
    agent, _ = _agent(
        tmp_path,
        [
            {"tool_calls": [{"name": "list_dir", "arguments": {}}]},
            {"text": "done"},
        ],
        max_steps=1,
    )
    res = agent.run([{"role": "user", "content": "go"}])
    assert res.outcome == "step_limit"
    data = json.loads(json.dumps(res.transcript.to_json()))
    restored = Transcript.from_json(data)
    assert restored.to_json() == res.transcript.to_json()
    agent.max_steps = 2
    res2 = agent.run(transcript=restored)
    assert res2.outcome == "finished" and res2.steps == 2


def test_agent_elides_old_tool_output_but_never_pinned_messages(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 8000)
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "big.txt"}}]}
    agent, _ = _agent(tmp_path, [read, read, read, {"text": "ok"}], context_tokens=3000)
    pinned = "P" * 6000
    res = agent.run([{"role": "user", "content": pinned}])
    msgs = res.transcript.messages
    assert msgs[0]["content"] == pinned
    tools = [m["content"] for m in msgs if m["role"] == "tool"]
    assert any(t.startswith("[elided") for t in tools)
