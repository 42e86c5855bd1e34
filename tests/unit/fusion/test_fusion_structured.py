"""Robust JSON extraction, the analysis schema, and the one repair round."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from chimera.errors import StructuredOutputError
from chimera.fusion.accounting import CallRecord
from chimera.fusion.analysis import FusionAnalysis
from chimera.fusion.structured import ask_structured, extract_json, parse_structured
from chimera.providers import ScriptedBackend

ANALYSIS = {
    "consensus": ["use a lock"],
    "contradictions": [{"point": "lock type", "positions": {"a": "RLock", "b": "Lock"}}],
    "partial_coverage": [{"point": "timeouts", "covered_by": ["a"], "missing_from": ["b"]}],
    "unique_insights": [{"member": "b", "insight": "fsync the directory"}],
    "blind_spots": ["Windows"],
}


def test_extract_json_from_a_fence_with_prose_around_it() -> None:
    text = "Here you go:\n```json\n" + json.dumps(ANALYSIS) + "\n```\nHope that helps!"
    assert extract_json(text) == ANALYSIS


def test_extract_json_bare_object_with_trailing_text_and_braces_in_strings() -> None:
    text = 'Sure. {"a": "x } y", "b": [1, {"c": 2}]} and then {"ignored": true}'
    assert extract_json(text) == {"a": "x } y", "b": [1, {"c": 2}]}


def test_extract_json_skips_a_broken_candidate_and_finds_the_next() -> None:
    text = 'a {broken json here} then {"ok": 1}'
    assert extract_json(text) == {"ok": 1}


def test_extract_json_broken_fence_falls_back_to_scanning_inside() -> None:
    text = '```json\nthe object: {"k": [1, 2]} trailing\n```'
    assert extract_json(text) == {"k": [1, 2]}


def test_extract_json_without_json_names_what_it_saw() -> None:
    with pytest.raises(ValueError, match=r"no JSON object found.*'I cannot do that'"):
        extract_json("I cannot do that")


def test_analysis_accepts_spelling_variants_and_rejects_missing_sections() -> None:
    loose = {
        "Consensus": ["x"],
        "Contradictions": [],
        "Partial coverage": [],
        "unique-insights": [],
        "BLIND_SPOTS": [],
        "summary": "extra keys are ignored",
    }
    parsed = parse_structured(json.dumps(loose), FusionAnalysis)
    assert parsed.consensus == ["x"]
    with pytest.raises(ValueError, match="blind_spots: Field required"):
        parse_structured(
            json.dumps({k: v for k, v in ANALYSIS.items() if k != "blind_spots"}), FusionAnalysis
        )


def test_member_problems_names_unknown_members() -> None:
    analysis = FusionAnalysis.model_validate(ANALYSIS)
    assert analysis.member_problems(["a", "b"]) == []
    problems = analysis.member_problems(["a", "c"])
    assert any("unknown member 'b'" in p for p in problems)
    assert problems[-1] == "members are exactly: a, c"


class _Plan(BaseModel):
    steps: list[str]


def test_one_repair_round_fixes_invalid_output_and_both_calls_are_itemised() -> None:
    backend = ScriptedBackend(
        [
            {
                "text": "steps: do it",
                "usage": {"prompt_tokens": 10, "completion_tokens": 3, "cost_usd": 0.01},
            },
            {
                "text": '{"steps": ["a", "b"]}',
                "expect": ["could not be used", "no JSON"],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "cost_usd": 0.02},
            },
        ]
    )
    ledger: list[CallRecord] = []
    value, records = ask_structured(
        backend,
        [{"role": "user", "content": "plan"}],
        _Plan,
        schema_hint='{"steps": []}',
        role="plan",
        name="top",
        ledger=ledger,
    )
    assert value.steps == ["a", "b"]
    assert [r.role for r in records] == ["plan", "plan-repair"]
    assert ledger == records
    # The repair round shows the model its own invalid output.
    repair_request = backend.calls[1].messages
    assert repair_request[-2] == {"role": "assistant", "content": "steps: do it"}


def test_still_invalid_after_the_repair_round_raises_with_the_spend() -> None:
    backend = ScriptedBackend([{"text": "nope"}, {"text": '{"steps": "not a list"}'}])
    with pytest.raises(StructuredOutputError, match="after one repair round: steps") as info:
        ask_structured(
            backend,
            [{"role": "user", "content": "plan"}],
            _Plan,
            schema_hint="{}",
            role="plan",
            name="top",
        )
    assert len(info.value.calls) == 2
    assert backend.remaining == 0
