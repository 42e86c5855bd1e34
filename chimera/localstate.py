"""The project's local state folder, ``.chimera/``: git-ignored from its first byte.

Everything Chimera keeps for itself beside a checkout — run state, the memory database,
skills, caches, snapshots — lives under ``<root>/.chimera/``. Git must never pick it up: a
routine ``git add -A`` that commits ``.chimera/memory.db`` makes the next run's snapshots fight
the index. So the folder carries its own ``.gitignore`` holding ``*`` (as pytest does for
``.pytest_cache``): no user ``.gitignore`` needs editing, and it is written *before* anything
else in the folder, by whichever command creates it first.

:func:`make_dirs` is the one way Chimera creates folders that may lie under ``.chimera`` (the
atomic writers, the memory store and the audit log call it), so no command can create the
folder without its ignore file. :func:`tracked_files` and :func:`tracked_warning` find files
git already tracks there (committed before the ignore file existed) and say how to untrack
them in one line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

LOCAL_DIR = ".chimera"
"""The name of the local state folder under a project root."""

IGNORE_TEXT = "# Created by Chimera: its local state stays out of git.\n*\n"
"""The content of ``.chimera/.gitignore``: ignore everything in the folder, itself included."""


def ensure_ignored(folder: Path) -> None:
    """Create ``folder`` (a ``.chimera`` folder) with its ``.gitignore`` holding ``*``.

    The ignore file is written atomically and only when absent, so a user's edit is kept.

    Raises:
        OSError: the folder or the file cannot be written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / ".gitignore"
    if marker.exists():
        return
    # Not chimera.atomic (it creates folders through make_dirs, which calls back here).
    tmp = folder / f".gitignore.{os.getpid()}.tmp"
    tmp.write_text(IGNORE_TEXT, encoding="utf-8")
    tmp.replace(marker)


def make_dirs(path: Path) -> Path:
    """``mkdir -p path``, first writing the ignore file of every ``.chimera`` folder on the way.

    Only folders created by this call or on its path count: ``/home/me/proj/.chimera/runs/x``
    makes ``/home/me/proj/.chimera/.gitignore`` before ``runs/x``. Returns ``path``.

    Raises:
        OSError: a folder cannot be created.
    """
    parts = path.parts
    for i, part in enumerate(parts):
        if part == LOCAL_DIR:
            ensure_ignored(Path(*parts[: i + 1]))
    path.mkdir(parents=True, exist_ok=True)
    return path


def tracked_files(root: Path) -> list[str]:
    """Files under ``root/.chimera`` that git tracks (paths relative to ``root``), oldest
    listing order; ``[]`` outside a repository or without git.

    One ``git ls-files`` process (a few milliseconds); its failures count as "none tracked":
    this is advice, never a gate.
    """
    git = shutil.which("git")
    if git is None or not (root / LOCAL_DIR).exists():
        return []
    try:
        proc = subprocess.run(
            [git, "ls-files", "-z", "--", f":(top,literal){LOCAL_DIR}"],
            cwd=root,
            capture_output=True,
            check=False,
            timeout=30,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    return [p for p in proc.stdout.decode("utf-8", errors="replace").split("\0") if p]


def tracked_warning(root: Path) -> str | None:
    """One line saying git tracks files of ``.chimera/`` and how to stop it, or ``None``.

    Such files (typically ``.chimera/memory.db``, committed by a ``git add -A`` before the
    ignore file existed) change on every run, so they show up as modified in every commit
    and pull request; ``git rm -r --cached`` untracks them and keeps the local copies.
    """
    files = tracked_files(root)
    if not files:
        return None
    more = f" and {len(files) - 1} more" if len(files) > 1 else ""
    return (
        f"git tracks {files[0]}{more}, Chimera's local state (it changes on every run); "
        f"stop tracking it and keep the files: git rm -r --cached {LOCAL_DIR} && "
        f"git commit -m 'Stop tracking {LOCAL_DIR}'"
    )
