"""Chimera: spec-gated autonomous changes.

A Spec of executable requirements lives beside a project's tests; :func:`check_drift`
evaluates it, the pytest plugin and the ``chimera`` CLI report it, and the agent engine
is accepted only when it passes.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
