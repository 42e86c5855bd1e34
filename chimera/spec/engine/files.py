"""Reading for the check engine, fail closed (selection is in
:mod:`~chimera.spec.engine.tree`, names to real files in :mod:`~chimera.spec.engine.resolve`;
both are re-exported here).

Reading turns every way a file can fail to be text into an :class:`Unscannable` with the
reason (binary, undecodable, over the size limit, unreadable, broken or looping link, link
leaving the root, not a regular file), which the kinds treat as "never evidence of absence".
"""

# The engine handles thousands of paths per run as plain strings with os/os.path on purpose:
# pathlib objects cost several times more per call on this hot path.

from __future__ import annotations

import codecs
import os
import stat
import tokenize
from collections.abc import Callable

from chimera.errors import FileTooLarge, NotARegularFile
from chimera.spec.check_context import Unscannable
from chimera.spec.engine.options import EngineOptions, EngineStats
from chimera.spec.engine.resolve import IS_DIRECTORY, Resolver, Target, normalize_relpath
from chimera.spec.engine.tree import (
    GIT_LS_FILES,
    NEVER_SELECTED,
    FileTree,
    anchor_dir,
    normalize_glob,
)

__all__ = [
    "GIT_LS_FILES",
    "IS_DIRECTORY",
    "NEVER_SELECTED",
    "FileTree",
    "ReadBytes",
    "Resolver",
    "Target",
    "anchor_dir",
    "decode_scan",
    "decode_text",
    "load_text",
    "normalize_glob",
    "normalize_relpath",
    "read_bytes",
    "read_target",
]

ReadBytes = Callable[[str, int], bytes]
"""``(real_path, limit) -> bytes``: the reading hook (tests inject failures through it)."""


def read_bytes(real: str, limit: int) -> bytes:
    """Read a regular file of at most ``limit`` bytes (never blocks on a FIFO).

    Raises:
        FileTooLarge: the file has more than ``limit`` bytes.
        NotARegularFile: the path is a FIFO, device or socket.
        OSError: the file cannot be opened or read (permissions, vanished).
    """
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile
        if st.st_size > limit:
            raise FileTooLarge(st.st_size)
        # Plain reads, not a buffered file object (which costs a buffer of ``limit`` bytes
        # and a copy per file): until EOF, as the file may have changed since ``fstat``,
        # and never more than ``limit + 1`` bytes.
        chunks: list[bytes] = []
        left = limit + 1
        ask = min(st.st_size + 1, left)
        while left > 0:
            chunk = os.read(fd, ask)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            ask = min(left, 1 << 20)
        data = b"".join(chunks)
        if len(data) > limit:
            raise FileTooLarge(len(data))
        return data
    finally:
        os.close(fd)


def _python_encoding(data: bytes) -> str:
    """PEP 263: the coding line of a Python file (``utf-8-sig`` when a BOM is present)."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    if b"coding" not in data[: second if second >= 0 else len(data)]:
        return "utf-8-sig"  # no cookie possible: the common case, without tokenize's work
    head = data.split(b"\n", 2)[:2]
    lines = iter(line + b"\n" for line in head)
    encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    return encoding


def _human_size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} bytes"


def decode_text(rel: str, data: bytes) -> tuple[str | None, str | None]:
    """``(text, None)`` for matching, or ``(None, reason)`` when it is not text.

    UTF-8 (a BOM is dropped); Python files honour a PEP 263 coding line; CRLF becomes LF so
    ``$`` and line numbers behave as in an editor.
    """
    decoded = _decode(rel, data)
    if isinstance(decoded, str):
        return None, decoded
    return decoded[0], None


def _decode(rel: str, data: bytes) -> tuple[str, str] | str:
    """``(text, encoding)`` (see :func:`decode_text`), or the reason it is not text."""
    nul = data.find(b"\0")  # one byte: memchr, as the CR test below
    if nul >= 0:
        return f"binary file (NUL byte at offset {nul})"
    encoding = "utf-8-sig"
    if rel.endswith((".py", ".pyw", ".pyi")):
        try:
            encoding = _python_encoding(data)
        except SyntaxError as exc:
            return f"undecodable: {exc.msg}"
    try:
        codecs.lookup(encoding)
        text = data.decode(encoding)
    except LookupError:
        return f"undecodable: unknown encoding {encoding!r}"
    except UnicodeDecodeError as exc:
        return f"undecodable as {exc.encoding} at byte {exc.start}: {exc.reason}"
    if text.startswith("\ufeff"):
        text = text[1:]
    if data.find(b"\r") >= 0 and "\r\n" in text:
        # CRLF is a line end: `$` must work, and line numbers must match editors'.
        text = text.replace("\r\n", "\n")
    return text, encoding


_BOM = b"\xef\xbb\xbf"


def decode_scan(rel: str, data: bytes) -> tuple[str, bytes] | str:
    """:func:`decode_text` for a search: ``(text, utf8)`` where ``utf8`` is ``text`` encoded
    as UTF-8 — for a UTF-8 file without a BOM or CRLF, ``data`` itself (nothing is copied or
    encoded) — or the reason it is not text."""
    decoded = _decode(rel, data)
    if isinstance(decoded, str):
        return decoded
    text, encoding = decoded
    if encoding not in ("utf-8", "utf-8-sig"):
        return text, text.encode("utf-8", "surrogatepass")
    # The UTF-8 bytes less what decode_text dropped: a BOM (one by the codec, one more when
    # the text still began with one) and the CR of each CRLF.
    utf8 = data[3:] if data.startswith(_BOM) and encoding == "utf-8-sig" else data
    if utf8.startswith(_BOM):
        utf8 = utf8[3:]
    if utf8.find(b"\r") >= 0:
        utf8 = utf8.replace(b"\r\n", b"\n")
    return text, utf8


def read_target(target: Target, options: EngineOptions, reader: ReadBytes) -> bytes | Unscannable:
    """The bytes of ``target``; every failure is an :class:`Unscannable` with the reason."""
    try:
        return reader(target.real, options.max_file_bytes)
    except FileTooLarge as exc:
        return Unscannable(
            target.rel,
            f"over the size limit ({_human_size(exc.size)} > "
            f"{_human_size(options.max_file_bytes)})",
        )
    except NotARegularFile:
        return Unscannable(target.rel, "not a regular file")
    except PermissionError as exc:
        return Unscannable(target.rel, f"unreadable: {exc.strerror or 'permission denied'}")
    except FileNotFoundError:
        return Unscannable(target.rel, "vanished while being read")
    except OSError as exc:
        return Unscannable(target.rel, f"unreadable: {exc.strerror or exc}")


def load_text(
    target: Target, options: EngineOptions, stats: EngineStats, reader: ReadBytes
) -> str | Unscannable:
    """Read and decode ``target`` once; every failure is an :class:`Unscannable`."""
    stats.reads[target.real] += 1
    data = read_target(target, options, reader)
    if isinstance(data, Unscannable):
        return data
    text, problem = decode_text(target.rel, data)
    if text is None:
        return Unscannable(target.rel, problem or "undecodable")
    return text
