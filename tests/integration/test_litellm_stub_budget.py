"""Budgets enforced in front of LiteLLM, proven by the stub server's request log."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.config import ModelPrice
from chimera.errors import BudgetExceeded
from chimera.governance.audit import AuditLog, verify_audit_log
from chimera.providers import (
    BudgetedBackend,
    LiteLLMBackend,
    TokenBudget,
    cost_usd,
    count_tokens,
    register_prices,
)
from chimera.testing import OpenAIStubServer, StubReply

USER = [{"role": "user", "content": "summarise the failing test output"}]
NAME = "chimera-stub-budget"
MODEL = f"openai/{NAME}"
CAP = 200  # max_tokens per call


@pytest.fixture(scope="module", autouse=True)
def _price() -> None:
    register_prices({MODEL: ModelPrice(input_per_mtok=3.0, output_per_mtok=15.0)})


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


def gateway(stub: OpenAIStubServer) -> LiteLLMBackend:
    return LiteLLMBackend(MODEL, api_base=stub.api_base, api_key="stub", num_retries=0)


def worst_case_reply() -> tuple[int, StubReply]:
    """A reply whose real usage equals the budget's estimate, so the arithmetic is exact."""
    prompt = count_tokens(MODEL, USER)
    return prompt + CAP, StubReply(text="ok", prompt_tokens=prompt, completion_tokens=CAP)


def test_budget_refused_before_anything_is_sent(stub: OpenAIStubServer, tmp_path: Path) -> None:
    estimate, reply = worst_case_reply()
    stub.add_reply(NAME, reply)
    audit = AuditLog(tmp_path / "audit.jsonl", "run-b")
    backend = BudgetedBackend(
        gateway(stub),
        TokenBudget(max_tokens=estimate - 1),
        model=MODEL,
        default_max_tokens=CAP,
        audit=audit,
    )
    with pytest.raises(BudgetExceeded, match=f"only {estimate - 1} of {estimate - 1} remain"):
        backend.complete(USER)
    assert stub.requests == []  # the provider never saw it
    (line,) = (tmp_path / "audit.jsonl").read_text().splitlines()
    event = json.loads(line)
    assert event["event"] == "budget_refused" and event["fields"]["estimate_tokens"] == estimate
    assert verify_audit_log(tmp_path / "audit.jsonl", head=audit.head_hash).ok


def test_budget_usd_exact_and_then_refused(stub: OpenAIStubServer) -> None:
    _, reply = worst_case_reply()
    stub.add_reply(NAME, reply)
    per_call = cost_usd(MODEL, reply.prompt_tokens or 0, CAP)
    assert per_call is not None
    assert per_call == pytest.approx(((reply.prompt_tokens or 0) * 3.0 + CAP * 15.0) / 1e6)
    budget = TokenBudget(max_usd=per_call * 2.5)
    backend = BudgetedBackend(gateway(stub), budget, model=MODEL, default_max_tokens=CAP)
    for _ in range(2):
        assert backend.complete(USER).usage.cost_usd == pytest.approx(per_call)
    with pytest.raises(BudgetExceeded, match=r"may cost up to \$"):
        backend.complete(USER)
    assert len(stub.completion_requests()) == 2
    assert budget.spent_usd == pytest.approx(per_call * 2)


def test_budget_ten_workers_share_a_run_budget_without_overrun(
    stub: OpenAIStubServer, tmp_path: Path
) -> None:
    estimate, reply = worst_case_reply()
    stub.add_reply(NAME, reply)
    audit = AuditLog(tmp_path / "audit.jsonl", "run-10")
    run = TokenBudget(max_tokens=estimate * 7 + estimate // 2, name="run")
    workers = [run.child(f"worker-{i}", max_tokens=estimate * 2) for i in range(10)]
    backends = [
        BudgetedBackend(gateway(stub), w, model=MODEL, default_max_tokens=CAP, audit=audit)
        for w in workers
    ]
    barrier = threading.Barrier(10)
    results: list[list[str]] = [[] for _ in range(10)]

    def work(i: int) -> None:
        barrier.wait()
        for _ in range(3):
            try:
                backends[i].complete(USER)
                results[i].append("sent")
            except BudgetExceeded:
                results[i].append("refused")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sent = sum(r.count("sent") for r in results)
    assert sent == 7  # exactly what fits: 7.5 estimates
    assert len(stub.completion_requests()) == 7  # and nothing more reached the provider
    assert run.max_tokens is not None
    assert run.spent_tokens == 7 * estimate <= run.max_tokens
    assert all(w.spent_tokens <= estimate * 2 for w in workers)
    assert run.reserved_tokens == 0
    refused = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert len(refused) == 30 - 7 and {e["event"] for e in refused} == {"budget_refused"}
    assert verify_audit_log(tmp_path / "audit.jsonl", head=audit.head_hash).ok
