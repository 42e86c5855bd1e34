"""The one place LiteLLM is imported, lazily.

Importing LiteLLM costs seconds and, left to its defaults, fetches the model cost map from
the network and reads ``./.env``. Chimera sets ``LITELLM_LOCAL_MODEL_COST_MAP=True`` (use the
cost map bundled with the installed release) and ``LITELLM_MODE=PRODUCTION`` (no implicit
``.env`` loading) before the first import; a user who set either variable keeps their value.
Keys in ``.env`` are loaded explicitly by :func:`chimera.providers.keys.load_dotenv_file`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
import warnings
from types import ModuleType

from chimera.errors import MissingExtraError

_lock = threading.Lock()
_module: ModuleType | None = None


def litellm_available() -> bool:
    """True when LiteLLM is installed (without importing it)."""
    return _module is not None or importlib.util.find_spec("litellm") is not None


def import_litellm(feature: str = "the model gateway") -> ModuleType:
    """Import LiteLLM once, with the network and ``.env`` side effects switched off.

    Raises:
        MissingExtraError: LiteLLM is not installed (it ships in the ``agent`` extra).
    """
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
            # Warnings raised while LiteLLM's modules load (pydantic schema notes about its
            # own types) concern LiteLLM, not the caller; under `-W error` they would make
            # the import fail. The import runs once, under this lock.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    module = importlib.import_module("litellm")
                except ImportError as exc:
                    raise MissingExtraError(feature, "agent") from exc
            # Pydantic notes about LiteLLM's own TypedDicts (modules LiteLLM loads lazily on
            # a first call) would otherwise reach every CLI user's terminal.
            warnings.filterwarnings(
                "ignore",
                message=r".* using the `ReadOnly` qualifier",
                category=UserWarning,
                module=r"pydantic\._internal\._generate_schema",
            )
            # LiteLLM prints provider hints to stdout on some failures; Chimera reports errors
            # itself, so the hints would only corrupt CLI output.
            setattr(module, "suppress_debug_info", True)  # noqa: B010 - typed stub lacks it
            _module = module
    return _module
