"""FusionEngine with scripted backends: analysis → synthesis, quorum, tools, cost."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

import pytest

from chimera.errors import (
    FusionError,
    FusionToolsRefused,
    JudgeOutputInvalid,
    ProviderError,
    QuorumLost,
    RateLimitError,
    ToolTurnRefused,
)
from chimera.fusion import CallRecord, FusionEngine, PanelMember
from chimera.fusion.engine import itemise
from chimera.protocols import Completion, Message, Purpose, ToolSchema
from chimera.providers import ScriptedBackend

ANALYSIS = {
    "consensus": ["retry with backoff"],
    "contradictions": [
        {"point": "max retries", "positions": {"a": "3", "b": "5"}, "resolution": "3"}
    ],
    "partial_coverage": [{"point": "jitter", "covered_by": ["c"], "missing_from": ["a", "b"]}],
    "unique_insights": [{"member": "b", "insight": "honour Retry-After"}],
    "blind_spots": ["idempotency of the request"],
}
TASK: list[Message] = [{"role": "user", "content": "How should the client retry?"}]


def usage(p: int, c: int, cost: float | None) -> dict[str, object]:
    return {"prompt_tokens": p, "completion_tokens": c, "cost_usd": cost}


def member(name: str, text: str, cost: float | None = 0.001) -> PanelMember:
    backend = ScriptedBackend([{"text": text, "usage": usage(100, 20, cost)}], name=name)
    return PanelMember(name, backend, f"scripted:{name}")


class Failing:
    """A member whose provider is down."""

    def __init__(self, exc: ProviderError) -> None:
        self.exc = exc
        self.calls = 0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        self.calls += 1
        raise self.exc


class Barrier:
    """A member that answers only once every member is in flight (proves concurrency)."""

    def __init__(self, barrier: threading.Barrier, text: str) -> None:
        self.barrier = barrier
        self.text = text

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        self.barrier.wait(timeout=5)
        return Completion(text=self.text, model="barrier")


def judge(*texts: str) -> PanelMember:
    turns = [{"text": t, "usage": usage(300, 80, 0.01)} for t in texts]
    return PanelMember("judge", ScriptedBackend(turns, name="judge"), "scripted:judge")


def synth(text: str = "Retry 3 times with jittered backoff, honour Retry-After.") -> PanelMember:
    turns = [{"text": text, "usage": usage(500, 60, 0.02)}]
    return PanelMember("synth", ScriptedBackend(turns, name="synth"), "scripted:synth")


def scripted(member: PanelMember) -> ScriptedBackend:
    """The member's backend, which every member built here has scripted."""
    assert isinstance(member.backend, ScriptedBackend)
    return member.backend


def records(error: FusionError) -> list[CallRecord]:
    """The calls a fusion error itemises, each checked to be a CallRecord."""
    calls = [c for c in error.calls if isinstance(c, CallRecord)]
    assert len(calls) == len(error.calls)
    return calls


def panel() -> list[PanelMember]:
    return [member("a", "retry 3x"), member("b", "retry 5x, Retry-After"), member("c", "jitter")]


def test_judge_analysis_is_parsed_and_the_synthesizer_is_grounded_in_it() -> None:
    j = judge("Analysis follows.\n```json\n" + json.dumps(ANALYSIS) + "\n```\nDone.")
    s = synth()
    engine = FusionEngine(panel(), j, s)
    out = engine.complete(TASK, purpose=Purpose.PLAN)
    assert out.text.startswith("Retry 3 times")
    report = itemise(out)
    assert report is not None
    assert report["analysis"] == {**ANALYSIS}
    assert set(report["answers"]) == {"a", "b", "c"}
    # The judge saw every member's answer, labelled.
    judge_request = json.dumps(scripted(j).calls[0].messages)
    for name, text in [("a", "retry 3x"), ("b", "Retry-After"), ("c", "jitter")]:
        assert f'member=\\"{name}\\"' in judge_request and text in judge_request
    # The synthesizer saw the original task, the drafts and the judge's analysis.
    synth_messages = scripted(s).calls[0].messages
    assert synth_messages[0] == TASK[0]
    assert "idempotency of the request" in synth_messages[-1]["content"]
    assert '"resolution": "3"' in synth_messages[-1]["content"]
    assert scripted(s).calls[0].purpose is Purpose.PLAN


def test_cost_is_the_sum_of_every_call_itemised_per_member() -> None:
    engine = FusionEngine(panel(), judge(json.dumps(ANALYSIS)), synth())
    out = engine.complete(TASK)
    report = itemise(out)
    assert report is not None
    calls = report["calls"]
    assert [(c["role"], c["name"]) for c in calls] == [
        ("panel", "a"),
        ("panel", "b"),
        ("panel", "c"),
        ("judge", "judge"),
        ("synthesizer", "synth"),
    ]
    assert out.usage.prompt_tokens == 3 * 100 + 300 + 500
    assert out.usage.completion_tokens == 3 * 20 + 80 + 60
    assert out.usage.cost_usd == pytest.approx(3 * 0.001 + 0.01 + 0.02)
    assert out.model == "fusion"


def test_an_unpriced_member_makes_the_total_cost_unknown_not_an_undercount() -> None:
    members = [member("a", "x"), member("b", "y", cost=None), member("c", "z")]
    out = FusionEngine(members, judge(json.dumps(ANALYSIS)), synth()).complete(TASK)
    assert out.usage.cost_usd is None
    assert out.usage.prompt_tokens == 3 * 100 + 300 + 500


def test_invalid_judge_output_gets_one_repair_round() -> None:
    j = judge("The answers mostly agree.", json.dumps(ANALYSIS))
    out = FusionEngine(panel(), j, synth()).complete(TASK)
    report = itemise(out)
    assert report is not None
    assert [c["role"] for c in report["calls"]][3:] == ["judge", "judge-repair", "synthesizer"]
    assert out.usage.cost_usd == pytest.approx(3 * 0.001 + 2 * 0.01 + 0.02)


def test_judge_naming_a_member_not_on_the_panel_is_repaired() -> None:
    wrong = {**ANALYSIS, "unique_insights": [{"member": "gpt", "insight": "x"}]}
    j = judge(json.dumps(wrong), json.dumps(ANALYSIS))
    FusionEngine(panel(), j, synth()).complete(TASK)
    repair = scripted(j).calls[1].messages[-1]["content"]
    assert "unknown member 'gpt'" in repair and "members are exactly: a, b, c" in repair


def test_judge_still_invalid_after_repair_raises_and_carries_the_spend() -> None:
    s = synth()
    with pytest.raises(JudgeOutputInvalid, match="invalid after one repair round") as info:
        FusionEngine(panel(), judge("no", "still no"), s).complete(TASK)
    assert [c.role for c in records(info.value)] == [
        "panel",
        "panel",
        "panel",
        "judge",
        "judge-repair",
    ]
    assert scripted(s).calls == []


def test_a_failing_member_is_recorded_and_fusion_continues_at_quorum() -> None:
    down = Failing(RateLimitError("openai/b: rate limited"))
    members = [member("a", "retry 3x"), PanelMember("b", down, "openai/b"), member("c", "jitter")]
    analysis = {**ANALYSIS, "contradictions": [], "unique_insights": [], "partial_coverage": []}
    j = judge(json.dumps(analysis))
    out = FusionEngine(members, j, synth(), quorum=2).complete(TASK)
    report = itemise(out)
    assert report is not None
    assert report["failed"] == {"b": "RateLimitError: openai/b: rate limited"}
    assert set(report["answers"]) == {"a", "c"}
    failed = [c for c in report["calls"] if c["name"] == "b"]
    assert failed == [{**failed[0], "ok": False, "model": "openai/b", "cost_usd": 0.0}]
    # The judge is told only about the members that answered.
    assert "Members: a, c" in scripted(j).calls[0].messages[-1]["content"]


def test_fusion_stops_when_failures_take_it_below_quorum() -> None:
    members = [
        member("a", "retry 3x"),
        PanelMember("b", Failing(ProviderError("boom")), "openai/b"),
        PanelMember("c", ScriptedBackend([{"text": "   "}], name="c"), "scripted:c"),
    ]
    j = judge(json.dumps(ANALYSIS))
    with pytest.raises(QuorumLost, match=r"1 of 3 panel members answered, quorum is 2") as info:
        FusionEngine(members, j, synth()).complete(TASK)
    message = str(info.value)
    assert "b: ProviderError: boom" in message and "c: EmptyAnswer" in message
    assert len(info.value.calls) == 3
    assert scripted(j).calls == []


def test_tool_schemas_are_refused_with_a_clear_error() -> None:
    engine = FusionEngine(panel(), judge(), synth())
    tool: ToolSchema = {"type": "function", "function": {"name": "read_file", "parameters": {}}}
    with pytest.raises(FusionToolsRefused, match=r"fusion does not call tools.*RoutedBackend"):
        engine.complete(TASK, tools=[tool])
    with pytest.raises(ToolTurnRefused):
        engine.complete(TASK, tools=[tool])
    assert scripted(engine.panel[0]).calls == []


def test_members_run_concurrently() -> None:
    barrier = threading.Barrier(3)
    members = [PanelMember(n, Barrier(barrier, f"answer {n}")) for n in "abc"]
    analysis = {**ANALYSIS, "contradictions": [], "unique_insights": [], "partial_coverage": []}
    out = FusionEngine(members, judge(json.dumps(analysis)), synth()).complete(TASK)
    assert out.text


@pytest.mark.parametrize(
    ("quorum", "message"), [(4, "quorum 4 is outside 1..3"), (0, "quorum 0 is outside")]
)
def test_invalid_quorum_is_rejected(quorum: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FusionEngine(panel(), judge(), synth(), quorum=quorum)


def test_duplicate_member_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="distinct"):
        FusionEngine([member("a", "x"), member("a", "y")], judge(), synth())


def test_a_failing_synthesizer_is_a_fusion_error_that_still_carries_the_spend() -> None:
    down = PanelMember("synth", Failing(RateLimitError("synth: slow down")), "openai/s")
    with pytest.raises(FusionError, match="the synthesizer failed: RateLimitError") as info:
        FusionEngine(panel(), judge(json.dumps(ANALYSIS)), down).complete(TASK)
    assert isinstance(info.value.__cause__, RateLimitError)
    assert [c.role for c in records(info.value)] == [
        "panel",
        "panel",
        "panel",
        "judge",
        "synthesizer",
    ]
    costs = [c.usage.cost_usd for c in records(info.value) if c.usage.cost_usd is not None]
    assert len(costs) == 5 and sum(costs) == pytest.approx(0.013)  # every call priced


def test_a_failing_judge_is_a_fusion_error() -> None:
    down = PanelMember("judge", Failing(ProviderError("judge down")), "openai/j")
    with pytest.raises(FusionError, match="the judge failed: ProviderError: judge down"):
        FusionEngine(panel(), down, synth()).complete(TASK)
