"""Writing and bounding the files of ``chimera check``'s caches under ``.chimera/cache/``.

The result cache (:mod:`.cache`), the whole-report cache (:mod:`.reports`) and the parsed-spec
cache (:mod:`chimera.spec.parsecache`) keep derived data only, so a lost write costs a
recomputation and nothing else: writes are atomic (temporary file, then ``os.replace``) but not
fsynced, and every failure is logged, never raised.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

from chimera.localstate import make_dirs

__all__ = ["prune_oldest", "write_cache_file"]

log = logging.getLogger(__name__)

_IGNORE = "# the result cache of chimera check; never commit it\n*\n"


def write_cache_file(path: str, data: bytes, *, what: str) -> bool:
    """Write ``data`` to ``path`` atomically, creating its folder with a ``.gitignore`` that
    ignores everything in it.

    Args:
        path: the cache file.
        data: its whole content.
        what: names the cache in the warning (``"the report cache"``).

    Returns:
        ``True`` when written; ``False`` after logging an ``OSError`` (never raised).
    """
    import tempfile  # here: a replayed check never writes, and tempfile costs its start

    directory = Path(path).parent
    try:
        make_dirs(directory)
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text(_IGNORE, encoding="utf-8")
        fd, tmp = tempfile.mkstemp(prefix=".cache.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            Path(tmp).replace(path)
        except BaseException:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
            raise
    except OSError as exc:
        log.warning("cannot write %s %s: %s", what, path, exc)
        return False
    return True


def prune_oldest(directory: str, prefix: str, keep: int) -> None:
    """Delete the least recently written ``<prefix>*.json`` files in ``directory`` beyond the
    newest ``keep``; files that vanish meanwhile are skipped."""
    found = list(Path(directory).glob(f"{prefix}*.json"))
    if len(found) <= keep:
        return
    aged: list[tuple[int, Path]] = []
    for path in found:
        with contextlib.suppress(OSError):
            aged.append((path.stat().st_mtime_ns, path))
    for _, path in sorted(aged)[: max(0, len(aged) - keep)]:
        with contextlib.suppress(OSError):
            path.unlink()
