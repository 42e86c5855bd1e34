"""Every settings schema of Chimera and its defaults; a leaf above the ground floor.

``[tool.chimera]`` in ``pyproject.toml`` or ``chimera.toml``, parsed by :func:`load_config`
into :class:`ChimeraConfig`. The sections live in this package's modules (``model``: the root
and the run-wide sections; ``fusion``: panels and routing; ``economics``: cascades, effort and
the delegation hierarchy; ``run``: the ProjectOrchestrator's limits). This package imports
only the ground floor (``errors``, ``protocols``).
"""

from __future__ import annotations

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
