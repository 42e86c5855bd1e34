"""Finding spec files (``discover_spec_files``) and showing their paths in problems."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from chimera.errors import UsageError

SPEC_SUFFIXES = (".yaml", ".yml")
"""File suffixes a spec directory contributes."""

PathArg = str | os.PathLike[str]


# --------------------------------------------------------------------------- discovery


def _as_path_list(paths: PathArg | Sequence[PathArg]) -> list[Path]:
    if isinstance(paths, str | os.PathLike):
        return [Path(paths)]
    return [Path(p) for p in paths]


def discover_spec_files(paths: PathArg | Sequence[PathArg]) -> list[Path]:
    """The spec files named by ``paths``, in argument order, each once.

    A file is taken as is (whatever its suffix). A directory contributes every ``*.yaml`` /
    ``*.yml`` file under it, recursively, sorted by relative path, skipping hidden
    directories and hidden files (names starting with '.') below it and not following
    symlinked directories (no loops).

    Raises:
        UsageError: a path does not exist, or is neither a file nor a directory.
    """
    found: list[Path] = []
    seen: set[str] = set()

    def add(path: Path) -> None:
        key = os.path.normcase(os.path.realpath(path))
        if key not in seen:
            seen.add(key)
            found.append(path)

    for path in _as_path_list(paths):
        if path.is_dir():
            for child in _walk_spec_dir(path):
                add(child)
        elif path.is_file():
            add(path)
        elif path.exists() or path.is_symlink():
            kind = "a broken symlink" if not path.exists() else "not a file or directory"
            raise UsageError(f"spec path {path.as_posix()} is {kind}")
        else:
            raise UsageError(f"spec path not found: {path.as_posix()}")
    return found


def _walk_spec_dir(directory: Path) -> list[Path]:
    files: list[tuple[tuple[str, ...], Path]] = []
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        base = Path(dirpath)
        for name in filenames:
            if name.startswith(".") or not name.endswith(SPEC_SUFFIXES):
                continue
            candidate = base / name
            # A broken link stays in the list: reading it reports the problem, so its
            # requirements never vanish silently.
            if candidate.is_file() or (candidate.is_symlink() and not candidate.exists()):
                files.append((candidate.relative_to(directory).parts, candidate))
    files.sort(key=lambda item: item[0])
    return [p for _, p in files]


def display_path(path: Path, cwd: Path | None = None) -> str:
    """``path`` as shown in problems: relative to ``cwd`` when under it, else absolute.

    Always POSIX separators, so messages read the same on every OS.
    """
    # normpath, not resolve(): a symlinked spec directory keeps the name the user gave it.
    absolute = Path(os.path.normpath(Path(path).absolute()))
    try:
        base = Path(os.path.normpath((cwd if cwd is not None else Path.cwd()).absolute()))
    except OSError:  # the working directory was removed
        return absolute.as_posix()
    try:
        return absolute.relative_to(base).as_posix()
    except ValueError:
        return absolute.as_posix()
