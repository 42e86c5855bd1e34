"""Shared pieces of the ``chimera`` subcommands: the parser class and small output helpers.

Modules whose name starts with ``_`` are not subcommands; every other module of
:mod:`chimera.cli` is one, and registers itself through ``register(subparsers)``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn, TextIO, TypeAlias

from chimera.errors import UsageError


class CliParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, raised as :class:`UsageError`.

    argparse prints the whole usage block before its error and exits on its own; the CLI
    promises one line on stderr and exit status 2, decided in :func:`chimera.cli.main`.
    """

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


Subparsers: TypeAlias = "argparse._SubParsersAction[CliParser]"
"""What ``register(subparsers)`` of a subcommand module receives."""


def use_color(stream: TextIO) -> bool:
    """Whether to colour output: a terminal, and neither ``NO_COLOR`` nor ``TERM=dumb``."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


_COLORS = {"green": "32", "red": "31", "yellow": "33", "bold": "1", "dim": "2"}


def paint(text: str, color: str, *, enabled: bool) -> str:
    return f"\x1b[{_COLORS[color]}m{text}\x1b[0m" if enabled else text


def err(line: str) -> None:
    """One line on stderr."""
    sys.stderr.write(line.rstrip("\n") + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically (temp + fsync + rename).

    Kept for subcommand modules; the recipe lives in :func:`chimera.atomic.atomic_write_text`.

    Raises:
        OSError: the directory is not writable (the caller reports it in one line).
    """
    from chimera.atomic import atomic_write_text

    atomic_write_text(path, text)


def resolve_root(value: str | None) -> Path:
    """``--root`` (default: the working directory), resolved.

    Raises:
        UsageError: it is not a directory.
    """
    root = Path(value) if value else Path.cwd()
    if not root.is_dir():
        raise UsageError(f"--root {value}: not a directory")
    return root.resolve()


def validate_config(root: Path) -> None:
    """Validate the configuration of the project at ``root`` (``[tool.chimera]`` or
    ``chimera.toml``), for a command that works on a project without using every setting:
    a typo is refused on every surface, never silently ignored.

    Raises:
        ConfigError: ``file: key: message``, with "did you mean" for an unknown key.
    """
    from chimera.config import load_config

    load_config(root)


def warn_tracked_state(root: Path) -> None:
    """One warning line on stderr when git tracks files under ``root/.chimera`` (Chimera's
    local state), with the command that untracks them; nothing otherwise."""
    from chimera.localstate import tracked_warning

    line = tracked_warning(root)
    if line:
        err(f"chimera: warning: {line}")


def shown(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when it lies under it (POSIX separators), else as is."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def memory_line(report: Mapping[str, Any] | None) -> str:
    """One line on what a run recalled and remembered (its summary's ``memory`` entry:
    ``{"recalled": [ids], "remembered": [ids], "tainted": bool}``); '' without memory. An id
    without the store's shape is shown as ``(malformed id)``: a tainted item's id is data
    from an unverified journal line, and a terminal line has no fence to hold it."""
    if not report:
        return ""
    from chimera.memory.render import shown_id

    def ids(key: str) -> str:
        found = [shown_id(str(i)) for i in report.get(key) or ()]
        more = f", +{len(found) - 5} more" if len(found) > 5 else ""
        return f"{len(found)}" + (f" ({', '.join(found[:5])}{more})" if found else "")

    taint = "; a tainted memory was read" if report.get("tainted") else ""
    return f"memory: recalled {ids('recalled')}, remembered {ids('remembered')}{taint}"
