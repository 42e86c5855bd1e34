"""Version managers' shims inside the sandbox, and why a command is not found there.

pyenv, rbenv, nodenv, asdf and mise put a ``shims`` folder on ``PATH``: each shim is a small
script (or a symlink to the manager's binary) that asks the manager which installed version
to run. The strict sandbox shows the home folder as an empty tmpfs and only the ``bin``
folders of ``PATH`` under it (:func:`chimera.sandbox.layout.toolchain_paths`), so a shim is
found but its manager is not: ``python3 -m unittest`` exits 127 inside while it works outside.

:func:`manager_paths` finds what such a manager needs and shows it read-only:

* a ``PATH`` folder named ``shims`` under the home folder: its parent is the manager's root
  (``~/.pyenv``, ``~/.rbenv``, ``~/.nodenv``, ``~/.asdf``, ``~/.local/share/mise``) holding
  the manager and its installed versions; the folder of each symlinked shim's target too
  (mise's shims point at the ``mise`` binary);
* ``~/.tool-versions``, the global version file of asdf (and mise), when it exists: tool
  names and versions only.

Never shown: mise's global configuration (``~/.config/mise``), which may hold ``[env]``
secrets — keep tool versions in the repository (``.tool-versions``, ``.mise.toml``).
Credential stores under a shown folder are masked as for every toolchain folder.

:func:`missing_program_note` is the other half: when a command exits 127 inside the sandbox,
it names a program the shell could not find (or could not run) that does exist outside, in
one line with the reason.
"""

# ruff: noqa: PTH117

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

SHIM_DIR = "shims"
"""The name pyenv, rbenv, nodenv, asdf and mise all give their folder of shims."""

HOME_VERSION_FILES: tuple[str, ...] = (".tool-versions",)
"""Global version files read from the home folder (asdf, mise); plain text, no secrets."""

# "sh: 1: python3: not found" (dash), "bash: line 1: foo: command not found",
# "/root/.pyenv/shims/python3: line 12: /root/.pyenv/libexec/pyenv: No such file or directory"
_NOT_FOUND = re.compile(
    r"(?P<name>[^\s:]+): (?:command )?not found|(?P<path>/[^\s:]+): No such file or directory"
)


def _under(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def manager_paths(
    *, home: Path | None, workspace: Path, path_env: str | None = None
) -> tuple[Path, ...]:
    """What version managers on ``PATH`` need inside the sandbox (resolved, existing), to be
    shown read-only: see the module docstring. ``()`` without a home folder. Nothing inside
    ``workspace`` or above it is returned (the workspace has its own mount).

    Args:
        home: the home folder (resolved), empty inside the sandbox.
        workspace: the sandbox's workspace (resolved).
        path_env: the ``PATH`` to read (default: this process's).
    """
    if home is None:
        return ()
    if path_env is None:
        path_env = os.environ.get("PATH", "")
    found: list[Path] = []
    for raw in path_env.split(os.pathsep):
        if not raw or not os.path.isabs(raw):
            continue
        try:
            folder = Path(raw).resolve()
        except (OSError, RuntimeError):
            continue
        if folder.name != SHIM_DIR or not folder.is_dir() or not _under(folder, home):
            continue
        root = folder.parent
        if root != home:
            found.append(root)
        found.extend(_shim_targets(folder, home))
    for name in HOME_VERSION_FILES:
        path = home / name
        if path.is_file() and not path.is_symlink():
            found.append(path)
    return tuple(
        dict.fromkeys(
            p
            for p in found
            if p != home
            and _under(p, home)
            and not _under(p, workspace)
            and not _under(workspace, p)
        )
    )


def _shim_targets(folder: Path, home: Path) -> list[Path]:
    """The folders of the targets of symlinked shims (mise: the ``mise`` binary's folder)."""
    targets: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return targets
    for entry in entries[:10_000]:
        if not entry.is_symlink():
            continue
        try:
            target = Path(entry.path).resolve().parent
        except (OSError, RuntimeError):
            continue
        if target.is_dir() and _under(target, home) and target not in targets:
            targets.append(target)
    return targets


def _names(command: str | Sequence[str], output: str) -> list[str]:
    """Programs (names or absolute paths) a 127 may be about: those the shell or a shim
    reported missing, then the command's own program."""
    names: list[str] = []
    for match in _NOT_FOUND.finditer(output):
        names.append(match.group("name") or match.group("path"))
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
    else:
        words = list(command)
    first = next((w for w in words if "=" not in w.partition("/")[0]), "")
    if first:
        names.append(first)
    return list(dict.fromkeys(n for n in names if n and n not in ("sh", "bash", "line")))


def missing_program_note(
    command: str | Sequence[str],
    output: str,
    *,
    home: Path | None,
    shown: Sequence[Path],
    path_env: str | None = None,
) -> str | None:
    """One line explaining a 127 inside the sandbox, or ``None`` when nothing missing there
    exists outside.

    Args:
        command: the command as run (shell string or argv).
        output: its output (the shell's "not found" lines).
        home: the home folder (empty inside the sandbox).
        shown: the folders and files shown inside the sandbox (read-only and writable).
        path_env: the ``PATH`` outside (default: this process's).
    """
    if path_env is None:
        path_env = os.environ.get("PATH", "")
    for name in _names(command, output):
        if os.path.isabs(name):
            outside = name if Path(name).exists() else None
        elif "/" in name:
            continue  # relative to the working directory: the same inside and out
        else:
            outside = shutil.which(name, path=path_env)
        if outside is None:
            continue
        real = Path(outside).resolve()
        if any(_under(real, s) for s in shown) and not (home and _under(real, home)):
            continue  # shown inside: missing for another reason (a library, a loader)
        if home is not None and _under(real, home):
            why = (
                "it lies under the home folder, which is empty inside the sandbox (only "
                "PATH's bin folders and version managers' shims folders are shown)"
            )
        else:
            why = "its folder is not among the folders the sandbox shows"
        where = outside if str(real) == outside else f"{outside} -> {real}"
        return (
            f"chimera: '{name}' is not found inside the sandbox but is outside ({where}): "
            f"{why}; put the folder that holds it on PATH (PATH's folders are shown "
            "read-only), or install it outside the home folder"
        )
    return None
