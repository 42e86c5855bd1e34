"""The whole-report cache: a re-check of an unchanged tree with an unchanged Spec is a lookup.

An entry holds the outcome of every evaluated ``contains`` / ``absent`` / ``defines``
requirement of one Spec (``command`` and plugin kinds are never cached: they may depend on
more than the tree) and a record of everything those outcomes read:

* the candidate list git gave (a digest of it), when a ``paths`` scope consulted it;
* what each name the engine looked up resolved to (a file, why it is unscannable, nothing);
* each file read: its stat data taken before the read and a BLAKE2b digest of its bytes.

It is keyed (:func:`report_key`) by Chimera's version, the engine version, the checked root,
every engine setting that changes a result, and the definition of every requirement. A lookup
re-lists, re-resolves and stats everything recorded; a file whose stat data changed (or was
recorded less than :data:`~chimera.spec.engine.cache.RACY_S` before the run began) is read and
hashed again, so stat data only decides whether to re-hash. Any difference is a miss, and the
run falls back to the per-file result cache.

Several processes may save under one key at once (each pytest-xdist worker holds the outcomes
of its own items): a save merges with the stored entry under a file lock (:func:`combine`),
unless the two records disagree about a name or file, so no merged entry ever vouches for an
outcome computed against another tree.

Trust is that of :class:`~chimera.spec.engine.cache.ResultCache` (the caller only builds one
when that cache is on and not refused). Writes are atomic; the directory keeps the
:data:`MAX_ENTRIES` most recently written entries, each at most an eighth of the result
cache's byte bound.
"""

# Stat and path calls run once per recorded file: plain os calls, as in files.py.
# ruff: noqa: PTH103, PTH116, PTH118, PTH123

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chimera import __version__
from chimera.spec.check_context import Unscannable
from chimera.spec.engine.cache import CACHE_DIR, ENGINE_VERSION, RACY_S, code_stamp
from chimera.spec.engine.files import FileTree, Resolver, Target
from chimera.spec.engine.options import EngineStats

if TYPE_CHECKING:
    from chimera.spec.engine.options import EngineOptions

log = logging.getLogger(__name__)

CHIMERA_VERSION = __version__
"""Part of every key: another release of Chimera never reads this one's reports."""

MAX_ENTRIES = 8
"""Reports kept per root (one per Spec and selection): the oldest written go first."""

PREFIX = "report-"

LOCK_NAME = "report.lock"
"""The lock every save of the directory takes (one file, never pruned)."""

LOCK_TIMEOUT_S = 10.0
"""How long a save waits for another process's save (seconds); then it stores nothing (the
outcomes are computed again next time) rather than block."""

_UNKEYED = frozenset({"result_cache", "cache_max_bytes", "text_cache_bytes"})
"""Engine options that never change a result."""

Resolved = list[Any]
"""``["T", real]``, ``["U", reason]`` or ``["N"]``: what a name resolved to."""


def digest(data: bytes) -> str:
    """The content digest of a file's bytes (BLAKE2b, 160 bits, hex)."""
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def report_key(root_real: str, options: EngineOptions, definitions: list[Any]) -> str:
    """The key of a report: versions, Chimera's code (:func:`~.cache.code_stamp`: an edit of
    an editable install), root, result-changing options, requirement definitions.

    ``definitions`` is JSON-shaped (one item per cacheable requirement, in Spec order).
    """
    settings = {
        name: getattr(options, name)
        for name in options.__dataclass_fields__
        if name not in _UNKEYED
    }
    raw = json.dumps(
        [CHIMERA_VERSION, ENGINE_VERSION, code_stamp(), root_real, settings, definitions],
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def signature(found: Target | Unscannable | None) -> Resolved:
    if found is None:
        return ["N"]
    if isinstance(found, Unscannable):
        return ["U", found.reason]
    return ["T", found.real]


@dataclass
class TreeRecord:
    """What a set of outcomes read (see the module docstring).

    Attributes:
        taken: when the run began (seconds since the epoch); an mtime within
            :data:`RACY_S` before it is not trusted.
        listing: digest of git's candidate list, or ``None`` when no scope consulted it.
        resolved: name (root-relative) -> what it resolved to.
        files: real path -> ``[size, mtime_ns, ctime_ns, inode, digest or None]``.
    """

    taken: float
    listing: str | None = None
    resolved: dict[str, Resolved] = field(default_factory=dict)
    files: dict[str, list[Any]] = field(default_factory=dict)

    def merge(self, other: TreeRecord) -> TreeRecord:
        """Both records (``other`` wins where both know a name); the earlier start time. A
        file both know keeps its digest when either record has one (:func:`same_file`)."""
        files = {**self.files, **other.files}
        for real, mine in self.files.items():
            theirs = other.files.get(real)
            if theirs is not None and theirs[4] is None and mine[4] is not None:
                files[real] = mine
        return TreeRecord(
            taken=min(self.taken, other.taken),
            listing=other.listing if other.listing is not None else self.listing,
            resolved={**self.resolved, **other.resolved},
            files=files,
        )

    def conflicts(self, other: TreeRecord) -> bool:
        """Whether the records disagree: both listed git's candidates with different
        results, or both know a name with different resolutions or a file that is not the
        same (:func:`same_file`), so they were not taken of one tree, and no merge of them may
        validate both sets of outcomes."""
        if None not in (self.listing, other.listing) and self.listing != other.listing:
            return True
        if _disagree(self.resolved, other.resolved, lambda a, b: a == b):
            return True
        return _disagree(self.files, other.files, same_file)

    def covers(self, other: TreeRecord) -> bool:
        """Whether this record knows every name and file ``other`` knows, with the same
        values (``other`` holds whenever this record does, but for the racy horizon). A
        digest ``other`` lacks is no difference: its stat data vouches for the same bytes."""
        return (
            other.listing in (None, self.listing)
            and other.resolved.items() <= self.resolved.items()
            and all(
                real in self.files and same_file(self.files[real], value)
                for real, value in other.files.items()
            )
        )

    def holds(self, root_real: str, options: EngineOptions) -> bool:
        """Whether the tree at ``root_real`` still reads as recorded, listed and resolved as
        ``options`` select (see :meth:`holds_for`)."""
        return self.holds_for(root_real, use_git=options.listing == "auto", hidden=options.hidden)

    def holds_for(self, root_real: str, *, use_git: bool, hidden: tuple[str, ...]) -> bool:
        """Whether the tree at ``root_real`` still reads as recorded: git's candidate list
        (listed with git when ``use_git``), every recorded name's resolution and every recorded
        file's bytes (re-hashed when its stat data changed or was racy). ``hidden``: real paths
        no check reads. Never raises for a vanished or unreadable file (that is ``False``).

        The one validation of both the report cache and the replay of ``chimera check``
        (:mod:`chimera.cli._replay`), which calls it without loading the Spec.
        """
        # Every check must pass: the cheapest first, so a changed tree (an edited file, the
        # usual miss) is told after a stat per file and a hash of the changed ones. A
        # recorded file is stat'ed once: a name resolved to it (no link) is answered by the
        # same lstat.
        horizon = (self.taken - RACY_S) * 1e9
        changed: list[tuple[str, str]] = []
        taken: dict[str, os.stat_result] = {}
        for real, (size, mtime, ctime, ino, known) in self.files.items():
            # A recorded path is a real path (no link in it): lstat is its stat.
            try:
                st = taken[real] = os.lstat(real)
            except OSError:
                return False
            now = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
            if now == (size, mtime, ctime, ino) and mtime < horizon and stat.S_ISREG(st.st_mode):
                continue
            if known is None:
                return False
            changed.append((real, known))
        for real, known in changed:
            try:
                with open(real, "rb") as handle:
                    if digest(handle.read()) != known:
                        return False
            except OSError:
                return False
        if self.listing is not None:
            tree = FileTree(root_real, EngineStats(), use_git=use_git, hidden=hidden)
            if listing_digest(tree) != self.listing:
                return False
        resolver = Resolver(root_real, hidden, taken)
        return all(signature(resolver.resolve(rel)) == was for rel, was in self.resolved.items())

    def to_json(self) -> dict[str, Any]:
        return {
            "taken": self.taken,
            "listing": self.listing,
            "resolved": self.resolved,
            "files": self.files,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> TreeRecord:
        return cls(
            taken=float(raw["taken"]),
            listing=raw["listing"],
            resolved=dict(raw["resolved"]),
            files={k: list(v) for k, v in raw["files"].items()},
        )


def same_file(one: list[Any], two: list[Any]) -> bool:
    """Whether two records of a file (``[size, mtime_ns, ctime_ns, inode, digest or None]``)
    describe the same bytes: equal stat data, and equal digests where both have one.

    A record without a digest comes from a worker whose result cache vouched for the file by
    that same stat data (:attr:`~chimera.spec.engine.cache.ResultCache.vouched`), which the
    cache keeps only for bytes it hashed: under pytest-xdist one worker often reads a file
    while another, holding a requirement with the same check, finds its result in the cache
    the first just saved. Treating the two as different made the later save drop the
    earlier worker's outcomes.
    """
    if one[:4] != two[:4]:
        return False
    return one[4] is None or two[4] is None or one[4] == two[4]


def _disagree(
    mine: dict[str, Any], theirs: dict[str, Any], same: Callable[[Any, Any], bool]
) -> bool:
    small, large = (mine, theirs) if len(mine) <= len(theirs) else (theirs, mine)
    return any(name in large and not same(large[name], value) for name, value in small.items())


Entry = tuple[dict[str, Any], TreeRecord]
"""Outcomes (JSON-shaped, by requirement id) and the record of what they read."""


def combine(older: Entry, newer: Entry) -> Entry:
    """Both entries' outcomes under the merged record (:meth:`TreeRecord.merge`: the earlier
    start time, so the racy horizon stays that of the first run), or ``newer`` alone when
    the records conflict (:meth:`TreeRecord.conflicts`): a merged record checks each name
    against one value, and would vouch for outcomes read from the other."""
    if older[1].conflicts(newer[1]):
        return newer
    return {**older[0], **newer[0]}, older[1].merge(newer[1])


def listing_digest(tree: FileTree) -> str | None:
    """The digest of git's candidate list of ``tree`` (``None`` when git gave none)."""
    listed = tree.git_listing()
    if listed is None:
        return None
    return digest("\0".join(listed).encode("utf-8", "surrogateescape"))


def stat_of(real: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(real)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class ReportStore:
    """The stored reports of one root (``.chimera/cache/report-<key>.json``).

    Args:
        root_real: the checked tree (real path).
        max_bytes: bound of all entries together; an entry over its share
            (``max_bytes / MAX_ENTRIES``) is not written.
    """

    def __init__(self, root_real: str, *, max_bytes: int) -> None:
        self.root_real = root_real
        self.directory = os.path.join(root_real, CACHE_DIR)
        self.max_entry_bytes = max_bytes // MAX_ENTRIES

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, f"{PREFIX}{key}.json")

    def load(self, key: str) -> tuple[dict[str, Any], TreeRecord] | None:
        """The outcomes (JSON-shaped, by requirement id) and record stored under ``key``."""
        try:
            with open(self._path(key), "rb") as handle:
                raw = json.loads(handle.read())
            if raw.get("key") != key:
                return None
            return dict(raw["outcomes"]), TreeRecord.from_json(raw["record"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("ignoring the unreadable report cache %s: %s", self._path(key), exc)
            return None

    def save(
        self,
        key: str,
        outcomes: dict[str, Any],
        record: TreeRecord,
        *,
        options: EngineOptions | None = None,
        stale: TreeRecord | None = None,
    ) -> None:
        """Store the outcomes with what they read, merged with the entry already stored under
        ``key`` (:func:`combine`; a stored record that no longer holds for ``options``, when
        given, is replaced instead — ``stale``, a record the caller already found not
        holding, is not validated again), under the directory's lock; never raises.

        The write is atomic and drops the oldest entries past :data:`MAX_ENTRIES`. When the
        lock is not had within :data:`LOCK_TIMEOUT_S` (or cannot be made, or the lock library
        cannot be imported), nothing is stored: the cache only saves work, so a check never
        fails for want of it.
        """
        try:
            import filelock  # here: a check that only reads never takes the lock
        except ImportError as exc:
            log.warning("the report cache is not stored: its lock library is missing (%s)", exc)
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            lock = filelock.FileLock(
                os.path.join(self.directory, LOCK_NAME), timeout=LOCK_TIMEOUT_S
            )
            with lock:
                stored = self.load(key)
                if stored is not None and (
                    record.covers(stored[1])
                    or options is None
                    or (stored[1] != stale and stored[1].holds(self.root_real, options))
                ):
                    outcomes, record = combine(stored, (outcomes, record))
                self._write(key, outcomes, record)
        except filelock.Timeout:
            log.warning("the report cache is locked by another process; not stored")
        except OSError as exc:
            log.warning("cannot lock the report cache in %s: %s", self.directory, exc)

    def _write(self, key: str, outcomes: dict[str, Any], record: TreeRecord) -> None:
        doc = {"key": key, "outcomes": outcomes, "record": record.to_json()}
        data = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
        if len(data) > self.max_entry_bytes:
            log.debug("report of %d bytes is over the cache's share; not stored", len(data))
            return
        from chimera.spec.engine.cachefiles import prune_oldest, write_cache_file

        if write_cache_file(self._path(key), data, what="the report cache"):
            prune_oldest(self.directory, PREFIX, MAX_ENTRIES)
