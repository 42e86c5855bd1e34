"""Per-worker budgets under the run budget hold with 10 workers calling at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from chimera.economics import WorkerBudgets
from chimera.errors import BudgetExceeded
from chimera.protocols import Completion, Message, Purpose, ToolSchema, Usage
from chimera.providers import TokenBudget, count_tokens

MODEL = "gpt-4o-mini"
MESSAGES: list[Message] = [{"role": "user", "content": "Summarise the file in one line."}]
CAP = 50


class Slow:
    """Uses exactly its worst case (prompt + cap) and sleeps, so calls overlap in flight."""

    def __init__(self, prompt: int) -> None:
        self.prompt = prompt
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        time.sleep(0.02)
        with self._lock:
            self.in_flight -= 1
        return Completion("ok", usage=Usage(self.prompt, max_tokens or 0, None), model=MODEL)


def run_workers(
    budgets: WorkerBudgets, inner: Slow, workers: int, calls_each: int
) -> dict[str, dict[str, int]]:
    ok: dict[str, int] = {}
    refused: dict[str, int] = {}
    start = threading.Barrier(workers)

    def work(name: str) -> None:
        backend = budgets.backend(name, inner, model=MODEL)
        start.wait()
        for _ in range(calls_each):
            try:
                backend.complete(MESSAGES, max_tokens=CAP)
                ok[name] = ok.get(name, 0) + 1
            except BudgetExceeded:
                refused[name] = refused.get(name, 0) + 1

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"ok": ok, "refused": refused}


def test_the_shared_run_budget_holds_with_10_concurrent_workers() -> None:
    per_call = count_tokens(MODEL, MESSAGES) + CAP
    run = TokenBudget(max_tokens=per_call * 23 + per_call // 2, name="run")
    budgets = WorkerBudgets(run, per_worker_tokens=per_call * 4, default_max_tokens=CAP)
    inner = Slow(count_tokens(MODEL, MESSAGES))
    result = run_workers(budgets, inner, workers=10, calls_each=5)
    assert inner.peak > 1, "calls must actually overlap for the test to mean anything"
    assert sum(result["ok"].values()) == 23  # exactly what fits, never one more
    assert run.max_tokens is not None
    assert run.spent_tokens == 23 * per_call <= run.max_tokens
    assert run.reserved_tokens == 0
    assert all(n <= 4 for n in result["ok"].values())
    spend = {s.worker: s for s in budgets.spend()}
    assert len(spend) == 10
    assert sum(s.tokens for s in spend.values()) == run.spent_tokens
    assert all(s.tokens <= per_call * 4 for s in spend.values())
    assert spend["w0"].cost_usd is not None  # gpt-4o-mini is priced: settled with its price


def test_each_worker_has_a_hard_ceiling_refused_in_advance() -> None:
    per_call = count_tokens(MODEL, MESSAGES) + CAP
    run = TokenBudget(max_tokens=None, name="run")
    budgets = WorkerBudgets(run, per_worker_tokens=per_call * 2, default_max_tokens=CAP)
    inner = Slow(count_tokens(MODEL, MESSAGES))
    result = run_workers(budgets, inner, workers=10, calls_each=3)
    assert result["ok"] == {f"w{i}": 2 for i in range(10)}
    assert result["refused"] == {f"w{i}": 1 for i in range(10)}
    assert budgets.budget("w3") is budgets.budget("w3")
    assert run.spent_tokens == 20 * per_call
