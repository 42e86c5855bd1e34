"""Fusion and routing through LiteLLM over real HTTP, against the local stub server.

Several distinct stub models give fixed, different answers; their prices are registered with
LiteLLM for the test, so every cost below is exact.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from chimera.config import ModelPrice
from chimera.errors import QuorumLost
from chimera.fusion import CallRecord, FusionEngine, PanelMember, RoutedBackend, RoutingPolicy
from chimera.fusion.engine import itemise
from chimera.protocols import Purpose, ToolSchema
from chimera.providers import LiteLLMBackend, cost_usd, register_prices
from chimera.testing import OpenAIStubServer, StubReply
from chimera.testing.openai_stub import StubFault, StubToolCall

PREFIX = "chimera-fusion-it"
PRICES = {  # USD per million tokens: (input, output)
    "alpha": (1.0, 2.0),
    "beta": (3.0, 6.0),
    "gamma": (0.5, 1.0),
    "judge": (5.0, 15.0),
    "judge2": (5.0, 15.0),
    "synth": (2.0, 8.0),
    "worker": (0.2, 0.4),
}
TASK = [{"role": "user", "content": "How should the HTTP client retry failed requests?"}]
ANSWERS = {
    "alpha": "Retry 3 times with exponential backoff.",
    "beta": "Retry 5 times; honour the Retry-After header.",
    "gamma": "Add random jitter to every backoff delay.",
}
ANALYSIS = {
    "consensus": ["retry with growing delays"],
    "contradictions": [
        {
            "point": "how many retries",
            "positions": {"alpha": "3", "beta": "5"},
            "resolution": "3 keeps tail latency bounded",
        }
    ],
    "partial_coverage": [
        {"point": "jitter", "covered_by": ["gamma"], "missing_from": ["alpha", "beta"]}
    ],
    "unique_insights": [{"member": "beta", "insight": "honour Retry-After"}],
    "blind_spots": ["only idempotent requests may be retried"],
}
FINAL = "Retry idempotent requests up to 3 times with jittered backoff, honouring Retry-After."
TOKENS = {
    "alpha": (40, 12),
    "beta": (40, 14),
    "gamma": (40, 11),
    "judge": (210, 95),
    "judge2": (180, 60),
    "synth": (420, 30),
    "worker": (60, 8),
}


def model(name: str) -> str:
    return f"openai/{PREFIX}-{name}"


@pytest.fixture(scope="module", autouse=True)
def _prices() -> None:
    register_prices(
        {model(n): ModelPrice(input_per_mtok=i, output_per_mtok=o) for n, (i, o) in PRICES.items()}
    )


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        for name, text in ANSWERS.items():
            server.add_reply(f"{PREFIX}-{name}", reply(name, text))
        server.add_reply(
            f"{PREFIX}-judge",
            reply(
                "judge",
                "Here is my analysis:\n```json\n" + json.dumps(ANALYSIS) + "\n```\nThat is all.",
            ),
        )
        server.add_reply(f"{PREFIX}-synth", reply("synth", FINAL))
        yield server


def reply(name: str, text: str) -> StubReply:
    p, c = TOKENS[name]
    return StubReply(text=text, prompt_tokens=p, completion_tokens=c)


def backend(stub: OpenAIStubServer, name: str) -> LiteLLMBackend:
    return LiteLLMBackend(model(name), api_base=stub.api_base, api_key="stub", num_retries=0)


def engine(stub: OpenAIStubServer, judge: str = "judge", quorum: int | None = None) -> FusionEngine:
    def m(name: str) -> PanelMember:
        return PanelMember(name, backend(stub, name), model(name))

    return FusionEngine([m("alpha"), m("beta"), m("gamma")], m(judge), m("synth"), quorum=quorum)


def price(name: str) -> float:
    value = cost_usd(model(name), *TOKENS[name])
    assert value is not None
    return value


def test_judge_analysis_is_parsed_and_the_synthesizer_sees_it(stub: OpenAIStubServer) -> None:
    out = engine(stub).complete(TASK, purpose=Purpose.PLAN)
    assert out.text == FINAL
    report = itemise(out)
    assert report is not None and report["analysis"] == ANALYSIS
    (judge_request,) = stub.completion_requests(f"{PREFIX}-judge")
    judge_prompt = json.dumps(judge_request.body["messages"])
    assert all(text in judge_prompt for text in ANSWERS.values())
    (synth_request,) = stub.completion_requests(f"{PREFIX}-synth")
    last = synth_request.body["messages"][-1]["content"]
    assert "only idempotent requests may be retried" in last
    assert "3 keeps tail latency bounded" in last
    assert synth_request.body["messages"][0]["content"] == TASK[0]["content"]
    # Cost: the sum of every call at each model's registered price, itemised per member.
    expected = sum(price(n) for n in ("alpha", "beta", "gamma", "judge", "synth"))
    assert out.usage.cost_usd == pytest.approx(expected, rel=1e-9)
    by_member = {c["name"]: c["cost_usd"] for c in report["calls"]}
    assert by_member == pytest.approx({n: price(n) for n in by_member})


def test_a_failing_member_is_tolerated_to_quorum_and_not_past_it(stub: OpenAIStubServer) -> None:
    two = {
        **ANALYSIS,
        "contradictions": [],
        "unique_insights": [],
        "partial_coverage": [
            {"point": "jitter", "covered_by": ["gamma"], "missing_from": ["alpha"]}
        ],
    }
    stub.add_reply(f"{PREFIX}-judge2", reply("judge2", json.dumps(two)))
    stub.add_fault(StubFault(status=401, message="key revoked", model=f"{PREFIX}-beta"))
    out = engine(stub, judge="judge2", quorum=2).complete(TASK)
    report = itemise(out)
    assert report is not None and set(report["answers"]) == {"alpha", "gamma"}
    assert report["failed"]["beta"].startswith("AuthenticationError")
    judge_prompt = json.dumps(stub.completion_requests(f"{PREFIX}-judge2")[0].body)
    assert ANSWERS["beta"] not in judge_prompt and ANSWERS["gamma"] in judge_prompt
    expected = sum(price(n) for n in ("alpha", "gamma", "judge2", "synth"))
    assert out.usage.cost_usd == pytest.approx(expected, rel=1e-9)
    # Quorum 2, two members down: fusion stops before the judge and says so.
    stub.add_fault(
        StubFault(status=401, model=f"{PREFIX}-beta"),
        StubFault(status=400, message="bad", model=f"{PREFIX}-gamma"),
    )
    with pytest.raises(QuorumLost, match="1 of 3 panel members answered, quorum is 2") as info:
        engine(stub, judge="judge2", quorum=2).complete(TASK)
    assert len(stub.completion_requests(f"{PREFIX}-judge2")) == 1
    records = [c for c in info.value.calls if isinstance(c, CallRecord)]
    assert len(records) == len(info.value.calls)  # a FusionError itemises CallRecords
    spent = [c for c in records if c.ok]
    assert [c.name for c in spent] == ["alpha"]
    assert spent[0].usage.cost_usd == pytest.approx(price("alpha"))


def test_router_sends_tool_turns_to_one_model_and_reasoning_turns_to_fusion(
    stub: OpenAIStubServer,
) -> None:
    stub.add_reply(
        f"{PREFIX}-worker",
        StubReply(
            text="",
            tool_calls=(StubToolCall("read_file", {"path": "client.py"}),),
            prompt_tokens=60,
            completion_tokens=8,
        ),
    )
    tool: ToolSchema = {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "read",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
    policy = RoutingPolicy(tool_route="worker", default_route="worker", deep_route="fusion")
    routed = RoutedBackend({"worker": backend(stub, "worker"), "fusion": engine(stub)}, policy)

    act = routed.complete(TASK, tools=[tool], purpose=Purpose.ACT)
    assert act.tool_calls[0].name == "read_file"
    # A tool turn, even a plan-purpose one, goes to the single model with its tools.
    routed.complete(TASK, tools=[tool], purpose=Purpose.PLAN)
    worker_requests = stub.completion_requests(f"{PREFIX}-worker")
    assert len(worker_requests) == 2 and all(r.body["tools"] for r in worker_requests)
    assert stub.completion_requests(f"{PREFIX}-alpha") == []

    plan = routed.complete(TASK, purpose=Purpose.PLAN)
    assert plan.text == FINAL and plan.raw is not None
    assert plan.raw["route"] == {
        "route": "fusion",
        "reason": "purpose plan is a deep reasoning turn",
    }
    for name in ("alpha", "beta", "gamma"):
        (request,) = stub.completion_requests(f"{PREFIX}-{name}")
        assert "tools" not in request.body
    assert len(stub.completion_requests(f"{PREFIX}-worker")) == 2
