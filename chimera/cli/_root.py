"""Which tree ``chimera check`` checks when no ``--root`` is given (stdlib only: the replay
of :mod:`chimera.cli._replay` asks it before anything heavy is imported)."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["find_root"]


def find_root(cwd: Path) -> tuple[Path, str]:
    """The tree ``chimera check`` checks when no ``--root`` is given, and why, in words.

    From ``cwd`` upwards: the nearest directory holding ``specs/``, not above the git
    repository's root (so a project nested in a repository, such as a bundled example, is its
    own root); else the repository's root; outside a repository, the nearest directory with
    ``pyproject.toml``; else ``cwd`` itself.
    """
    cwd = cwd.absolute()
    if (cwd / "specs").is_dir():
        # Asked first, so the common case costs no git process (the replay's start).
        return cwd, "the nearest directory with specs/"
    top = _git_toplevel(cwd)
    for directory in (cwd, *cwd.parents):
        if (directory / "specs").is_dir():
            return directory, "the nearest directory with specs/"
        if top is not None and directory == top:
            return directory, "the root of the git repository"
    if top is None:
        for directory in (cwd, *cwd.parents):
            if (directory / "pyproject.toml").is_file():
                return directory, "the nearest directory with pyproject.toml"
    return cwd, "the current directory"


def _git_toplevel(cwd: Path) -> Path | None:
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = proc.stdout.strip()
    if proc.returncode != 0 or not top:
        return None
    # git prints the resolved path; keep the spelling of cwd's own ancestors when they match.
    resolved = Path(top)
    for directory in (cwd, *cwd.parents):
        if directory.resolve() == resolved:
            return directory
    return resolved
