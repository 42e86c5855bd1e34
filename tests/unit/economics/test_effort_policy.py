"""EffortPolicy choices and EffortBackend application, every choice logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.call_context import CallContext
from chimera.economics import EffortBackend, EffortPolicy, Rung, call_context
from chimera.economics.effort import with_reasoning_effort
from chimera.governance.audit import AuditLog
from chimera.protocols import Purpose
from chimera.providers import BudgetedBackend, LiteLLMBackend, ScriptedBackend, TokenBudget
from chimera.spec.model import Risk


def policy(**kw: object) -> EffortPolicy:
    return EffortPolicy(supports_reasoning=lambda m: m.startswith("reasoner"), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("purpose", "ctx", "level", "rung", "reason"),
    [
        (Purpose.ACT, CallContext(), "standard", 0, "purpose act → standard"),
        (Purpose.SUMMARIZE, CallContext(), "low", 0, "summarize → low"),
        (Purpose.REPLAN, CallContext(), "high", 0, "replan → high"),
        (Purpose.PLAN, CallContext(risk=Risk.HIGH), "high", 0, "risk high raises it to high"),
        (Purpose.SUMMARIZE, CallContext(risk=Risk.MEDIUM), "low", 0, "summarize → low"),
        (Purpose.ACT, CallContext(attempt=3), "standard", 1, "attempt 3 → rung 1"),
        (Purpose.ACT, CallContext(attempt=9), "standard", 2, "capped at the top rung 2"),
        (Purpose.ACT, CallContext(repeated_signature="s"), "high", 1, "one rung up"),
    ],
)
def test_choices(purpose: Purpose, ctx: CallContext, level: str, rung: int, reason: str) -> None:
    choice = policy(rungs=3).choose(purpose, ctx, model="plain")
    assert (choice.level, choice.rung) == (level, rung)
    assert reason in choice.reason
    assert choice.reasoning_effort is None  # "plain" has no reasoning knob
    assert choice.max_tokens == {"low": 1024, "standard": 4096, "high": 16384}[level]


def test_reasoning_effort_only_where_the_model_supports_it() -> None:
    p = policy()
    assert p.choose(Purpose.REPLAN, CallContext(), model="reasoner-1").reasoning_effort == "high"
    choice = p.choose(Purpose.REPLAN, CallContext(), model="plain")
    assert choice.reasoning_effort is None and "does not support one" in choice.reason


def test_undefined_levels_are_rejected() -> None:
    with pytest.raises(ValueError, match="not defined: huge"):
        policy(repeat_level="huge")


def test_effort_backend_caps_tokens_picks_the_rung_and_logs(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "a.jsonl", "run")
    weak = ScriptedBackend([{"text": "w1"}, {"text": "w2"}], name="weak")
    strong = ScriptedBackend([{"text": "s1"}], name="strong")
    p = policy(rungs=2, audit=audit)
    backend = EffortBackend([Rung(weak, "plain"), Rung(strong, "reasoner-x")], p)
    first = backend.complete([{"role": "user", "content": "x"}], purpose=Purpose.SUMMARIZE)
    capped = backend.complete([{"role": "user", "content": "x"}], max_tokens=100)
    with call_context(attempt=1, repeated_signature="r1:failed"):
        escalated = backend.complete([{"role": "user", "content": "x"}], purpose=Purpose.REPLAN)
    assert (first.text, capped.text, escalated.text) == ("w1", "w2", "s1")
    assert weak.calls[0].max_tokens == 1024 and weak.calls[1].max_tokens == 100
    assert strong.calls[0].max_tokens == 16384
    assert escalated.raw is not None and escalated.raw["effort"]["rung"] == 1
    # A scripted backend has no reasoning knob: the choice says high, the backend is unchanged.
    assert escalated.raw["effort"]["reasoning_effort"] == "high"
    events = [json.loads(x)["fields"] for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert [(e["purpose"], e["level"], e["rung"]) for e in events] == [
        ("summarize", "low", 0),
        ("act", "standard", 0),
        ("replan", "high", 1),
    ]
    assert len(p.choices) == 3


def test_with_reasoning_effort_reaches_litellm_through_a_budget() -> None:
    inner = LiteLLMBackend("openai/o3-mini", extra={"temperature": 0})
    budgeted = BudgetedBackend(inner, TokenBudget(max_tokens=100), model="openai/o3-mini")
    tuned = with_reasoning_effort(budgeted, "low")
    assert isinstance(tuned, BudgetedBackend) and tuned.budget is budgeted.budget
    assert isinstance(tuned.inner, LiteLLMBackend)
    kwargs = tuned.inner.request_kwargs([{"role": "user", "content": "x"}])
    assert kwargs["reasoning_effort"] == "low" and kwargs["temperature"] == 0
    assert "reasoning_effort" not in inner.extra
    other = ScriptedBackend([])
    assert with_reasoning_effort(other, "high") is other


def test_ladder_and_policy_must_agree() -> None:
    with pytest.raises(ValueError, match=r"policy\.rungs is 1 but the ladder has 2"):
        EffortBackend([Rung(ScriptedBackend([])), Rung(ScriptedBackend([]))], policy())
