"""Refuse a run whose pytest configuration an option value of this plugin chose.

pytest finds its rootdir and configuration file (``pytest.ini``, ``pyproject.toml``, ...)
*before* it loads plugins installed by entry point, from a first parse of the command line
that does not know their options yet: in ``--chimera-root DIR`` the ``DIR`` is then read as a
test path, and the common folder of the test paths decides where the configuration is looked
for (a known pytest limitation: pytest-dev/pytest#8846). With ``--chimera-root ../other`` a run
can silently take ``../other``'s own ``addopts``, ``testpaths`` and plugins. No plugin can
change that first parse, so this module redoes pytest's search without this plugin's option
values and refuses the run, in one line naming ``--chimera-root=DIR``, when the answers differ.
The ``=`` spelling is one token, which pytest's first parse sets aside as an unknown option.
"""

from __future__ import annotations

import inspect
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

VALUE_OPTIONS = ("--chimera-spec", "--chimera-root", "--chimera-max-evidence")
"""This plugin's options that take a value (a separate token is a test path to pytest's first
parse)."""


def separate_values(args: Sequence[str]) -> list[tuple[str, str]]:
    """``(option, value)`` for each of :data:`VALUE_OPTIONS` given as two tokens in ``args``
    (up to a ``--``, after which every token is a test path)."""
    out: list[tuple[str, str]] = []
    for i, token in enumerate(args):
        if token == "--":
            break
        if token in VALUE_OPTIONS and i + 1 < len(args):
            out.append((token, args[i + 1]))
    return out


def _setup_without_plugin_values(config: pytest.Config) -> tuple[Path, Path | None] | None:
    """The rootdir and configuration file pytest finds from the test paths as parsed with
    this plugin's options known; ``None`` when pytest's search cannot be called (its private
    signature changed)."""
    try:
        from _pytest.config.findpaths import determine_setup
    except ImportError:  # pragma: no cover - pytest moved it
        return None
    ns = config.known_args_namespace
    given: dict[str, Any] = {
        "inifile": getattr(ns, "inifilename", None),
        "override_ini": getattr(ns, "override_ini", None),
        "args": list(getattr(ns, "file_or_dir", None) or ()),
        "rootdir_cmd_arg": getattr(ns, "rootdir", None) or None,
        "invocation_dir": config.invocation_params.dir,
    }
    try:
        accepted = inspect.signature(determine_setup).parameters
        found = determine_setup(**{k: v for k, v in given.items() if k in accepted})
    except Exception:  # pragma: no cover - a pytest whose search works differently
        return None
    return Path(found[0]), None if found[1] is None else Path(found[1])


def misread_setup(config: pytest.Config) -> str | None:
    """Why this run's configuration was chosen by one of this plugin's option values (one
    line), or ``None`` when it was not."""
    args = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *config.invocation_params.args]
    pairs = separate_values(args)
    if not pairs:
        return None
    expected = _setup_without_plugin_values(config)
    if expected is None:
        return None
    root, ini = expected
    actual_ini = config.inipath
    if (root, ini) == (config.rootpath, actual_ini):
        return None
    option, value = next(((o, v) for o, v in pairs if o == "--chimera-root"), pairs[0])
    return (
        f"{option} {value}: pytest read {value!r} as a test path before Chimera's plugin "
        f"loaded, so it took its configuration from {actual_ini or 'no file'} (rootdir "
        f"{config.rootpath}) instead of {ini or 'no file'} (rootdir {root}); write "
        f"{option}={value} (one token)"
    )
