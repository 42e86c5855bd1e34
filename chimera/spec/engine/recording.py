"""What an engine session read, recorded for the whole-report cache
(:mod:`chimera.spec.engine.reports`)."""

from __future__ import annotations

from typing import Any

from chimera.spec.check_context import Unscannable
from chimera.spec.engine import reports
from chimera.spec.engine.cache import ResultCache, StatKey
from chimera.spec.engine.files import (
    FileTree,
    ReadBytes,
    Resolver,
    Target,
    read_target,
)
from chimera.spec.engine.options import EngineOptions


class ReadLog:
    """The engine session's reads: the bytes of each file read (the last kept for its digest)
    and, once :meth:`track` is called, each file's stat data and digest for :meth:`record`.

    Args:
        options: the session's limits (file size).
        reader: the byte-reading hook ``(real_path, limit) -> bytes``.
    """

    def __init__(self, options: EngineOptions, reader: ReadBytes) -> None:
        self.options = options
        self._reader = reader
        self.log: dict[str, list[Any]] | None = None
        """Per real path: stat data and digest of the bytes read (``None``: not tracking)."""
        self._raw = b""
        self._raw_digest: str | None = None

    def track(self) -> None:
        """From now on, note each file's stat data (taken before the read) and the digest of
        the bytes read, for :meth:`record`."""
        if self.log is None:
            self.log = {}

    def read(self, target: Target, before: StatKey | None = None) -> bytes | Unscannable:
        """The bytes of ``target`` (kept as the last read until the next one), noted in the
        read log when reads are tracked; ``before``: its stat data if already taken."""
        log = self.log
        if log is not None and before is None:
            before = reports.stat_of(target.real)
        data = read_target(target, self.options, self._reader)
        if isinstance(data, Unscannable):
            return data
        self._raw = data
        self._raw_digest = None
        if log is not None and before is not None:
            self._raw_digest = reports.digest(data)
            log[target.real] = [*before, self._raw_digest]
        return data

    def digest_of_last(self) -> str:
        """The digest of the bytes last read (one hash per read, shared by both caches)."""
        if self._raw_digest is None:
            self._raw_digest = reports.digest(self._raw)
        return self._raw_digest

    def record(
        self,
        taken: float,
        *,
        tree: FileTree,
        resolver: Resolver,
        result_cache: ResultCache | None,
        timed_out: bool,
    ) -> reports.TreeRecord | None:
        """What the session's file work read, for the report cache; ``None`` when it cannot
        be recorded (not tracking, a walk instead of git's list, or a pattern timed out)."""
        if self.log is None or timed_out:
            return None
        out = reports.TreeRecord(taken=taken)
        if tree.consulted:
            out.listing = reports.listing_digest(tree)
            if out.listing is None:
                return None
        for rel, found in resolver.answers().items():
            out.resolved[rel] = reports.signature(found)
            if isinstance(found, Target):
                known = self.log.get(found.real)
                if known is not None:
                    out.files[found.real] = known
                    continue
                # A result the result cache vouched for by stat is recorded with that stat:
                # one taken now would vouch for bytes replaced since (cp -p, rsync -t, tar
                # keep an old mtime, which the racy rule alone cannot see).
                vouched = result_cache.vouched.get(found.real) if result_cache is not None else None
                now = vouched if vouched is not None else reports.stat_of(found.real)
                if now is None:
                    return None
                out.files[found.real] = [*now, None]
        return out
