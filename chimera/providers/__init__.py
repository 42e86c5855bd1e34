"""The provider gateway: one protocol, LiteLLM behind it, budgets in front of it.

Importing this package never imports LiteLLM (that happens on the first real call), so the
pytest plugin and ``chimera check`` stay fast.

* :class:`LiteLLMBackend`: any LiteLLM model; errors mapped onto :mod:`chimera.errors`.
* :class:`ScriptedBackend`: replays a script of turns (``--model scripted:PATH``).
* :class:`TokenBudget` / :class:`BudgetedBackend`: reserve-before-send budgets.
* :func:`make_backend`: a model name to a backend; :func:`count_tokens`, :func:`cost_usd`,
  :func:`register_prices`: LiteLLM's counter and cost map; :func:`load_dotenv_file`: keys.
"""

from __future__ import annotations

from chimera.protocols import Completion, Purpose, SupportsComplete, ToolCall, Usage
from chimera.providers.budget import BudgetedBackend, Remaining, Reservation, TokenBudget
from chimera.providers.factory import SCRIPTED_PREFIX, budgeted_backend, make_backend
from chimera.providers.keys import check_credentials, load_dotenv_file, missing_key_message
from chimera.providers.litellm_backend import LiteLLMBackend, map_litellm_error
from chimera.providers.pricing import (
    completion_cost_usd,
    cost_usd,
    count_tokens,
    is_priced,
    register_prices,
)
from chimera.providers.scripted import ScriptedBackend, ScriptedCall, ScriptTurn

__all__ = [
    "SCRIPTED_PREFIX",
    "BudgetedBackend",
    "Completion",
    "LiteLLMBackend",
    "Purpose",
    "Remaining",
    "Reservation",
    "ScriptTurn",
    "ScriptedBackend",
    "ScriptedCall",
    "SupportsComplete",
    "TokenBudget",
    "ToolCall",
    "Usage",
    "budgeted_backend",
    "check_credentials",
    "completion_cost_usd",
    "cost_usd",
    "count_tokens",
    "is_priced",
    "load_dotenv_file",
    "make_backend",
    "map_litellm_error",
    "missing_key_message",
    "register_prices",
]
