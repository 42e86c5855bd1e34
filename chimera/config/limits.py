"""The defaults of ``[tool.chimera.check]``'s limits, importable without pydantic.

The Spec engine's options (:mod:`chimera.spec.engine.options`) take their defaults from here,
so a module that only needs the engine's plain data (the replay of ``chimera check``) does not
pay for the settings' schema; :mod:`chimera.config.check` re-exports them.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_FILE_BYTES", "DEFAULT_REGEX_TIMEOUT_S"]

DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
"""A selected file larger than this (bytes) is not read, and never helps a requirement pass."""

DEFAULT_REGEX_TIMEOUT_S = 2.0
"""Time limit (seconds) of one pattern over one file; past it the requirement is ``error``."""
