"""HierarchicalOrchestrator with scripted models: delegate, verify, re-ask, inline, receipts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from chimera.economics import (
    EnvelopeVerifier,
    HierarchicalOrchestrator,
    ReceiptLog,
    RepoReader,
)
from chimera.economics.hierarchy_setup import plan_with_hierarchy
from chimera.economics.receipts import read_receipts, summarize_delegations
from chimera.errors import StructuredOutputError
from chimera.protocols import Message
from chimera.providers import ScriptedBackend

PRICES = {"top": (10e-6, 30e-6), "cheap": (1e-6, 2e-6)}


def price(model: str, p: int, c: int) -> float | None:
    if model not in PRICES:
        return None
    return p * PRICES[model][0] + c * PRICES[model][1]


def priced(cost: float | None) -> float:
    """A cost of a model in ``PRICES`` (``None`` is an unpriced model: a test bug)."""
    assert cost is not None
    return cost


def count(model: str, messages: Sequence[Message]) -> int:
    return sum(len(str(m.get("content", ""))) for m in messages) // 4


def u(p: int, c: int, model: str) -> dict[str, object]:
    return {"prompt_tokens": p, "completion_tokens": c, "cost_usd": price(model, p, c)}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "cache.py").write_text(
        "# " + "padding " * 200 + "\nTTL = 300\n\ndef get(key):\n    return _store.get(key)\n"
    )
    (root / "README.md").write_text("Cache docs.\n")
    return root


def envelope(answer: str, file: str, line: int, quote: str) -> str:
    return json.dumps(
        {"answer": answer, "evidence": [{"file": file, "line": line, "quote": quote}]}
    )


def build(
    repo: Path,
    top: ScriptedBackend,
    workers: dict[str, ScriptedBackend],
    receipts: ReceiptLog | None = None,
) -> HierarchicalOrchestrator:
    return HierarchicalOrchestrator(
        top=top,
        top_model="top",
        worker=lambda name: workers[name],
        worker_model="cheap",
        read=RepoReader(repo).read,
        verifier=EnvelopeVerifier(RepoReader(repo).read),
        receipts=receipts,
        count_tokens=count,
        inline_max_tokens=300,
    )


def test_delegates_big_reads_answers_small_ones_inline_and_receipts_everything(
    repo: Path, tmp_path: Path
) -> None:
    plan = {
        "subtasks": [
            {"id": "ttl", "question": "What is the cache TTL?", "files": ["src/cache.py"]},
            {"id": "docs", "question": "What do the docs say?", "files": ["README.md"]},
        ]
    }
    top = ScriptedBackend(
        [
            {
                "purpose": "plan",
                "text": json.dumps(plan),
                "usage": u(200, 50, "top"),
                "expect": ["src/cache.py", "README.md"],
            },
            {
                "purpose": "summarize",
                "usage": u(60, 20, "top"),
                "text": envelope("The docs are one line.", "README.md", 1, "Cache docs."),
            },
            {
                "purpose": "summarize",
                "text": "TTL is 300 seconds (src/cache.py:2).",
                "usage": u(300, 40, "top"),
                "expect": ["TTL = 300", "The docs are one line."],
            },
        ],
        name="top",
    )
    wrong_line = envelope("TTL is 300 s", "src/cache.py", 40, "TTL = 300")
    right = envelope("TTL is 300 s", "src/cache.py", 2, "TTL = 300")
    worker = ScriptedBackend(
        [
            {"text": wrong_line, "usage": u(500, 30, "cheap")},
            {"text": right, "usage": u(560, 30, "cheap"), "expect": ["has 5 lines, cited line 40"]},
        ],
        name="ttl",
    )
    receipts = ReceiptLog(tmp_path / "run" / "delegations.jsonl", "run-1", "top", price=price)
    result = build(repo, top, {"ttl": worker}, receipts).run(
        "How long are entries cached?", ["README.md", "src/cache.py"]
    )
    assert result.answer.startswith("TTL is 300 seconds")
    modes = {f.subtask.id: (f.mode, f.verified) for f in result.findings}
    assert modes == {"ttl": ("delegated", True), "docs": ("inline", True)}
    ttl = next(f for f in result.findings if f.subtask.id == "ttl")
    assert ttl.verdict is not None and ttl.verdict.reask  # the re-ask was re-audited
    assert [c.role for c in ttl.calls] == ["worker", "reask"]
    assert [c.file for c in result.evidence] == ["src/cache.py", "README.md"]
    # Worker prompts carry numbered file text and no tools.
    assert "    2| TTL = 300" in worker.calls[0].messages[-1]["content"]
    assert worker.calls[0].tools is None

    lines = read_receipts(tmp_path / "run" / "delegations.jsonl")
    kinds = sorted((r["kind"], r["id"]) for r in lines)
    assert kinds == [
        ("delegation", "ttl"),
        ("inline", "docs"),
        ("overhead", "decompose"),
        ("overhead", "synthesize"),
    ]
    delegation = next(r for r in lines if r["kind"] == "delegation")
    assert delegation["cost_usd"] == pytest.approx(price("cheap", 1060, 60))
    assert delegation["inline_cost_usd"] == pytest.approx(
        priced(price("top", 500, 30)) + priced(price("top", 560, 30))
    )
    summary = summarize_delegations(lines)
    overhead = priced(price("top", 200, 50)) + priced(price("top", 300, 40))
    assert summary.overhead_usd == pytest.approx(overhead)
    assert summary.net_saving_usd == pytest.approx(
        delegation["inline_cost_usd"] - delegation["cost_usd"] - overhead
    )
    total = sum(priced(c.usage.cost_usd) for c in [*result.overhead, *ttl.calls])
    docs = next(f for f in result.findings if f.subtask.id == "docs")
    assert result.usage.cost_usd == pytest.approx(total + priced(docs.calls[0].usage.cost_usd))


def test_an_unverifiable_worker_is_left_out_of_the_synthesis(repo: Path) -> None:
    plan = {"subtasks": [{"id": "ttl", "question": "TTL?", "files": ["src/cache.py"]}]}
    top = ScriptedBackend(
        [
            {"purpose": "plan", "text": json.dumps(plan)},
            {
                "purpose": "summarize",
                "text": "Unknown.",
                "expect": ["ttl (src/cache.py): not verified"],
            },
        ]
    )
    lie = envelope("TTL is 60", "src/cache.py", 2, "TTL = 60")
    worker = ScriptedBackend([{"text": lie}, {"text": lie}])
    result = build(repo, top, {"ttl": worker}).run("TTL?", ["src/cache.py"])
    assert not result.findings[0].verified and result.evidence == []
    assert '"findings"' not in top.calls[1].messages[-1]["content"]
    assert "[]" in top.calls[1].messages[-1]["content"]


def test_a_plan_naming_unknown_files_is_repaired_then_refused(repo: Path) -> None:
    bad = {"subtasks": [{"id": "x", "question": "q", "files": ["nope.py"]}]}
    top = ScriptedBackend(
        [
            {"purpose": "plan", "text": json.dumps(bad)},
            {
                "purpose": "plan",
                "text": json.dumps(bad),
                "expect": ["'nope.py' is not in the list"],
            },
        ]
    )
    with pytest.raises(StructuredOutputError, match="decompose output"):
        build(repo, top, {}).run("q", ["src/cache.py"])


def test_a_worker_refused_by_its_budget_is_recorded_not_fatal(repo: Path) -> None:
    from chimera.errors import BudgetExceeded

    class Refusing:
        def complete(self, *a: object, **k: object) -> object:
            raise BudgetExceeded("budget 'worker:ttl': only 0 of 10 remain")

    plan = {"subtasks": [{"id": "ttl", "question": "TTL?", "files": ["src/cache.py"]}]}
    top = ScriptedBackend(
        [
            {"purpose": "plan", "text": json.dumps(plan)},
            {"purpose": "summarize", "text": "Could not read the cache."},
        ]
    )
    orch = build(repo, top, {})
    orch.worker = lambda name: Refusing()  # type: ignore[assignment,return-value]
    result = orch.run("TTL?", ["src/cache.py"])
    assert result.findings[0].error.startswith("BudgetExceeded")
    assert "BudgetExceeded" in top.calls[1].messages[-1]["content"]


def test_plan_with_hierarchy_returns_the_synthesized_plan(repo: Path) -> None:
    plan = {"subtasks": [{"id": "d", "question": "q", "files": ["README.md"]}]}
    top = ScriptedBackend(
        [
            {"purpose": "plan", "text": json.dumps(plan), "expect": ["Plan the change", "add TTL"]},
            {"purpose": "summarize", "text": envelope("docs", "README.md", 1, "Cache docs.")},
            {
                "purpose": "summarize",
                "text": "1. Edit src/cache.py:2",
                "expect": ["attempt 1 failed"],
            },
        ]
    )
    text = plan_with_hierarchy(
        build(repo, top, {}), "add TTL", ["README.md"], failure_context="attempt 1 failed"
    )
    assert text == "1. Edit src/cache.py:2"


def test_spine_helpers_on_the_real_spine(tmp_path: Path) -> None:
    from chimera.core.spine import SpineContext, SpineFile
    from chimera.economics.hierarchy_setup import spine_overflows, spine_scope

    fits = SpineContext("x", 10, (SpineFile("a.py", "owner", "...", 10, 10),))
    cut = SpineContext("x", 10, (SpineFile("a.py", "owner", "...", 10, 4),), ("b.py",))
    assert not spine_overflows(fits)
    assert spine_overflows(cut) and spine_scope(cut) == ["a.py", "b.py"]


def test_spot_check_judging_is_overhead_not_delegated_cost(repo: Path, tmp_path: Path) -> None:
    from chimera.economics import SpotCheck

    plan = {"subtasks": [{"id": "ttl", "question": "TTL?", "files": ["src/cache.py"]}]}
    top = ScriptedBackend(
        [
            {"purpose": "plan", "text": json.dumps(plan), "usage": u(100, 10, "top")},
            {"purpose": "summarize", "text": "300 s", "usage": u(100, 10, "top")},
        ]
    )
    worker = ScriptedBackend(
        [
            {
                "text": envelope("TTL is 300 s", "src/cache.py", 2, "TTL = 300"),
                "usage": u(500, 30, "cheap"),
            }
        ]
    )
    judge = ScriptedBackend([{"text": '{"faithful": true}', "usage": u(80, 5, "top")}])
    receipts = ReceiptLog(tmp_path / "d.jsonl", "r", "top", price=price)
    orch = build(repo, top, {"ttl": worker}, receipts)
    orch.verifier = EnvelopeVerifier(
        RepoReader(repo).read, spot_check=SpotCheck(judge=judge, judge_model="top")
    )
    result = orch.run("TTL?", ["src/cache.py"])
    assert result.findings[0].verified and len(result.findings[0].verify_calls) == 1
    lines = read_receipts(tmp_path / "d.jsonl")
    (delegation,) = [r for r in lines if r["kind"] == "delegation"]
    assert delegation["cost_usd"] == pytest.approx(price("cheap", 500, 30))
    (verify,) = [r for r in lines if r["id"] == "verify"]
    assert verify["cost_usd"] == pytest.approx(price("top", 80, 5))
    spent = (
        priced(price("top", 100, 10)) * 2
        + priced(price("cheap", 500, 30))
        + priced(price("top", 80, 5))
    )
    assert result.usage.cost_usd == pytest.approx(spent)
    summary = summarize_delegations(lines)
    overhead = priced(price("top", 100, 10)) * 2 + priced(price("top", 80, 5))
    assert summary.overhead_usd == pytest.approx(overhead)
