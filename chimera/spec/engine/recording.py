"""What an engine session read, recorded for the whole-report cache
(:mod:`chimera.spec.engine.reports`)."""

from __future__ import annotations

from typing import Any

from chimera.spec.engine import reports
from chimera.spec.engine.cache import ResultCache
from chimera.spec.engine.files import (
    FileTree,
    ReadBytes,
    Resolver,
    Target,
)


class ReadRecording:
    """The recording half of :class:`~chimera.spec.engine.session.EngineSession`."""

    _read_log: dict[str, list[Any]] | None
    _reader: ReadBytes
    _timeouts: dict[tuple[str, bool], int]
    _tree: FileTree
    _resolver: Resolver
    result_cache: ResultCache | None

    def track_reads(self) -> None:
        """From now on, note each file's stat data (taken before the read) and the digest of
        the bytes read, for :meth:`record`."""
        if self._read_log is not None:
            return
        base = self._reader
        log: dict[str, list[Any]] = {}
        self._read_log = log

        def reader(real: str, limit: int) -> bytes:
            before = reports.stat_of(real)
            data = base(real, limit)
            if before is not None:
                log[real] = [*before, reports.digest(data)]
            return data

        self._reader = reader

    def record(self, taken: float) -> reports.TreeRecord | None:
        """What this session's file work read, for the report cache; ``None`` when it
        cannot be recorded (a walk instead of git's list, or a pattern timed out)."""
        if self._read_log is None or self._timeouts:
            return None
        out = reports.TreeRecord(taken=taken)
        if self._tree.consulted:
            out.listing = reports.listing_digest(self._tree)
            if out.listing is None:
                return None
        for rel, found in self._resolver.answers().items():
            out.resolved[rel] = reports.signature(found)
            if isinstance(found, Target):
                known = self._read_log.get(found.real)
                if known is not None:
                    out.files[found.real] = known
                    continue
                # A result the result cache vouched for by stat is recorded with that stat:
                # one taken now would vouch for bytes replaced since (cp -p, rsync -t, tar
                # keep an old mtime, which the racy rule alone cannot see).
                cache = self.result_cache
                vouched = cache.vouched.get(found.real) if cache is not None else None
                now = vouched if vouched is not None else reports.stat_of(found.real)
                if now is None:
                    return None
                out.files[found.real] = [*now, None]
        return out
