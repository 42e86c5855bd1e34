"""Atomic file writes: a reader sees the old content or the new, never a torn file.

Run state, snapshots' manifests and spec edits go through here. The recipe is the usual one
(write a temporary file in the same directory, fsync it, ``os.replace`` it over the target,
fsync the directory) so a crash or ``kill -9`` at any instant leaves a complete file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from chimera.localstate import make_dirs


def _fsync_dir(directory: Path) -> None:
    # Some filesystems refuse to open directories; the rename is still atomic there.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (parents are created).

    Args:
        path: the target file.
        data: the new content.
        mode: permission bits for the new file (default: keep the old file's, else 0o644).

    Raises:
        OSError: the directory is not writable or the disk is full (the target is untouched).
    """
    make_dirs(path.parent)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.chmod(mode)
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def atomic_write_json(path: Path, value: Any, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``value`` as indented, key-sorted JSON, atomically."""
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"
    atomic_write_text(path, text, mode=mode)
