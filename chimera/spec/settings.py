"""The Spec engine's side of ``[tool.chimera.check]``: the settings (defined in
:mod:`chimera.config.check`, re-exported here for the CLI and the plugin) turned into the
engine's options."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from chimera.config.check import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_REGEX_TIMEOUT_S,
    CheckSettings,
    load_check_settings,
)

if TYPE_CHECKING:
    from chimera.spec.engine.options import EngineOptions

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_REGEX_TIMEOUT_S",
    "CheckSettings",
    "engine_options",
    "load_check_settings",
]


def engine_options(settings: CheckSettings, base: EngineOptions | None = None) -> EngineOptions:
    """``base`` (default: the engine's defaults) with the settings' limits applied."""
    from chimera.spec.engine.options import EngineOptions

    return dataclasses.replace(
        base or EngineOptions(),
        max_file_bytes=settings.max_file_bytes,
        pattern_timeout_s=settings.regex_timeout,
    )
