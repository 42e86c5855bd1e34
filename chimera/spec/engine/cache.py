"""The content-addressed result cache of ``contains`` / ``absent`` / ``defines`` checks.

A warm ``chimera check`` (or ``pytest --chimera-spec``) reads only the files that changed:
the results of text searches and of a Python symbol index are stored under
``.chimera/cache/``, one entry per file content, keyed by

* the file's content (the BLAKE2b digest of its bytes, the one hash a read costs, shared
  with the report cache's record) and how it was decoded (Python files honour PEP 263, so
  the decoding mode is part of the key);

and holding the plans that ran on it (each a set of search ids: the pattern, literal or
regex, and every setting that changes a result — size limit, snippet length, the engine
version), the matches of the searches that found something, and the symbol index. A search
of a stored plan without a stored match found nothing: "no match" costs no entry, so a
cache-filling run writes one entry per file, not one per file and pattern.

``command`` checks are never cached. Time-outs are never stored (they depend on the load
of the machine), nor are unreadable files (they are read again).

Stat data (size, mtime, ctime, inode) only decides whether a file must be hashed again; an
entry recorded less than :data:`RACY_S` seconds after the file's mtime is not trusted (the
"racy git" rule: a second write within the clock's granularity keeps the mtime).

Who can write the cache can forge a verdict, so it is opt-in
(:attr:`EngineOptions.result_cache`, off by default; ``chimera check`` and the pytest
plugin turn it on, autonomous runs and the Action's verify and publish steps never do) and
refused unless git vouches for the tree (:func:`cache_refusal`): ``git ls-files .chimera``
lists nothing (a pull request could commit entries) and git tracks something under the root
(an archive extracted into an untracked folder brings entries of its own).

Writes are atomic (temporary file + rename), so concurrent runs never see a torn file (the
last writer wins; a lost entry only costs a re-read). The file is bounded: past
``max_bytes`` the least recently used files' entries are dropped.
"""

# Stat and path calls run once per selected file: plain os calls, as in files.py.
# ruff: noqa: PTH116, PTH118, PTH120, PTH123

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from chimera.spec.engine.cachefiles import write_cache_file

log = logging.getLogger(__name__)

ENGINE_VERSION = "4"
"""Bumped whenever the engine's results for the same input could change."""

CACHE_DIR = ".chimera/cache"
CACHE_FILE = "results.json"
RACY_S = 2.0
"""An mtime this close to the time a stat was recorded is not trusted."""

StatKey = tuple[int, int, int, int]


@functools.cache
def code_stamp() -> str:
    """A digest of the path, size and mtime of every module of Chimera (hex, 40 characters).

    An editable install changes Chimera's code without changing its version: the report
    cache, the parsed-spec cache and the replay of ``chimera check`` key on this (a few
    hundred stats, ~2 ms), so an edit is a miss and never shows outcomes the old code
    computed. Taken once per process: the code a process runs is what it imported, and a
    run keys several caches (it used to walk the package five times per cold check).
    """
    import chimera

    top = os.path.dirname(os.path.realpath(chimera.__file__))
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                rel = os.path.relpath(path, top)
                digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:40]


def content_key(digest: str, mode: str) -> str:
    """The key of a file's content: the BLAKE2b digest of its bytes (hex,
    :func:`~chimera.spec.engine.reports.digest`, the one hash a read costs) and how it is
    decoded (``mode``: Python files honour PEP 263)."""
    return f"{mode}:{digest}"


@functools.lru_cache(maxsize=8192)
def check_key(*parts: str | bool | int | float) -> str:
    """A short, stable digest of a check's definition and the settings it depends on."""
    raw = json.dumps([ENGINE_VERSION, *parts], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:24]


def cache_refusal(root: str) -> str | None:
    """Why git cannot vouch for the ``.chimera/cache/`` of ``root`` (a real path), as one
    sentence, or ``None`` when it can. The one gate of every cache under it: the result and
    report caches, the parsed-spec cache and the replay of ``chimera check``.

    Fail closed: whoever can write a cache entry can forge a verdict, so a cache is used only
    when git lists the tree (a repository git does not refuse), git tracks nothing under
    ``.chimera`` in any letter case (a pull request could commit entries) and git tracks
    something under ``root`` itself: an untracked or ignored folder (an archive extracted
    inside a repository, with a ``.chimera/cache/`` of its own) is refused.

    Costs one ``git ls-files`` (output bounded by the files directly in ``root``); a root
    whose tracked content is all in subdirectories, or which has none, costs a second one
    (of which only the first byte is read).
    """
    # icase: on a case-insensitive file system (macOS, Windows) a committed
    # ``.Chimera/cache/`` is the directory Chimera reads as ``.chimera/cache/``.
    # ``:(glob)*`` matches only the files directly in the root: any of them answers
    # "git tracks something here" without listing the whole subtree.
    listed = _ls_files(root, ":(icase).chimera", ":(glob)*")
    if listed is None:
        return (
            f"{CACHE_DIR} is off: git cannot list this tree's files, so a cache file that "
            "came with the tree cannot be told from one Chimera wrote"
        )
    names = [n for n in listed.decode("utf-8", "replace").split("\0") if n]
    ours = [n for n in names if _is_cache_path(n)]
    if ours:
        return (
            f"{CACHE_DIR} is off: git tracks files under .chimera ({ours[0]}), "
            "and a committed entry could forge a verdict"
        )
    if len(ours) < len(names) or _tracks_anything(root):
        return None
    return (
        f"{CACHE_DIR} is off: git tracks nothing in this folder (it is untracked, ignored or "
        "empty), so a cache file that came with it, e.g. in an extracted archive, cannot be "
        "told from one Chimera wrote"
    )


def _is_cache_path(name: str) -> bool:
    head = name.split("/", 1)[0]
    return head.casefold() == ".chimera"


def _ls_files(root: str, *pathspecs: str) -> bytes | None:
    """``git ls-files -z -- pathspecs`` run in ``root``; ``None`` when git cannot answer
    (not a repository, git missing, or git refusing the tree, e.g. "dubious ownership")."""
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--", *pathspecs],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _tracks_anything(root: str) -> bool:
    """Whether git's index holds any path under ``root``. Reads one byte: the listing of a
    large tree is never transferred (git stops on the closed pipe)."""
    try:
        proc = subprocess.Popen(
            ["git", "ls-files", "-z", "--", "."],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return False
    assert proc.stdout is not None
    try:
        return bool(proc.stdout.read(1))
    finally:
        # Killed, not drained: a listing of every tracked path is exactly the cost saved.
        proc.kill()
        proc.stdout.close()
        proc.wait()


@dataclass
class CacheEntry:
    """What one file's content answers: the plans run on it (each a set of search ids whose
    "no match" this entry vouches for), its matches by search id as ``[level, matches]``
    (``level``: 0 matched but not located, 1 first match located, 2 every match located),
    and its symbol index by index id."""

    used: float
    plans: set[int] = field(default_factory=set)
    hits: dict[str, list[Any]] = field(default_factory=dict)
    index: dict[str, Any] = field(default_factory=dict)


class ResultCache:
    """The cache of one root, loaded once per session and saved once at its end: one entry
    per file content (at most one write per file and run, whatever the number of patterns).

    Args:
        root_real: the checked tree (real path).
        max_bytes: bound of the cache file; least recently used entries go first.

    ``disabled`` names why the cache is not used (``None`` when it is).
    """

    def __init__(self, root_real: str, *, max_bytes: int) -> None:
        self.root_real = root_real
        self.max_bytes = max_bytes
        self.path = os.path.join(root_real, CACHE_DIR, CACHE_FILE)
        self.disabled: str | None = None
        self.hits = 0
        self.misses = 0
        self._entries: dict[str, CacheEntry] = {}
        self._plans: list[frozenset[str]] = []
        self._plan_ids: dict[frozenset[str], int] = {}
        self._stats: dict[str, tuple[StatKey, str]] = {}
        self._before: dict[str, StatKey | None] = {}
        self.vouched: dict[str, StatKey] = {}
        """Real path -> the stat data :meth:`known` found unchanged (the whole-report record
        keeps these, not a later stat: a file replaced after the lookup, even with its old
        mtime restored, then reads as changed)."""
        self._dirty = False
        self._loaded = True
        self._now = time.time()
        self.disabled = cache_refusal(root_real)
        if self.disabled is not None:
            return
        self._loaded = False

    def _ensure_loaded(self) -> None:
        # Loaded on first use: a run answered from the report cache never needs it.
        if not self._loaded:
            self._loaded = True
            self._load()

    # -- lookups ---------------------------------------------------------------------

    def known(self, real: str, mode: str, current: StatKey | bool | None = True) -> str | None:
        """The content key of ``real`` (decoded as ``mode``) when its stat data is unchanged
        since it was hashed. Called before ``real`` is read: :meth:`remember` keys what is
        read next by the stat data taken here (``current``: the stat data the caller took,
        ``None`` when the file could not be stat'ed; by default taken here)."""
        if self.disabled is not None:
            return None
        self._ensure_loaded()
        if current is True:
            current = _stat_key(real)
        assert current is not False
        self._before[real] = current
        recorded = self._stats.get(f"{mode}:{real}")
        if recorded is None or current is None or current != recorded[0]:
            return None
        self.vouched[real] = current
        return recorded[1]

    def remember(self, real: str, mode: str, key: str) -> None:
        """Record ``real``'s content key with its stat data (unless it is racy)."""
        if self.disabled is not None:
            return
        self._ensure_loaded()
        # The stat data taken before the read (by known()): one taken now could describe
        # bytes that replaced the ones hashed with their old mtime kept (cp -p, rsync -t).
        current = self._before[real] if real in self._before else _stat_key(real)
        name = f"{mode}:{real}"
        if current is None or self._now - current[1] / 1e9 < RACY_S:
            self._stats.pop(name, None)
            return
        if self._stats.get(name) != (current, key):
            self._stats[name] = (current, key)
            self._dirty = True

    def entry(self, key: str) -> CacheEntry | None:
        """What content ``key`` answers (marked used), or ``None``."""
        self._ensure_loaded()
        found = self._entries.get(key)
        if found is not None:
            found.used = self._now
        return found

    def answered(self, entry: CacheEntry, search: str) -> bool:
        """Whether ``entry`` vouches for search id ``search`` (a match or "no match")."""
        if search in entry.hits:
            return True
        plans = self._plans
        return any(search in plans[p] for p in entry.plans)

    def plan_of(self, searches: frozenset[str]) -> int:
        """The number of the plan ``searches`` (the same set, the same number)."""
        self._ensure_loaded()
        known = self._plan_ids.get(searches)
        if known is None:
            known = self._plan_ids[searches] = len(self._plans)
            self._plans.append(searches)
        return known

    def store(
        self,
        key: str,
        plan: int | None,
        hits: dict[str, list[Any]],
        index: tuple[str, Any] | None = None,
    ) -> None:
        """Record on content ``key``: the plan that ran (its searches without a hit found no
        match), the hits (``[level, matches]`` by search id) and a symbol index."""
        if self.disabled is not None:
            return
        self._ensure_loaded()
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = CacheEntry(self._now)
        entry.used = self._now
        if plan is not None:
            entry.plans.add(plan)
        if hits:
            entry.hits.update(hits)
        if index is not None:
            entry.index[index[0]] = index[1]
        self._dirty = True

    # -- persistence -----------------------------------------------------------------

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                raw = json.loads(handle.read())
            if raw.get("version") != ENGINE_VERSION:
                return
            checks = [str(c) for c in raw["checks"]]
            for ids in raw["plans"]:
                self.plan_of(frozenset(checks[int(i)] for i in ids))
            for key, (used, plans, hits, index) in raw["entries"].items():
                self._entries[key] = CacheEntry(
                    float(used),
                    {int(p) for p in plans},
                    {checks[int(i)]: h for i, h in hits.items()},
                    {checks[int(i)]: v for i, v in index.items()},
                )
            for real, (st, key) in raw["stats"].items():
                self._stats[real] = (tuple(st), key)
        except FileNotFoundError:
            return
        except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
            # A damaged cache is only a slower run: start empty, overwrite it at the end.
            log.warning("ignoring the unreadable result cache %s: %s", self.path, exc)
            self._entries.clear()
            self._stats.clear()
            self._plans.clear()
            self._plan_ids.clear()

    def save(self) -> None:
        """Write the cache back atomically (bounded to ``max_bytes``); never raises."""
        if self.disabled is not None or not self._dirty:
            return
        entries = sorted(self._entries.items(), key=lambda kv: kv[1].used, reverse=True)
        data = self._encode(entries)
        while len(data) > self.max_bytes and entries:
            # Drop the least recently used part of what is over, then measure again.
            keep = max(0, int(len(entries) * self.max_bytes / len(data) * 0.9))
            entries = entries[:keep]
            data = self._encode(entries)
        write_cache_file(self.path, data, what="the result cache")

    def _encode(self, entries: list[tuple[str, CacheEntry]]) -> bytes:
        # Search ids and plans are listed once and referred to by position: files share them.
        table: dict[str, int] = {}
        plans: dict[int, int] = {}
        body: dict[str, Any] = {}
        for k, e in entries:
            body[k] = [
                e.used,
                [plans.setdefault(p, len(plans)) for p in sorted(e.plans)],
                {table.setdefault(c, len(table)): h for c, h in e.hits.items()},
                {table.setdefault(c, len(table)): v for c, v in e.index.items()},
            ]
        plan_rows: list[list[int]] = [[] for _ in plans]
        for p, at in plans.items():
            plan_rows[at] = [table.setdefault(c, len(table)) for c in sorted(self._plans[p])]
        stats = {real: [list(st), key] for real, (st, key) in self._stats.items() if key in body}
        doc = {
            "version": ENGINE_VERSION,
            "checks": list(table),
            "plans": plan_rows,
            "entries": body,
            "stats": stats,
        }
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _stat_key(real: str) -> StatKey | None:
    try:
        st = os.stat(real)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
