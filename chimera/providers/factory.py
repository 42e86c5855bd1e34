"""``make_backend``: a model name (or ``scripted:PATH``) to a ready backend."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import MissingExtraError
from chimera.protocols import SupportsComplete
from chimera.providers.lazy_litellm import litellm_available

if TYPE_CHECKING:
    from chimera.config import ChimeraConfig
    from chimera.protocols import AuditSink
    from chimera.providers.budget import BudgetedBackend, TokenBudget

__all__ = ["SCRIPTED_PREFIX", "budgeted_backend", "make_backend"]

SCRIPTED_PREFIX = "scripted:"


def make_backend(model: str, config: ChimeraConfig | None = None) -> SupportsComplete:
    """The backend for ``model``.

    ``scripted:PATH`` gives a :class:`~chimera.providers.scripted.ScriptedBackend` replaying
    the script at PATH (relative to the working directory); anything else a
    :class:`~chimera.providers.litellm_backend.LiteLLMBackend`, with the endpoint, timeout and
    retries from ``config.models`` and the configured custom prices registered with LiteLLM.
    Budgets are not applied here: wrap the result in a ``BudgetedBackend``.

    Raises:
        MissingExtraError: a LiteLLM model was asked for and LiteLLM is not installed.
        ConfigError: the script is invalid, or a custom price names an unknown provider.
    """
    if model.startswith(SCRIPTED_PREFIX):
        from chimera.providers.scripted import ScriptedBackend

        return ScriptedBackend.from_file(Path(model.removeprefix(SCRIPTED_PREFIX)))
    if not litellm_available():
        raise MissingExtraError(f"model '{model}'", "agent")
    from chimera.providers.litellm_backend import LiteLLMBackend
    from chimera.providers.pricing import register_prices

    if config is None:
        return LiteLLMBackend(model)
    register_prices(config.models.prices)
    return LiteLLMBackend(
        model,
        api_base=config.models.api_base_for(model),
        timeout=config.models.timeout,
        num_retries=config.models.num_retries,
        extra=dict(config.models.litellm) or None,
    )


def budgeted_backend(
    model: str,
    config: ChimeraConfig,
    budget: TokenBudget,
    *,
    audit: AuditSink | None = None,
    max_tokens: int | None = None,
) -> BudgetedBackend:
    """``make_backend(model, config)`` behind a :class:`BudgetedBackend` reserving on ``budget``.

    The one place a model becomes a budgeted backend (the session's ladder, the delegation
    hierarchy's top model and spot-check judge, ``chimera cascade-bench``). ``max_tokens`` is
    the completion cap of a call that names none (default ``config.models.max_tokens``);
    ``audit`` receives the refusals.

    Raises:
        ConfigError: a USD budget applies, ``model`` is unpriced and no token budget bounds it;
            or the script is invalid.
        MissingExtraError: LiteLLM is needed and not installed.
    """
    from chimera.providers.budget import BudgetedBackend

    return BudgetedBackend(
        make_backend(model, config),
        budget,
        model=model,
        default_max_tokens=max_tokens or config.models.max_tokens,
        audit=audit,
    )
