"""Append-only, crash-safe JSONL files for the flywheel's ledgers (evaluations, proposals).

One record is one line, written with a single ``write`` on an ``O_APPEND`` descriptor under a
file lock (``<path>.lock``, the ``filelock`` package) and ``fsync``'d before the lock is let go,
so two processes appending at once never interleave and a record the call returned from is on
disk. A process killed mid-write can leave one **torn last line** (no trailing newline): a
reader skips it with a warning (it was never a committed record), and the next append cuts it
off first, so the new record never glues onto the fragment. A malformed line anywhere else is
damage, not a crash, and the reader refuses it (``file:line: message``).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chimera.errors import ChimeraError, UsageError
from chimera.localstate import make_dirs

log = logging.getLogger(__name__)
_THREADS = threading.Lock()


def append_record(path: Path, record: Mapping[str, Any]) -> None:
    """Append ``record`` to ``path`` as one JSON line (keys sorted), fsync'd.

    Raises:
        ChimeraError: the file cannot be written.
    """
    from filelock import FileLock

    data = (json.dumps(dict(record), ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    if data.count(b"\n") != 1:  # json.dumps escapes newlines; this guards the one-line rule
        raise ChimeraError(f"{path}: a record must serialise to one line")
    try:
        make_dirs(path.parent)
        with _THREADS, FileLock(str(path) + ".lock"):
            _cut_torn_tail(path)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
    except OSError as exc:
        raise ChimeraError(f"{path}: cannot append a record: {exc}") from exc


def _cut_torn_tail(path: Path) -> None:
    """Drop an unterminated fragment at the end of ``path`` (a killed append). Called with
    the file lock held, so no live writer is mid-append."""
    try:
        with path.open("rb+") as handle:
            end = handle.seek(0, os.SEEK_END)
            if end == 0:
                return
            handle.seek(end - 1)
            if handle.read(1) == b"\n":
                return
            handle.seek(0)
            body = handle.read()
            keep = body.rfind(b"\n") + 1
            try:  # a whole record someone saved without its newline: terminate it
                _parse(path, 0, body[keep:])
            except UsageError:
                handle.truncate(keep)
            else:
                handle.seek(end)
                handle.write(b"\n")
                keep = end
            handle.flush()
            os.fsync(handle.fileno())
    except FileNotFoundError:
        return
    if keep < end:
        log.warning(
            "%s: cut a torn last line of %d byte(s) (an interrupted write)", path, end - keep
        )


def read_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every record of ``path`` as ``(line number, object)``, in order; ``[]`` when absent.

    A torn last line (no trailing newline and not valid JSON) is skipped with a logged
    warning. Blank lines are skipped.

    Raises:
        UsageError: any other line is not a JSON object (``file:line: message``), or the
            file cannot be read.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from exc
    lines = raw.split(b"\n")
    torn = lines.pop()  # after the last newline: b"" unless the last write was cut
    out: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            out.append((number, _parse(path, number, line)))
    if torn.strip():
        try:
            out.append((len(lines) + 1, _parse(path, len(lines) + 1, torn)))
        except UsageError:
            log.warning(
                "%s:%d: skipped a torn last line (%d byte(s), an interrupted write)",
                path, len(lines) + 1, len(torn),
            )  # fmt: skip
    return out


def _parse(path: Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path}:{number}: not a JSON record ({exc})") from exc
    if not isinstance(value, dict):
        raise UsageError(f"{path}:{number}: a record is a JSON object")
    return value


__all__ = ["append_record", "read_records"]
