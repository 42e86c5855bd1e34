"""The model that decides a person's memory writes (``chimera memory add``, ``chimera migrate
--model``): ``--model``, else ``[models] default``, budgeted like every other call."""

from __future__ import annotations

from pathlib import Path

from chimera.errors import ChimeraError, UsageError
from chimera.protocols import SupportsComplete

DECISION_TOKENS = 400
"""The completion cap of one ADD / UPDATE / DELETE / NOOP decision."""


def memory_backend(root: Path, model: str | None) -> SupportsComplete | None:
    """The budgeted backend of ``model`` (else the configuration's ``[models] default``) for
    memory decisions at ``root``; ``None`` when neither names one (every new text is an ADD).

    Raises:
        UsageError: the model's key is missing (the message suggests ``--no-model``).
        ConfigError: the configuration is invalid, or the model is unpriced under a USD budget.
        MissingExtraError: LiteLLM is needed and not installed.
    """
    from chimera.config import load_config
    from chimera.providers import (
        SCRIPTED_PREFIX,
        TokenBudget,
        budgeted_backend,
        check_credentials,
        load_dotenv_file,
    )

    config = load_config(root)
    name = model or config.models.default
    if not name:
        return None
    if not name.startswith(SCRIPTED_PREFIX):
        load_dotenv_file(root)
        try:
            check_credentials(name, api_base=config.models.api_base_for(name))
        except ChimeraError as exc:
            raise UsageError(f"{exc} (or pass --no-model: every new text is then an ADD)") from exc
    budget = TokenBudget.from_config(config.budget)
    return budgeted_backend(name, config, budget, max_tokens=DECISION_TOKENS)


__all__ = ["DECISION_TOKENS", "memory_backend"]
