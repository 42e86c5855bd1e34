"""The Spec engine's limits a project may set: ``[tool.chimera.check]`` in ``pyproject.toml``,
or ``[check]`` in ``chimera.toml``.

Example (``pyproject.toml``)::

    [tool.chimera.check]
    max_file_bytes = 16777216     # selected files larger than this are not read (fail closed)
    regex_timeout = 5.0           # seconds one pattern may run on one file

:class:`CheckSettings` is the section's model (``chimera.config.ChimeraConfig.check`` holds
it); :func:`load_check_settings` returns it after validating the whole configuration (a typo
in any section stops ``chimera check`` and the pytest plugin as it stops a run), importing the
whole schema only when the configuration has more than this section. The Spec engine turns
the settings into its options with :func:`chimera.spec.settings.engine_options`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chimera.config.limits import DEFAULT_MAX_FILE_BYTES, DEFAULT_REGEX_TIMEOUT_S
from chimera.config.problems import describe
from chimera.errors import ConfigError

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_REGEX_TIMEOUT_S",
    "CheckSettings",
    "load_check_settings",
]


class CheckSettings(BaseModel):
    """``[tool.chimera.check]``: limits of every Spec check (``chimera check``, the plugin, runs).

    Attributes:
        max_file_bytes: bytes; a larger selected file is reported as over the size limit and
            never helps a requirement pass (``absent`` turns red naming it).
        regex_timeout: seconds one pattern may run on one file where the ``regex`` module
            searches it (wall clock in the main thread on POSIX, else CPU time); past it the
            requirement is ``error``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, gt=0)
    regex_timeout: float = Field(default=DEFAULT_REGEX_TIMEOUT_S, gt=0, le=3600)


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a mapping.

    Raises:
        ConfigError: ``file: message`` for invalid TOML, an unreadable file or non-UTF-8 text.
    """
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path.name}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path.name}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path.name}: not UTF-8 text: {exc.reason}") from exc


def config_table(root: Path) -> tuple[Any, str, str]:
    """Chimera's configuration table at ``root``: ``(table or None, file name, key prefix)``
    — ``[tool.chimera]`` of ``pyproject.toml`` (prefix ``tool.chimera.``) or the top level of
    ``chimera.toml`` (prefix ``""``). The one place both loaders find it.

    Raises:
        ConfigError: unreadable TOML, or configuration in both files.
    """
    pyproject = root / "pyproject.toml"
    standalone = root / "chimera.toml"
    table: Any = None
    file, prefix = "", ""
    if pyproject.is_file():
        tool = read_toml(pyproject).get("tool", {})
        if isinstance(tool, dict) and "chimera" in tool:
            table, file, prefix = tool["chimera"], pyproject.name, "tool.chimera."
    if standalone.is_file():
        if table is not None:
            raise ConfigError(
                f"{standalone.name}: configuration is also in pyproject.toml [tool.chimera]; "
                "keep one of them"
            )
        table, file, prefix = read_toml(standalone), standalone.name, ""
    return table, file, prefix


def load_check_settings(root: Path) -> CheckSettings:
    """The ``check`` section of the configuration of the project at ``root``, after the whole
    configuration is validated.

    Looks where :func:`chimera.config.load_config` looks (``chimera.toml`` or
    ``[tool.chimera]`` in ``pyproject.toml``, not both); defaults when there is no
    configuration. A configuration with more than a ``check`` section is validated by
    :func:`chimera.config.load_config` (imported only then: the whole schema costs tens of
    milliseconds), so ``chimera check`` and the pytest plugin refuse a typo anywhere —
    ``[chek]``, ``[modles]``, ``[models] defualt`` — exactly as the agent commands do.

    Raises:
        ConfigError: invalid TOML, configuration in both files, or an invalid value or
            unknown key anywhere, as ``file: key: message`` with "did you mean"
            (``pyproject.toml: tool.chimera.chek: unknown key (did you mean 'check'?)``).
    """
    table, file, base = config_table(root)
    if table is None:
        return CheckSettings()
    if not isinstance(table, dict):
        raise ConfigError(f"{file}: {base.rstrip('.')}: must be a table")
    if set(table) - {"check"}:
        from chimera.config.model import load_config

        return load_config(root).check
    prefix = f"{base}check"
    section = table.get("check")
    if section is None:
        return CheckSettings()
    if not isinstance(section, dict):
        raise ConfigError(f"{file}: {prefix}: must be a table")
    try:
        return CheckSettings.model_validate(section)
    except ValidationError as exc:
        raise ConfigError(describe(exc, file, f"{prefix}.", CheckSettings)) from exc
