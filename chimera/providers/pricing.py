"""Token counts and prices, from LiteLLM's own counter and cost map.

Nothing here invents a number: a model LiteLLM has no price for costs ``None`` ("unknown"),
and a custom price enters only through :func:`register_prices` (from ``[tool.chimera.models]
prices`` or a test), which registers it with LiteLLM so every cost path agrees.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chimera.errors import ConfigError
from chimera.protocols import Message, ToolSchema
from chimera.providers.lazy_litellm import import_litellm

if TYPE_CHECKING:
    from chimera.config import ModelPrice

__all__ = [
    "LiteLLMMeter",
    "completion_cost_usd",
    "cost_usd",
    "count_tokens",
    "is_priced",
    "register_prices",
]

_log = logging.getLogger(__name__)


def count_tokens(
    model: str, messages: Sequence[Message], tools: Sequence[ToolSchema] | None = None
) -> int:
    """Prompt tokens of ``messages`` (and tool schemas) for ``model``, by LiteLLM's counter.

    LiteLLM picks the model's own tokenizer where it knows one and falls back to tiktoken's
    ``cl100k_base`` otherwise, so the count is an estimate for unknown models.

    A ``scripted:`` model has no tokenizer: its prompts are estimated at four characters a
    token, without importing LiteLLM (a scripted demo or test then starts in a fraction of
    the time).
    """
    if model.startswith("scripted:"):
        chars = sum(len(json.dumps(m, ensure_ascii=False, default=str)) for m in messages)
        chars += sum(len(json.dumps(t, default=str)) for t in tools or ())
        return max(1, (chars + 3) // 4)
    litellm = import_litellm("token counting")
    count = litellm.token_counter(
        model=model, messages=list(messages), tools=list(tools) if tools else None
    )
    return int(count)


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD cost of a call from LiteLLM's cost map; ``None`` when the model has no price.

    ``scripted:`` models cost 0.0: they are replayed locally and nothing is paid.

    Raises nothing for unknown models: an unknown price is ``None``, never a guess.
    """
    if model.startswith("scripted:"):
        # A scripted model is replayed locally: nothing is paid. (A script can still state
        # a cost per turn, which the completion then carries.)
        return 0.0
    litellm = import_litellm("cost accounting")
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception as exc:  # LiteLLM raises assorted types for unmapped models.
        _log.debug("no price for %s: %s", model, exc)
        return None
    return float(prompt_cost) + float(completion_cost)


def is_priced(model: str) -> bool:
    """True when LiteLLM's cost map (or a registered price) has a price for ``model``."""
    return cost_usd(model, 1, 1) is not None


class LiteLLMMeter:
    """LiteLLM's tokenizer and cost map for one model name: the
    :class:`~chimera.protocols.SupportsMetering` of a :class:`LiteLLMBackend`, and what a budget
    meters with when the backend it wraps is for another model or declares no meter.

    Args:
        model: the model name whose tokenizer and price apply.
    """

    def __init__(self, model: str) -> None:
        self.model = model

    def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema] | None = None
    ) -> int:
        """:func:`count_tokens` for this model."""
        return count_tokens(self.model, messages, tools)

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """:func:`cost_usd` for this model."""
        return cost_usd(self.model, prompt_tokens, completion_tokens)


def completion_cost_usd(response: Any, model: str) -> float | None:
    """Cost of one LiteLLM response (cached/reasoning tokens included), or ``None``.

    ``model`` is the name the call was made with; it decides the price, so a provider that
    answers with a dated variant of the name is still priced as configured.
    """
    litellm = import_litellm("cost accounting")
    try:
        value = litellm.completion_cost(completion_response=response, model=model)
    except Exception as exc:
        _log.debug("no price for %s: %s", model, exc)
        return None
    return float(value)


def register_prices(prices: Mapping[str, ModelPrice]) -> None:
    """Register custom per-token prices with LiteLLM's cost map.

    ``prices`` maps a model name exactly as it is passed to LiteLLM (``openai/my-model``) to
    its price. The provider is derived from the name, so the cost map entry is found by
    ``cost_per_token`` and ``completion_cost`` alike.

    Raises:
        ConfigError: LiteLLM cannot tell which provider the model name belongs to.
    """
    if not prices:
        return
    litellm = import_litellm("custom model prices")
    entries: dict[str, dict[str, Any]] = {}
    for model, price in prices.items():
        try:
            _, provider, _, _ = litellm.get_llm_provider(model=model)
        except Exception as exc:
            raise ConfigError(
                f"models.prices.{model}: LiteLLM does not know the provider of this model "
                "name; prefix it with one (for example 'openai/NAME')"
            ) from exc
        input_cost, output_cost = price.per_token()
        entries[model] = {
            "input_cost_per_token": input_cost,
            "output_cost_per_token": output_cost,
            "litellm_provider": provider,
            "mode": "chat",
        }
    # LiteLLM logs a warning that cache-token prices default to 0 for custom models; that
    # is true and harmless here, and would only clutter every run's output.
    litellm_logger = logging.getLogger("LiteLLM")
    level = litellm_logger.level
    litellm_logger.setLevel(logging.ERROR)
    try:
        litellm.register_model(entries)
    finally:
        litellm_logger.setLevel(level)
