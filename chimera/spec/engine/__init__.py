"""The check engine behind ``check_drift``: file selection, text decoding, patterns with
time limits and a multi-pattern prefilter, the Python symbol index, and the session that
batches all of it so each file is read once per run.

Kinds never use these modules directly; they see the
:class:`chimera.spec.check_context.CheckContext` protocol that :class:`EngineSession` implements.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chimera.spec.engine.options import EngineOptions, EngineStats
    from chimera.spec.engine.session import EngineSession

__all__ = ["EngineOptions", "EngineSession", "EngineStats"]

_HOMES = {"EngineOptions": "options", "EngineStats": "options", "EngineSession": "session"}


def __getattr__(name: str) -> Any:
    # Lazy (PEP 562): the replay of `chimera check` imports the light modules of this package
    # (reports, files) and must not pay for the session (regex, the prefilter, the kinds).
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
