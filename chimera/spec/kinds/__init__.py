"""The four built-in requirement kinds.

They register through the same ``chimera_requirement_kinds`` hook a third-party plugin uses.
"""

from __future__ import annotations

from chimera.spec.kinds.command import Command
from chimera.spec.kinds.defines import Defines, SymbolKind
from chimera.spec.kinds.text import Absent, Contains, MatchMode

__all__ = ["Absent", "Command", "Contains", "Defines", "MatchMode", "SymbolKind"]
