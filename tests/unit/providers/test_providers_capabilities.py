"""Provider capabilities live on the backends: LiteLLM's backend implements every one, a
script implements or declines each explicitly, and a budget meters with the backend it wraps
when that backend is for the budget's model."""

from __future__ import annotations

import pytest

from chimera.config import ModelPrice
from chimera.errors import AuthenticationError
from chimera.protocols import SupportsCredentialCheck, SupportsMetering, SupportsReasoningEffort
from chimera.providers import (
    BudgetedBackend,
    LiteLLMBackend,
    ScriptedBackend,
    TokenBudget,
    count_tokens,
    register_prices,
)
from chimera.providers.pricing import LiteLLMMeter

PRICED = "openai/chimera-test-capabilities-priced"  # $1 / $2 per million tokens
MESSAGES = [{"role": "user", "content": "count these words please"}]


@pytest.fixture(autouse=True)
def _prices() -> None:
    register_prices({PRICED: ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0)})


@pytest.mark.parametrize(
    "backend",
    [
        LiteLLMBackend(PRICED),
        ScriptedBackend([]),
        BudgetedBackend(LiteLLMBackend(PRICED), TokenBudget(max_tokens=10), model=PRICED),
    ],
)
def test_every_backend_declares_every_capability(backend: object) -> None:
    assert isinstance(backend, SupportsReasoningEffort)
    assert isinstance(backend, SupportsCredentialCheck)
    if not isinstance(backend, BudgetedBackend):
        assert isinstance(backend, SupportsMetering)


def test_litellm_meters_and_prices_by_its_model() -> None:
    backend = LiteLLMBackend(PRICED)
    assert backend.count_tokens(MESSAGES) == count_tokens(PRICED, MESSAGES) > 0
    assert backend.cost_usd(1_000_000, 1_000_000) == pytest.approx(3.0)
    assert LiteLLMBackend("openai/chimera-test-capabilities-unpriced").cost_usd(1, 1) is None


def test_a_script_declines_effort_costs_nothing_and_needs_no_key() -> None:
    script = ScriptedBackend([], name="s")
    declining: SupportsReasoningEffort = script
    assert declining.with_reasoning_effort("high") is None
    assert script.cost_usd(1000, 1000) == 0.0
    script.check_credentials()
    assert script.count_tokens(MESSAGES) == count_tokens(script.model, MESSAGES)


def test_litellm_credential_check_names_the_missing_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        LiteLLMBackend("anthropic/claude-sonnet-4-5").check_credentials()
    LiteLLMBackend("anthropic/claude-sonnet-4-5", api_key="k" * 20).check_credentials()


def test_a_budget_meters_with_the_inner_backend_only_for_its_own_model() -> None:
    inner = LiteLLMBackend(PRICED)
    own = BudgetedBackend(inner, TokenBudget(max_tokens=10), model=PRICED)
    assert own.meter is inner
    # A script standing in for a priced model is metered by the model's name, not as a script.
    stand_in = BudgetedBackend(ScriptedBackend([]), TokenBudget(max_tokens=10), model=PRICED)
    assert isinstance(stand_in.meter, LiteLLMMeter)
    assert stand_in.meter.cost_usd(1_000_000, 0) == pytest.approx(1.0)


def test_a_budget_passes_effort_to_the_backend_it_wraps_or_declines() -> None:
    budgeted = BudgetedBackend(LiteLLMBackend(PRICED), TokenBudget(max_tokens=10), model=PRICED)
    tuned = budgeted.with_reasoning_effort("low")
    assert tuned is not None and tuned.budget is budgeted.budget
    assert isinstance(tuned.inner, LiteLLMBackend) and tuned.inner is not budgeted.inner
    assert tuned.inner.request_kwargs(MESSAGES)["reasoning_effort"] == "low"
    assert tuned.meter == tuned.inner
    scripted = BudgetedBackend(ScriptedBackend([]), TokenBudget(max_tokens=10), model="x")
    assert scripted.with_reasoning_effort("low") is None
