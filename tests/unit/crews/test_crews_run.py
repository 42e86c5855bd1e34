"""Sequential, parallel and supervisor crews with scripted models and known answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chimera.providers import TokenBudget
from chimera.tools import ToolRegistry, Workspace
from chimera.tools.native import ReadFile, Search


def text(answer: str, tokens: int = 0, **kw: Any) -> dict[str, Any]:
    """A scripted text turn (with usage when ``tokens`` is given)."""
    turn: dict[str, Any] = {"text": answer, **kw}
    if tokens:
        turn["usage"] = {"prompt_tokens": tokens, "completion_tokens": 5, "cost_usd": 0.001}
    return turn


SEQ = """\
roles:
  - {name: scout, goal: Find facts., model: scout}
  - {name: critic, goal: Check the facts., model: critic}
  - {name: writer, goal: Write the answer., model: writer}
sequential: {}
"""

SUP = """\
roles:
  - {name: w1, goal: Look at the code., model: w1}
  - {name: w2, goal: Look at the tests., model: w2, budget: {tokens: %s}}
  - {name: lead, goal: Answer., model: lead}
supervisor: {role: lead, rounds: %s}
"""


def test_sequential_roles_see_earlier_outputs_consolidated_never_concatenated(
    env: Any,
) -> None:
    crew = env.crew(SEQ)
    result, models, _ = env.run(
        crew,
        "Is the cache safe?",
        {
            "scout": [text("- The cache has a lock.\n- The cache has a lock.\n- Keys are hashed.")],
            "critic": [text("- The cache has a lock.\n- Eviction is not tested.")],
            "writer": [text("Safe, but eviction needs a test.")],
        },
    )
    assert (result.status, result.answer) == ("completed", "Safe, but eviction needs a test.")
    assert [o.role for o in result.outputs] == ["scout", "critic", "writer"]
    critic_prompt = models["critic"].calls[0].messages[1]["content"]
    assert "[scout] The cache has a lock." in critic_prompt
    assert critic_prompt.count("The cache has a lock.") == 1  # the repeat was dropped
    writer_prompt = models["writer"].calls[0].messages[1]["content"]
    assert "The cache has a lock. [scout, critic]" in writer_prompt
    assert "[critic] Eviction is not tested." in writer_prompt


def test_a_sequential_role_stopped_early_leaves_a_partial_result_with_the_reason(
    env: Any,
) -> None:
    crew = env.crew(SEQ)
    result, _, _ = env.run(
        crew,
        "task",
        {"scout": [text("- Keys are hashed.")], "critic": [], "writer": []},
    )
    assert result.status == "partial"
    assert result.answer == "- Keys are hashed."  # the best answer it has, never nothing
    assert "critic stopped (error" in result.reason and "writer stopped" in result.reason


def test_parallel_crew_answer_is_the_consolidation_with_sources(env: Any) -> None:
    crew = env.crew(
        "roles:\n  - {name: a, goal: g, model: a}\n  - {name: b, goal: g, model: b}\nparallel: {}\n"
    )
    result, _, _ = env.run(
        crew,
        "task",
        {
            "a": [text("- Input is validated.\n- Uses JSON.")],
            "b": [text("- Input is not validated.")],
        },
    )
    assert result.status == "completed"
    assert "- a: Input is validated.\n  vs b: Input is not validated." in result.answer
    assert "[a] Uses JSON." in result.answer
    assert result.consolidation is not None and len(result.consolidation.conflicts) == 1


def test_supervisor_delegates_a_second_round_to_one_worker_then_answers(env: Any) -> None:
    crew = env.crew(SUP % ("null", 2))
    result, models, _ = env.run(
        crew,
        "Is parse() correct?",
        {
            "w1": [
                text("- parse() splits on commas.", tokens=100),
                text("- parse() drops empty fields.", expect=["show the empty-field case"]),
            ],
            "w2": [text("- test_parse covers commas.", tokens=80)],
            "lead": [
                text("DELEGATE w1: show the empty-field case", expect=["[w2] test_parse"]),
                text("parse() splits on commas and drops empty fields; commas are tested."),
            ],
        },
    )
    assert result.status == "completed"
    assert result.rounds == 2
    assert result.answer.startswith("parse() splits on commas and drops empty fields")
    assert len(models["w1"].calls) == 2 and len(models["w2"].calls) == 1
    # The supervisor has no tools and is told it delegates.
    lead_call = models["lead"].calls[0]
    assert lead_call.tools == []
    assert "you have no tools and do not redo it" in lead_call.messages[0]["content"]
    assert result.usage.total_tokens == 105 + 85
    calls = env.audit_events("crew.call")
    assert {(c["role"], c["round"]) for c in calls} == {
        ("w1", 1),
        ("w2", 1),
        ("lead", 1),
        ("w1", 2),
        ("lead", 2),
    }
    (finished,) = env.audit_events("crew.finished")
    assert (finished["status"], finished["total_tokens"]) == ("completed", 190)


def test_supervisor_out_of_rounds_states_round_limit_and_keeps_the_best_answer(
    env: Any,
) -> None:
    crew = env.crew(SUP % ("null", 1))
    result, _, _ = env.run(
        crew,
        "task",
        {
            "w1": [text("- The build is green.")],
            "w2": [text("- Two tests are skipped.")],
            "lead": [text("DELEGATE w2: why are they skipped?")],
        },
    )
    assert result.status == "round_limit"
    assert "1 round(s) used and the supervisor still asked for: w2" in result.reason
    assert "[w1] The build is green." in result.answer
    assert "[w2] Two tests are skipped." in result.answer


def test_a_worker_stopped_by_its_budget_stops_alone(env: Any) -> None:
    crew = env.crew(SUP % (50, 2))
    result, models, backends = env.run(
        crew,
        "task",
        {
            "w1": [text("- The build is green.", tokens=40)],
            "w2": [text("- never sent")],
            "lead": [text("The build is green; w2 could not look.")],
        },
        budget=TokenBudget(100_000, name="run"),
    )
    assert result.status == "partial"
    assert "w2 stopped (budget" in result.reason
    assert result.answer == "The build is green; w2 could not look."
    assert models["w2"].calls == []  # refused before sending
    (w2,) = [o for o in result.outputs if o.role == "w2"]
    assert w2.outcome == "budget"
    refused = env.audit_events("budget_refused")
    assert [r["budget"] for r in refused] == ["worker:w2"]
    assert [s.worker for s in backends.spend() if s.tokens] == ["w1"]


def test_a_crew_with_no_answer_at_all_fails_with_a_stated_reason(env: Any) -> None:
    crew = env.crew(SUP % ("null", 2))
    result, _, _ = env.run(crew, "task", {"w1": [], "w2": [], "lead": []})
    assert result.status == "failed"
    assert result.answer.startswith("No role produced an answer: w1 stopped (error")


def test_role_tools_are_filtered_to_its_allowlist_never_widened(env: Any, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("secret plan\n")
    registry = ToolRegistry()
    ws = Workspace(tmp_path)
    registry.register(ReadFile(ws, 2000))
    registry.register(Search(ws, 2000))
    crew = env.crew(
        "roles:\n  - {name: a, goal: g, model: a, tools: [search]}\n  - {name: b, goal: g, "
        "model: b}\nparallel: {}\n"
    )
    result, models, _ = env.run(
        crew,
        "task",
        {
            "a": [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
                text("- Could not read it."),
            ],
            "b": [text("- Nothing to add.")],
        },
        tools=registry,
    )
    first = models["a"].calls[0]
    assert [t["function"]["name"] for t in first.tools or []] == ["search"]
    tool_reply = models["a"].calls[1].messages[-1]
    assert "unknown tool 'read_file'; available: search" in tool_reply["content"]
    assert "secret plan" not in tool_reply["content"]
    assert models["b"].calls[0].tools == []
    assert [e["ok"] for e in env.audit_events("crew.tool")] == [False]
    assert result.status == "completed"
