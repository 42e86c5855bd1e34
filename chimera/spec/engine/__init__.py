"""The check engine behind ``check_drift``: file selection, text decoding, patterns with
time limits and a multi-pattern prefilter, the Python symbol index, and the session that
batches all of it so each file is read once per run.

Kinds never use these modules directly; they see the :class:`chimera.spec.context.CheckContext`
protocol that :class:`EngineSession` implements.
"""

from __future__ import annotations

from chimera.spec.engine.options import EngineOptions, EngineStats
from chimera.spec.engine.session import EngineSession

__all__ = ["EngineOptions", "EngineSession", "EngineStats"]
