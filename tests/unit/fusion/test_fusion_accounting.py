"""recorded_call: the one accounting of a composite backend's model calls (fusion, cascade)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from chimera.errors import BudgetExceeded, CascadeExhausted, RateLimitError
from chimera.fusion import FusionEngine, PanelMember
from chimera.fusion.accounting import FAILED_USAGE, CallRecord, recorded_call, require_distinct
from chimera.fusion.engine import itemise
from chimera.protocols import Completion, Message, Purpose, ToolSchema, Usage
from chimera.providers import ScriptedBackend

TASK: list[Message] = [{"role": "user", "content": "How should the client retry?"}]
ANALYSIS = {
    "consensus": ["retry"],
    "contradictions": [],
    "partial_coverage": [],
    "unique_insights": [],
    "blind_spots": [],
}
SPENT = CallRecord("tier", "weak", "cheap-model", Usage(40, 10, 0.002), ok=False, error="x")


def scripted(name: str, text: str, p: int, c: int, cost: float) -> ScriptedBackend:
    turn = {"text": text, "usage": {"prompt_tokens": p, "completion_tokens": c, "cost_usd": cost}}
    return ScriptedBackend([turn], name=name)


class Raising:
    """A backend that raises ``exc`` (a composite that already paid for calls, or a refusal)."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        raise self.exc


def test_a_call_is_timed_and_named_by_the_model_that_answered() -> None:
    ticks = iter([10.0, 10.75])
    backend = scripted("m", "hi", 7, 3, 0.5)
    rec, answer, failure = recorded_call(
        lambda: backend.complete(TASK),
        role="panel",
        name="a",
        model="asked",
        clock=lambda: next(ticks),
    )
    assert failure is None and answer is not None and answer.text == "hi"
    assert rec.ok and rec.role == "panel" and rec.name == "a"
    assert rec.model == (answer.model or "asked")
    assert (rec.usage.prompt_tokens, rec.usage.completion_tokens) == (7, 3)
    assert rec.elapsed_s == pytest.approx(0.75)


def test_a_failure_is_returned_with_what_it_spent_and_a_refusal_with_nothing() -> None:
    spent = CascadeExhausted("no tier passed", calls=(SPENT, SPENT))
    rec, answer, failure = recorded_call(
        lambda: Raising(spent).complete(TASK),
        role="panel",
        name="c",
        model="cascade",
    )
    assert answer is None and failure is spent
    assert not rec.ok and rec.error.startswith("CascadeExhausted: no tier passed")
    assert rec.usage.prompt_tokens == 80 and rec.usage.cost_usd == pytest.approx(0.004)
    refused = BudgetExceeded("over budget")
    rec, _, failure = recorded_call(
        lambda: Raising(refused).complete(TASK), role="tier", name="t", model="m"
    )
    assert failure is refused and rec.usage == FAILED_USAGE
    rec, _, failure = recorded_call(
        lambda: Raising(RateLimitError("slow down")).complete(TASK), role="t", name="t", model="m"
    )
    assert isinstance(failure, RateLimitError) and rec.usage == FAILED_USAGE


def test_a_fusion_member_that_failed_after_paying_counts_in_the_total() -> None:
    members = [
        PanelMember("a", scripted("a", "retry 3x", 100, 20, 0.001), "scripted:a"),
        PanelMember("b", scripted("b", "retry 5x", 100, 20, 0.001), "scripted:b"),
        PanelMember("c", Raising(CascadeExhausted("gates", calls=(SPENT,))), "cascade"),
    ]
    judge = PanelMember("judge", scripted("judge", json.dumps(ANALYSIS), 300, 80, 0.01), "j")
    synth = PanelMember("synth", scripted("synth", "Retry 3 times.", 500, 60, 0.02), "s")
    out = FusionEngine(members, judge, synth).complete(TASK)
    report = itemise(out)
    assert report is not None and "c" in report["failed"]
    assert out.usage.prompt_tokens == 2 * 100 + 40 + 300 + 500
    assert out.usage.cost_usd == pytest.approx(2 * 0.001 + 0.002 + 0.01 + 0.02)


def test_names_must_be_distinct() -> None:
    require_distinct(["a", "b"], "fusion panel member")
    with pytest.raises(ValueError, match=r"cascade tier names must be distinct: \['a', 'a'\]"):
        require_distinct(["a", "a"], "cascade tier")
