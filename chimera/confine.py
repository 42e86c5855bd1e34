"""Paths built from untrusted parts, and files read from folders another job filled.

Two rules, one place each:

* :func:`confined` is the one way to build a path from parts that came from somewhere less
  trusted (a run id from a PR marker, a name in an artifact): every part must be a plain
  relative path, and the joined result, once resolved (links followed), must lie under the
  root — proved before any folder is made, so ``../../../victim`` never becomes a directory.
* :func:`read_regular` and :func:`copy_tree` read what such a folder holds without following
  links: every component is opened with ``O_NOFOLLOW`` relative to the one before it, so a
  link planted in an artifact (``summary.md -> /proc/self/environ``) is refused, never read.

Both raise :class:`~chimera.errors.UnsafePathError` with one line naming the path and why.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

from chimera.errors import UnsafePathError

__all__ = ["confined", "copy_tree", "read_regular"]

# Control characters (newlines included) never belong in a name built from untrusted parts.
_CONTROL = frozenset(chr(c) for c in range(32)) | {"\x7f"}
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _parts(part: str, what: str) -> list[str]:
    if not isinstance(part, str) or not part:
        raise UnsafePathError(f"{what}: an empty name")
    bad = sorted({repr(c) for c in part if c in _CONTROL})
    if bad:
        raise UnsafePathError(f"{what}: {part[:80]!r} holds control characters ({bad[0]})")
    if "\\" in part:
        raise UnsafePathError(f"{what}: {part[:80]!r} holds a backslash")
    pure = PurePosixPath(part)
    if pure.is_absolute():
        raise UnsafePathError(f"{what}: {part[:80]!r} is an absolute path")
    if ".." in pure.parts:
        raise UnsafePathError(f"{what}: {part[:80]!r} climbs out with '..'")
    return [p for p in pure.parts if p not in ("", ".")]


def confined(root: Path, *parts: str, what: str = "path") -> Path:
    """``root`` joined with ``parts``, resolved, and proved to lie under ``root`` (or be it).

    Each part is a relative path with no ``..`` component, no backslash and no control
    character; the result is resolved (existing links followed), so a link inside ``root``
    that points out of it is caught too. Nothing is created. ``what`` names the value in the
    error (``"run id from PR #7's marker"``).

    Returns:
        The resolved path, under ``root.resolve()``.

    Raises:
        UnsafePathError: a part is malformed, or the result leaves ``root``.
    """
    names: list[str] = []
    for part in parts:
        names += _parts(part, what)
    base = Path(root).resolve()
    target = base.joinpath(*names).resolve()
    if target != base and base not in target.parents:
        shown = "/".join(parts)[:120]
        raise UnsafePathError(f"{what}: {shown!r} resolves to {target}, outside {base}")
    return target


def _open_dir(root: Path, names: list[str], what: str) -> int:
    """A descriptor of ``root/names...``, each component opened without following links."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in names:
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _refusal(exc, what, name) from exc
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refusal(exc: OSError, what: str, name: str) -> OSError | UnsafePathError:
    # ELOOP: a link where O_NOFOLLOW forbids one; ENOTDIR: a file (or link) where a folder was
    # expected. Anything else (a missing file) is the caller's ordinary OSError.
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return UnsafePathError(f"{what}: {name!r} is a link or not a folder; it is not followed")
    return exc


def read_regular(root: Path, rel: str, *, limit: int | None = None, what: str = "") -> bytes | None:
    """The bytes of regular file ``root/rel``, read without following any link below ``root``.

    Args:
        root: the trusted folder (an artifact's download folder); itself may be anything.
        rel: the file's path under ``root`` (``"run/state.json"``).
        limit: refuse a file larger than this many bytes (``None``: no limit).
        what: how errors name the file (default ``root/rel``).

    Returns:
        The content, or ``None`` when there is no such file.

    Raises:
        UnsafePathError: a component is a link, the file is not a regular file, it is over
            ``limit``, or ``rel`` is malformed.
        OSError: the file exists but cannot be read.
    """
    shown = what or str(Path(root) / rel)
    names = _parts(rel, shown)
    if not names:
        raise UnsafePathError(f"{shown}: names the folder itself, not a file")
    try:
        fd = _open_dir(Path(root), names[:-1], shown)
    except FileNotFoundError:
        return None
    try:
        try:
            ffd = os.open(names[-1], _FILE_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            refused = _refusal(exc, shown, names[-1])
            raise refused from exc
    finally:
        os.close(fd)
    try:
        info = os.fstat(ffd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePathError(f"{shown}: not a regular file; it is not read")
        if limit is not None and info.st_size > limit:
            raise UnsafePathError(f"{shown}: {info.st_size} bytes, over the limit of {limit}")
        chunks: list[bytes] = []
        while chunk := os.read(ffd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(ffd)


def copy_tree(src: Path, dest: Path, *, what: str = "") -> None:
    """Copy folder ``src`` to ``dest`` (which must not exist), refusing any link or special
    file inside ``src`` before anything is copied — never following one.

    Raises:
        UnsafePathError: ``src`` holds a link, a FIFO, a device or a socket (named).
        OSError: a file cannot be read or written.
    """
    shown = what or str(src)
    files: list[str] = []
    folders: list[str] = []

    def walk(rel: str) -> None:
        with os.scandir(Path(src) / rel if rel else src) as entries:
            for entry in entries:
                name = f"{rel}/{entry.name}" if rel else entry.name
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISLNK(mode):
                    raise UnsafePathError(f"{shown}: {name!r} is a link; links are not copied")
                if stat.S_ISDIR(mode):
                    folders.append(name)
                    walk(name)
                elif stat.S_ISREG(mode):
                    files.append(name)
                else:
                    raise UnsafePathError(f"{shown}: {name!r} is not a regular file")

    if Path(src).is_symlink() or not Path(src).is_dir():
        raise UnsafePathError(f"{shown}: not a folder (or a link to one)")
    walk("")
    Path(dest).mkdir(parents=True)
    for name in folders:
        (Path(dest) / name).mkdir(exist_ok=True)
    for name in files:
        data = read_regular(Path(src), name, what=f"{shown}/{name}")
        if data is None:  # removed meanwhile: nothing to copy
            continue
        (Path(dest) / name).write_bytes(data)
