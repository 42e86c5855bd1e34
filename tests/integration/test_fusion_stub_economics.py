"""Cascade, worker budgets and delegation receipts through LiteLLM over real HTTP.

Distinct stub models on the local OpenAI-compatible server, with prices registered with
LiteLLM for the test (one model deliberately left unpriced).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from chimera.config import ModelPrice
from chimera.economics import (
    CascadeBackend,
    CascadeTier,
    CriteriaGate,
    EnvelopeVerifier,
    HierarchicalOrchestrator,
    ReceiptLog,
    RepoReader,
    SchemaGate,
    WorkerBudgets,
)
from chimera.economics.cascade import Gate, route_log
from chimera.economics.receipts import read_receipts, summarize_delegations
from chimera.errors import BudgetExceeded
from chimera.providers import LiteLLMBackend, TokenBudget, cost_usd, count_tokens, register_prices
from chimera.testing import OpenAIStubServer, StubReply

PREFIX = "chimera-econ-it"
PRICES = {"weak": (0.1, 0.4), "medium": (1.0, 4.0), "top": (10.0, 30.0), "worker": (0.3, 0.6)}
UNPRICED = "unpriced"
TASK = [{"role": "user", "content": "Plan the fix for the flaky test as JSON."}]


def model(name: str) -> str:
    return f"openai/{PREFIX}-{name}"


def priced(name: str, prompt: int, completion: int) -> float:
    """The cost of a call to a model in ``PRICES`` (every one has a registered price)."""
    cost = cost_usd(model(name), prompt, completion)
    assert cost is not None
    return cost


@pytest.fixture(scope="module", autouse=True)
def _prices() -> None:
    register_prices(
        {model(n): ModelPrice(input_per_mtok=i, output_per_mtok=o) for n, (i, o) in PRICES.items()}
    )


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


def backend(stub: OpenAIStubServer, name: str) -> LiteLLMBackend:
    return LiteLLMBackend(model(name), api_base=stub.api_base, api_key="stub", num_retries=0)


class Plan(BaseModel):
    steps: list[str]


def test_cascade_stops_at_the_first_passing_tier_and_costs_the_sum_of_hops(
    stub: OpenAIStubServer,
) -> None:
    stub.add_reply(
        f"{PREFIX}-weak", StubReply(text="Just rerun it.", prompt_tokens=30, completion_tokens=5)
    )
    stub.add_reply(
        f"{PREFIX}-medium",
        StubReply(
            text='{"steps": ["pin the seed", "rerun 50 times"]}',
            prompt_tokens=30,
            completion_tokens=15,
        ),
    )
    stub.add_reply(
        f"{PREFIX}-top", StubReply(text='{"steps": ["x"]}', prompt_tokens=30, completion_tokens=5)
    )
    gates: list[Gate] = [SchemaGate(Plan), CriteriaGate(must_match=["seed"])]
    cascade = CascadeBackend(
        [
            CascadeTier("weak", backend(stub, "weak"), gates, model=model("weak")),
            CascadeTier("medium", backend(stub, "medium"), gates, model=model("medium")),
            CascadeTier("top", backend(stub, "top"), [], model=model("top")),
        ]
    )
    out = cascade.complete(TASK)
    assert json.loads(out.text)["steps"][0] == "pin the seed"
    hops = route_log(out)
    assert [(h["tier"], h["accepted"]) for h in hops] == [("weak", False), ("medium", True)]
    weak_cost = cost_usd(model("weak"), 30, 5)
    medium_cost = cost_usd(model("medium"), 30, 15)
    assert weak_cost is not None and medium_cost is not None
    assert [h["cost_usd"] for h in hops] == pytest.approx([weak_cost, medium_cost])
    assert out.usage.cost_usd == pytest.approx(weak_cost + medium_cost, rel=1e-9)
    assert stub.completion_requests(f"{PREFIX}-top") == []


def test_budgets_hold_under_10_concurrent_workers_over_http(stub: OpenAIStubServer) -> None:
    cap = 40
    prompt = count_tokens(model("worker"), TASK)
    per_call = prompt + cap
    stub.add_reply(
        f"{PREFIX}-worker", StubReply(text="ok", prompt_tokens=prompt, completion_tokens=cap)
    )
    run = TokenBudget(max_tokens=per_call * 17, name="run")
    budgets = WorkerBudgets(run, per_worker_tokens=per_call * 3, default_max_tokens=cap)
    ok: list[str] = []
    refused: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(10)

    def work(name: str) -> None:
        b = budgets.backend(name, backend(stub, "worker"), model=model("worker"))
        start.wait()
        for _ in range(4):
            try:
                b.complete(TASK)
                with lock:
                    ok.append(name)
            except BudgetExceeded:
                with lock:
                    refused.append(name)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ok) == 17 and len(refused) == 23
    assert len(stub.completion_requests(f"{PREFIX}-worker")) == 17  # refused = never sent
    assert run.spent_tokens == 17 * per_call and run.reserved_tokens == 0
    assert all(ok.count(f"w{i}") <= 3 for i in range(10))
    expected_usd = cost_usd(model("worker"), prompt, cap)
    assert expected_usd is not None
    assert run.spent_usd == pytest.approx(17 * expected_usd)


def envelope(answer: str, quote: str, line: int) -> str:
    return json.dumps(
        {"answer": answer, "evidence": [{"file": "src/retry.py", "line": line, "quote": quote}]}
    )


@pytest.mark.parametrize("worker", ["worker", UNPRICED])
def test_receipts_are_exact_for_priced_models_and_none_for_unpriced(
    stub: OpenAIStubServer, tmp_path: Path, worker: str
) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text(
        "\n".join(f"# filler line {i}" for i in range(80)) + "\nMAX_RETRIES = 3\n"
    )
    plan = {
        "subtasks": [{"id": "retries", "question": "How many retries?", "files": ["src/retry.py"]}]
    }
    stub.add_reply(
        f"{PREFIX}-top",
        StubReply(text=json.dumps(plan), prompt_tokens=120, completion_tokens=40),
        StubReply(text="Three retries (src/retry.py:81).", prompt_tokens=300, completion_tokens=20),
    )
    stub.add_reply(
        f"{PREFIX}-{worker}",
        StubReply(
            text=envelope("3 retries", "MAX_RETRIES = 3", 81),
            prompt_tokens=900,
            completion_tokens=35,
        ),
    )
    receipts = ReceiptLog(tmp_path / "run" / "delegations.jsonl", "run-r", model("top"))
    run = TokenBudget(max_tokens=100_000)
    budgets = WorkerBudgets(run, per_worker_tokens=20_000)
    orch = HierarchicalOrchestrator(
        top=backend(stub, "top"),
        top_model=model("top"),
        worker=lambda n: budgets.backend(n, backend(stub, worker), model=model(worker)),
        worker_model=model(worker),
        read=RepoReader(root).read,
        verifier=EnvelopeVerifier(RepoReader(root).read),
        receipts=receipts,
        inline_max_tokens=100,
    )
    result = orch.run("How many times does the client retry?", ["src/retry.py"])
    assert result.answer.startswith("Three retries") and result.findings[0].verified
    lines = read_receipts(tmp_path / "run" / "delegations.jsonl")
    (delegation,) = [r for r in lines if r["kind"] == "delegation"]
    top_inline = cost_usd(model("top"), 900, 35)
    overhead = [priced("top", 120, 40), priced("top", 300, 20)]
    assert delegation["inline_cost_usd"] == pytest.approx(top_inline, rel=1e-9)
    assert [r["cost_usd"] for r in lines if r["kind"] == "overhead"] == pytest.approx(overhead)
    summary = summarize_delegations(lines)
    if worker == "worker":
        measured = cost_usd(model("worker"), 900, 35)
        assert measured is not None and top_inline is not None
        assert delegation["cost_usd"] == pytest.approx(measured, rel=1e-9)
        assert summary.net_saving_usd == pytest.approx(
            top_inline - measured - sum(overhead),
            rel=1e-9,
        )
    else:
        assert cost_usd(model(UNPRICED), 900, 35) is None
        assert delegation["cost_usd"] is None
        assert summary.net_saving_usd is None
        assert summary.unknown_prices == [model(UNPRICED)]
        assert f"no price is known for {model(UNPRICED)}" in summary.render()
