"""Provider keys: an explicit ``.env`` loader and one-line "missing key" errors.

Keys live in the environment (the CI secret store, a shell profile) or in a ``.env`` file in
the project root. Chimera reads that file only when asked, with python-dotenv, and never lets
it override a variable already set; LiteLLM's own implicit ``.env`` reading is switched off
(see :mod:`chimera.providers.lazy_litellm`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from chimera.errors import AuthenticationError, MissingExtraError
from chimera.providers.lazy_litellm import import_litellm

__all__ = ["check_credentials", "load_dotenv_file", "missing_key_message"]

_log = logging.getLogger(__name__)

# Names LiteLLM lists that hold credentials; others (OLLAMA_API_BASE, AZURE_API_VERSION, ...)
# have defaults or are reported by the provider itself with a clearer message.
_CREDENTIAL_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


def load_dotenv_file(root: Path) -> list[str]:
    """Load ``root/.env`` into ``os.environ`` without overriding variables already set.

    Returns:
        The names this call set, sorted (empty when there is no ``.env``). Values are never
        logged or returned.

    Raises:
        MissingExtraError: a ``.env`` exists but python-dotenv (``agent`` extra) is missing.
    """
    path = root / ".env"
    if not path.is_file():
        return []
    try:
        from dotenv import dotenv_values
    except ImportError as exc:
        raise MissingExtraError("loading keys from .env", "agent") from exc
    values = dotenv_values(path)
    loaded: list[str] = []
    for name, value in values.items():
        if value is None or name in os.environ:
            continue
        os.environ[name] = value
        loaded.append(name)
    _log.debug("loaded %d variable(s) from %s", len(loaded), path)
    return sorted(loaded)


def missing_key_message(model: str, names: list[str]) -> str:
    """The one-line error for a model whose credentials are not in the environment."""
    noun = "variables" if len(names) > 1 else "variable"
    return (
        f"model '{model}' needs the environment {noun} {', '.join(names)}: set "
        f"{'them' if len(names) > 1 else 'it'}, or put {'them' if len(names) > 1 else 'it'} "
        "in the project's .env"
    )


def check_credentials(
    model: str, *, api_key: str | None = None, api_base: str | None = None
) -> None:
    """Refuse early, with one line, when ``model``'s key is not available.

    Uses ``litellm.validate_environment``, which knows each provider's variable names.

    Raises:
        AuthenticationError: a credential variable the model needs is unset.
    """
    if api_key:
        return
    litellm = import_litellm()
    try:
        report = litellm.validate_environment(model=model, api_key=api_key, api_base=api_base)
    except Exception as exc:  # an unknown provider: the call itself will say so
        _log.debug("validate_environment(%s) failed: %s", model, exc)
        return
    missing = [
        str(name)
        for name in report.get("missing_keys", [])
        if any(marker in str(name).upper() for marker in _CREDENTIAL_MARKERS)
    ]
    if missing:
        raise AuthenticationError(missing_key_message(model, missing))
