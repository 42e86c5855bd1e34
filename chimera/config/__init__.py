"""Every settings schema of Chimera and its defaults; a leaf above the ground floor.

``[tool.chimera]`` in ``pyproject.toml`` or ``chimera.toml``, parsed by :func:`load_config`
into :class:`ChimeraConfig`. The sections live in this package's modules (``model``: the root
and the run-wide sections; ``fusion``: panels and routing; ``economics``: cascades, effort and
the delegation hierarchy; ``run``: the ProjectOrchestrator's limits). This package imports
only the ground floor (``errors``, ``protocols``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chimera.config.model import (
        AgentConfig,
        BudgetConfig,
        ChimeraConfig,
        ModelPrice,
        ModelsConfig,
        SandboxConfig,
        Section,
        ToolsConfig,
        load_config,
    )

__all__ = [
    "AgentConfig",
    "BudgetConfig",
    "ChimeraConfig",
    "ModelPrice",
    "ModelsConfig",
    "SandboxConfig",
    "Section",
    "ToolsConfig",
    "load_config",
]


def __getattr__(name: str) -> Any:
    # Lazy (PEP 562): `chimera check` imports config.check alone, and the whole schema
    # (config.model and every section) costs ~0.1 s of a warm re-check's start.
    if name in __all__:
        return getattr(importlib.import_module("chimera.config.model"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
