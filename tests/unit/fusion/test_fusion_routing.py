"""RoutingPolicy decisions and RoutedBackend delegation + audit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.call_context import CallContext, call_context
from chimera.errors import ConfigError
from chimera.fusion import RoutedBackend, RoutingPolicy
from chimera.governance.audit import AuditLog
from chimera.protocols import Purpose, ToolSchema
from chimera.providers import ScriptedBackend
from chimera.spec.model import Risk

TOOL: ToolSchema = {"type": "function", "function": {"name": "run_command", "parameters": {}}}
POLICY = RoutingPolicy(tool_route="worker", default_route="worker", deep_route="fusion")


@pytest.mark.parametrize(
    ("tools", "purpose", "ctx", "route", "reason"),
    [
        (1, Purpose.PLAN, CallContext(), "worker", "tool turns go to one model"),
        (2, Purpose.REPLAN, CallContext(risk=Risk.HIGH), "worker", "2 tool schema(s)"),
        (0, Purpose.PLAN, CallContext(), "fusion", "purpose plan is a deep reasoning turn"),
        (0, Purpose.REVIEW, CallContext(), "fusion", "review is a deep"),
        (0, Purpose.REPLAN, CallContext(), "fusion", "replan is a deep"),
        (0, Purpose.ACT, CallContext(), "worker", "default route"),
        (0, Purpose.SUMMARIZE, CallContext(risk=Risk.MEDIUM), "worker", "default route"),
        (0, Purpose.ACT, CallContext(risk=Risk.HIGH), "fusion", "risk high is at or above high"),
        (0, Purpose.ACT, CallContext(repeated_signature="r1:failed"), "fusion", "repeated"),
    ],
)
def test_policy_decisions(
    tools: int, purpose: Purpose, ctx: CallContext, route: str, reason: str
) -> None:
    decision = POLICY.decide(tools=tools, purpose=purpose, ctx=ctx)
    assert decision.route == route
    assert reason in decision.reason


def test_explicit_purpose_route_and_no_deep_route() -> None:
    policy = RoutingPolicy(
        tool_route="w", default_route="w", purpose_routes={Purpose.SUMMARIZE: "cheap"}
    )
    assert policy.decide(tools=0, purpose=Purpose.SUMMARIZE, ctx=CallContext()).route == "cheap"
    # Without a deep route, plans fall through to the default.
    assert policy.decide(tools=0, purpose=Purpose.PLAN, ctx=CallContext()).route == "w"
    assert policy.route_names() == {"w", "cheap"}


def test_routed_backend_sends_tool_turns_to_one_model_and_audits_every_decision(
    tmp_path: Path,
) -> None:
    worker = ScriptedBackend(
        [
            {"text": "", "tool_calls": [{"name": "run_command", "arguments": {"command": "ls"}}]},
            {"text": "done"},
        ],
        name="worker",
    )
    deep = ScriptedBackend([{"text": "1. plan", "purpose": "plan"}], name="deep")
    audit = AuditLog(tmp_path / "audit.jsonl", "run-1")
    routed = RoutedBackend({"worker": worker, "fusion": deep}, POLICY, audit=audit)
    plan = routed.complete([{"role": "user", "content": "plan"}], purpose=Purpose.PLAN)
    act = routed.complete([{"role": "user", "content": "go"}], tools=[TOOL])
    with call_context(risk=Risk.LOW, attempt=2):
        final = routed.complete([{"role": "user", "content": "go"}])
    assert plan.text == "1. plan" and plan.raw is not None
    assert plan.raw["route"]["route"] == "fusion"
    assert act.tool_calls[0].name == "run_command"
    assert final.text == "done"
    assert len(worker.calls) == 2 and worker.calls[0].tools == [TOOL]
    assert [d.route for d in routed.decisions] == ["fusion", "worker", "worker"]
    events = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    decisions = [e["fields"] for e in events if e["event"] == "route.decision"]
    assert [(e["route"], e["purpose"], e["tools"]) for e in decisions] == [
        ("fusion", "plan", 0),
        ("worker", "act", 1),
        ("worker", "act", 0),
    ]
    assert all(e["reason"] for e in decisions)
    assert decisions[2]["attempt"] == 2


def test_a_route_without_a_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="route\\(s\\) fusion have no backend"):
        RoutedBackend({"worker": ScriptedBackend([])}, POLICY)


def test_call_context_is_scoped_and_validated() -> None:
    from chimera.call_context import current_context

    assert current_context() == CallContext()
    with call_context(risk=Risk.HIGH) as outer:
        with call_context(attempt=3) as inner:
            assert inner == CallContext(risk=Risk.HIGH, attempt=3)
        assert current_context() is outer
    assert current_context() == CallContext()
    with pytest.raises(ValueError, match="attempt must be >= 1"), call_context(attempt=0):
        pass
