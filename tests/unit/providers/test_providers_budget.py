from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from chimera.config import ModelPrice
from chimera.errors import BudgetExceeded, ChimeraError, ConfigError, ProviderError, ProviderTimeout
from chimera.governance.audit import AuditLog, verify_audit_log
from chimera.protocols import Completion, Message, Purpose, ToolSchema, Usage
from chimera.providers import (
    BudgetedBackend,
    ScriptedBackend,
    TokenBudget,
    count_tokens,
    register_prices,
)

USER = [{"role": "user", "content": "hello there, budget"}]
PRICED = "openai/chimera-test-budget-priced"  # $1 / $2 per million tokens


@pytest.fixture(scope="module", autouse=True)
def _prices() -> None:
    register_prices({PRICED: ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0)})


# -- TokenBudget ----------------------------------------------------------------------------


def test_budget_reserve_settle_release_accounting() -> None:
    budget = TokenBudget(max_tokens=100, max_usd=1.0)
    r = budget.reserve(60, 0.5)
    assert budget.reserved_tokens == 60
    assert budget.remaining().tokens == 40 and budget.remaining().usd == pytest.approx(0.5)
    with pytest.raises(
        BudgetExceeded,
        match=r"budget 'run': the call may use up to 50 tokens but only 40 of 100 remain",
    ):
        budget.reserve(50, 0.1)
    budget.settle(r, Usage(20, 10, 0.25))
    assert budget.spent_tokens == 30 and budget.spent_usd == pytest.approx(0.25)
    assert budget.reserved_tokens == 0
    r2 = budget.reserve(70, 0.75)
    budget.release(r2)
    assert budget.spent_tokens == 30 and budget.remaining().tokens == 70
    with pytest.raises(ChimeraError, match="is not open"):
        budget.settle(r, Usage(1, 1, 0.0))
    with pytest.raises(BudgetExceeded, match=r"may cost up to \$0\.800000 but only \$0\.750000"):
        budget.reserve(1, 0.8)


def test_budget_nested_worker_must_fit_parent_and_own_ceiling() -> None:
    run = TokenBudget(max_tokens=100, name="run")
    w1 = run.child("worker-1", max_tokens=60)
    w2 = run.child("worker-2", max_tokens=60)
    w1.reserve(60, None)
    with pytest.raises(BudgetExceeded, match="budget 'worker-1'"):
        w1.reserve(1, None)
    with pytest.raises(BudgetExceeded, match="budget 'run'"):
        w2.reserve(41, None)  # fits worker-2 (60) but not the run (40 left)
    assert w2.reserved_tokens == 0 and run.reserved_tokens == 60  # a refusal holds nothing
    w2.reserve(40, None)
    assert run.remaining().tokens == 0 and w2.remaining().tokens == 0


def test_budget_unknown_cost_needs_a_token_ceiling() -> None:
    usd_only = TokenBudget(max_usd=1.0)
    with pytest.raises(BudgetExceeded, match="cost is unknown and no token budget bounds it"):
        usd_only.reserve(10, None)
    both = TokenBudget(max_tokens=100, max_usd=1.0)
    r = both.reserve(10, None)
    both.settle(r, Usage(5, 5, None))
    assert both.spent_usd is None  # unknown from now on, never a guess
    assert both.remaining().usd_known is False
    assert both.spent_tokens == 10


def test_budget_unlimited_budget_tracks_spending() -> None:
    budget = TokenBudget()
    budget.settle(budget.reserve(10**9, 10**6), Usage(3, 4, 0.01))
    assert budget.spent_tokens == 7 and budget.remaining().tokens is None


def test_budget_ten_threads_never_overrun_shared_and_worker_ceilings() -> None:
    run = TokenBudget(max_tokens=1000, max_usd=10.0)
    workers = [run.child(f"worker-{i}", max_tokens=150) for i in range(10)]
    barrier = threading.Barrier(10)
    granted = [0] * 10
    peak = [0]
    lock = threading.Lock()

    def work(i: int) -> None:
        barrier.wait()
        for _ in range(50):
            try:
                r = workers[i].reserve(30, 0.3)
            except BudgetExceeded:
                continue
            with lock:
                peak[0] = max(peak[0], run.spent_tokens + run.reserved_tokens)
            workers[i].settle(r, Usage(20, 10, 0.3))
            granted[i] += 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert run.spent_tokens <= 1000 and peak[0] <= 1000
    assert all(w.spent_tokens <= 150 for w in workers)
    assert run.spent_usd is not None and run.spent_usd <= 10.0 + 1e-9
    # USD (10 / 0.3 -> 33 calls) binds before tokens (1000 / 30 -> 33) and workers (5 each).
    assert sum(granted) == 33
    assert run.spent_tokens == sum(w.spent_tokens for w in workers)


# -- BudgetedBackend ------------------------------------------------------------------------


class Failing:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.calls = 0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        self.calls += 1
        raise self.exc


def test_budgeted_refuses_before_sending_and_audits(tmp_path: Path) -> None:
    prompt = count_tokens(PRICED, USER)
    script = ScriptedBackend(
        [{"text": "a", "usage": {"prompt_tokens": prompt, "completion_tokens": 3}}]
    )
    audit = AuditLog(tmp_path / "audit.jsonl", "r1")
    budget = TokenBudget(max_tokens=prompt + 100)
    backend = BudgetedBackend(script, budget, model=PRICED, default_max_tokens=100, audit=audit)
    with pytest.raises(BudgetExceeded):
        backend.complete(USER, max_tokens=101)
    assert script.calls == [] and script.position == 0  # nothing was sent
    completion = backend.complete(USER)  # default_max_tokens=100 fits exactly
    assert script.calls[0].max_tokens == 100  # the cap reaches the provider
    assert completion.usage.cost_usd == pytest.approx((prompt * 1.0 + 3 * 2.0) / 1e6)
    assert budget.spent_tokens == prompt + 3
    entries = [line for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert len(entries) == 1 and '"event":"budget_refused"' in entries[0]
    assert '"estimate_tokens":' + str(prompt + 101) in entries[0]
    assert verify_audit_log(tmp_path / "audit.jsonl").ok


def test_budgeted_usd_budget_with_unpriced_model_refuses_to_start() -> None:
    script = ScriptedBackend([])
    with pytest.raises(
        ConfigError, match="model 'openai/chimera-test-unpriced' has no known price"
    ):
        BudgetedBackend(script, TokenBudget(max_usd=1.0), model="openai/chimera-test-unpriced")
    # A worker with only a USD ceiling under a run with a token ceiling is bounded: allowed.
    run = TokenBudget(max_tokens=10_000)
    BudgetedBackend(script, run.child("w", max_usd=1.0), model="openai/chimera-test-unpriced")
    BudgetedBackend(
        script, TokenBudget(max_usd=1.0, max_tokens=5000), model="openai/chimera-test-unpriced"
    )


def test_budgeted_usd_refusal_uses_the_registered_price() -> None:
    prompt = count_tokens(PRICED, USER)
    one_call = (prompt * 1.0 + 1000 * 2.0) / 1e6
    script = ScriptedBackend(
        [{"text": "x", "usage": {"prompt_tokens": prompt, "completion_tokens": 1000}}] * 3
    )
    budget = TokenBudget(max_usd=one_call * 2.5)
    backend = BudgetedBackend(script, budget, model=PRICED, default_max_tokens=1000)
    backend.complete(USER)
    backend.complete(USER)
    with pytest.raises(BudgetExceeded, match=r"budget 'run': the call may cost up to"):
        backend.complete(USER)
    assert script.position == 2
    assert budget.spent_usd == pytest.approx(one_call * 2)


def test_budgeted_provider_error_releases_and_timeout_charges() -> None:
    budget = TokenBudget(max_tokens=10_000)
    failing = Failing(ProviderError("boom"))
    backend = BudgetedBackend(failing, budget, model=PRICED, default_max_tokens=50)
    with pytest.raises(ProviderError):
        backend.complete(USER)
    assert budget.spent_tokens == 0 and budget.reserved_tokens == 0
    timing_out = BudgetedBackend(
        Failing(ProviderTimeout("slow")), budget, model=PRICED, default_max_tokens=50
    )
    with pytest.raises(ProviderTimeout):
        timing_out.complete(USER)
    assert budget.spent_tokens == count_tokens(PRICED, USER) + 50  # worst case charged
    assert budget.reserved_tokens == 0


def test_budgeted_underestimate_is_audited(tmp_path: Path) -> None:
    script = ScriptedBackend(
        [{"text": "x", "usage": {"prompt_tokens": 5000, "completion_tokens": 1}}]
    )
    audit = AuditLog(tmp_path / "a.jsonl", "r")
    backend = BudgetedBackend(
        script, TokenBudget(max_tokens=100_000), model=PRICED, default_max_tokens=10, audit=audit
    )
    backend.complete(USER)
    assert '"event":"budget_overrun"' in (tmp_path / "a.jsonl").read_text()


def test_budgeted_scripted_model_is_free_so_a_usd_budget_works(tmp_path: Path) -> None:
    script = ScriptedBackend(
        [{"text": "x", "usage": {"prompt_tokens": 100, "completion_tokens": 5}}]
    )
    budget = TokenBudget(max_usd=0.01)
    backend = BudgetedBackend(script, budget, model="scripted:demo", default_max_tokens=50)
    assert backend.complete(USER).usage.cost_usd == 0.0
    assert budget.spent_usd == 0.0 and budget.spent_tokens == 105
