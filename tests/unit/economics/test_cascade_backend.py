"""CascadeBackend: stop at the first passing tier, pay every hop, gates."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel

from chimera.economics import (
    CascadeBackend,
    CascadeTier,
    CommandGate,
    CriteriaGate,
    SchemaGate,
)
from chimera.economics.cascade import Gate, route_log
from chimera.errors import BudgetExceeded, CascadeExhausted, ProviderError, ToolTurnRefused
from chimera.fusion.accounting import CallRecord
from chimera.governance.audit import AuditLog
from chimera.protocols import Completion, Message, Purpose, ToolSchema
from chimera.providers import BudgetedBackend, ScriptedBackend, TokenBudget

TASK: list[Message] = [{"role": "user", "content": "Plan the fix as JSON {steps: [...]}"}]


class Plan(BaseModel):
    steps: list[str]


def scripted(tier: CascadeTier) -> ScriptedBackend:
    """The tier's backend, which every tier built by tier() has scripted."""
    assert isinstance(tier.backend, ScriptedBackend)
    return tier.backend


def tier(
    name: str, text: str, cost: float | None, gates: Sequence[Gate] | None = None
) -> CascadeTier:
    backend = ScriptedBackend(
        [{"text": text, "usage": {"prompt_tokens": 50, "completion_tokens": 10, "cost_usd": cost}}],
        name=name,
    )
    return CascadeTier(
        name, backend, gates if gates is not None else [SchemaGate(Plan)], model=f"scripted:{name}"
    )


def test_stops_at_the_first_tier_whose_answer_passes_and_pays_every_hop(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl", "run")
    weak = tier("weak", "I would fix it.", 0.001)
    medium = tier("medium", '```json\n{"steps": ["edit", "test"]}\n```', 0.01)
    top = tier("top", '{"steps": ["never asked"]}', 0.1)
    out = CascadeBackend([weak, medium, top], audit=audit).complete(TASK, purpose=Purpose.PLAN)
    assert "edit" in out.text
    assert out.usage.cost_usd == pytest.approx(0.001 + 0.01)
    assert out.usage.prompt_tokens == 100 and out.usage.completion_tokens == 20
    hops = route_log(out)
    assert [(h["tier"], h["accepted"]) for h in hops] == [("weak", False), ("medium", True)]
    assert "not a valid Plan" in hops[0]["verdicts"][0]["reason"]
    assert scripted(top).calls == []
    assert out.raw is not None and out.raw["cascade"]["answered_by"] == "medium"
    events = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["cascade.hop", "cascade.hop", "cascade.done"]
    assert events[-1]["fields"]["cost_usd"] == pytest.approx(0.011)


def test_first_tier_passing_costs_one_hop() -> None:
    weak = tier("weak", '{"steps": ["a"]}', 0.001)
    out = CascadeBackend([weak, tier("top", "x", 1.0)]).complete(TASK)
    assert out.usage.cost_usd == pytest.approx(0.001)
    assert len(route_log(out)) == 1


def test_all_gates_fail_raises_with_every_hop_accounted() -> None:
    tiers = [tier("weak", "no", 0.001), tier("top", "still no", 0.1)]
    with pytest.raises(CascadeExhausted, match=r"weak: not a valid Plan.*top: not a valid") as info:
        CascadeBackend(tiers).complete(TASK)
    calls = [c for c in info.value.calls if isinstance(c, CallRecord)]
    assert len(calls) == len(info.value.calls)  # the hops, itemised as CallRecords
    assert [c.name for c in calls] == ["weak", "top"]
    costs = [c.usage.cost_usd for c in calls if c.usage.cost_usd is not None]
    assert len(costs) == 2 and sum(costs) == pytest.approx(0.101)


def test_on_exhausted_last_returns_the_top_answer_flagged() -> None:
    tiers = [tier("weak", "no", 0.001), tier("top", "still no", 0.1)]
    out = CascadeBackend(tiers, on_exhausted="last").complete(TASK)
    assert out.text == "still no"
    assert out.raw is not None and out.raw["cascade"]["accepted"] is False
    assert out.usage.cost_usd == pytest.approx(0.101)


def test_a_tier_provider_error_is_a_hop_and_the_cascade_escalates() -> None:
    down = CascadeTier("weak", ScriptedBackend([], name="down"), [SchemaGate(Plan)])
    out = CascadeBackend([down, tier("top", '{"steps": ["a"]}', 0.1)]).complete(TASK)
    hops = route_log(out)
    assert hops[0]["error"].startswith("ProviderError") and not hops[0]["accepted"]
    assert out.usage.cost_usd == pytest.approx(0.1)


def test_a_budget_refusal_stops_the_cascade() -> None:
    budget = TokenBudget(max_tokens=10)
    weak = ScriptedBackend([{"text": "x"}], name="weak")
    guarded = CascadeTier("weak", BudgetedBackend(weak, budget, model="gpt-4o-mini"), [])
    top = tier("top", '{"steps": ["a"]}', 0.1)
    with pytest.raises(BudgetExceeded):
        CascadeBackend([guarded, top]).complete(TASK)
    assert weak.calls == [] and scripted(top).calls == []


def test_cascade_refuses_tool_turns() -> None:
    with pytest.raises(ToolTurnRefused, match="gates answers, not tool calls"):
        CascadeBackend([tier("w", "x", 0.0)]).complete(
            TASK, tools=[{"type": "function", "function": {"name": "f"}}]
        )


def answer(text: str) -> Completion:
    return Completion(text=text)


def test_criteria_gate() -> None:
    gate = CriteriaGate(must_match=[r"^\d+\. "], must_not_match=["TODO"], min_chars=5)
    assert gate.check(answer("1. edit\n2. test"), TASK).ok
    assert "missing required pattern" in gate.check(answer("edit then test"), TASK).reason
    assert "forbidden pattern 'TODO'" in gate.check(answer("1. TODO later"), TASK).reason
    assert "chars < 5" in gate.check(answer("1. a"), TASK).reason
    with pytest.raises(ValueError, match="invalid criteria pattern '\\('"):
        CriteriaGate(must_match=["("])


def test_command_gate_runs_a_verifier_on_the_artifact(tmp_path: Path) -> None:
    check = f'{sys.executable} -c "import json,sys; json.load(open(sys.argv[1]))" {{artifact}}'
    gate = CommandGate(check, artifact="plan.json", extract="code")
    good = gate.check(answer('Here:\n```json\n{"steps": []}\n```'), TASK)
    bad = gate.check(answer("```json\n{steps: }\n```"), TASK)
    none = gate.check(answer("no code"), TASK)
    assert good.ok, good.reason
    assert not bad.ok and "exit 1" in bad.reason
    assert not none.ok and "no fenced code block" in none.reason
    kept = CommandGate("test -s {artifact}", workdir=tmp_path).check(answer("x"), TASK)
    assert kept.ok and (tmp_path / "answer.txt").read_text() == "x"


def test_invalid_cascades_are_rejected() -> None:
    with pytest.raises(ValueError, match="at least one tier"):
        CascadeBackend([])
    with pytest.raises(ValueError, match="distinct"):
        CascadeBackend([tier("a", "", 0), tier("a", "", 0)])


def test_provider_error_with_fusion_calls_charges_the_hop() -> None:
    from chimera.errors import QuorumLost
    from chimera.protocols import Usage

    class LosesQuorum:
        def complete(
            self,
            messages: Sequence[Message],
            *,
            tools: Sequence[ToolSchema] | None = None,
            purpose: Purpose = Purpose.ACT,
            max_tokens: int | None = None,
        ) -> Completion:
            raise QuorumLost("lost", calls=(CallRecord("panel", "a", "m", Usage(5, 5, 0.02)),))

    tiers = [CascadeTier("fusion", LosesQuorum()), tier("top", '{"steps": []}', 0.1)]
    out = CascadeBackend(tiers).complete(TASK)
    assert out.usage.cost_usd == pytest.approx(0.12)
    assert isinstance(QuorumLost("x"), ProviderError)
