"""The agent's tools: a registry, path confinement and the native tool set.

Public API: :class:`ToolRegistry`, :class:`Workspace`, :func:`native_tools`.
"""

from chimera.tools.native import native_tools
from chimera.tools.registry import ToolRegistry
from chimera.tools.workspace import Workspace

__all__ = ["ToolRegistry", "Workspace", "native_tools"]
