"""The engine session's side of the result cache: one file's planned work served from it.

:class:`Stored` is made per file of a batched pass when the cache is on. Before the file is
read, :meth:`Stored.replay` serves every planned search and the symbol index from the cache
if the file's stat data is unchanged and its entry answers all of it — then the file is not
read at all. Otherwise the file is read and keyed by the digest of its bytes
(:meth:`Stored.hashed`), searches and the index use what the entry answers
(:meth:`Stored.reuse`, :meth:`Stored.reuse_index`), and the file's results are stored as one
entry (:meth:`Stored.store`): the plan that ran and only the searches that found something.

A stored hit is ``[level, matches, count]`` with each match ``[line, col, snippet]`` (``level``
as a :class:`FileScan`'s: what the search found out — :data:`FIRST`, :data:`FIRST_PER_FILE`,
:data:`COUNT` or :data:`EVERY` —, ``matches`` the located ones, ``count`` every match of the
file, or -1 when they were not counted); a stored index is ``[definitions, problem]`` with
each definition as ``[qualname, kind, line, col, snippet]``. Time-outs and skipped searches
are never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chimera.spec.check_context import Definition
from chimera.spec.engine.cache import ResultCache, StatKey, check_key, content_key
from chimera.spec.engine.options import EngineOptions

if TYPE_CHECKING:
    from chimera.spec.engine.cache import CacheEntry
    from chimera.spec.engine.session import EngineSession

_PatternKey = tuple[str, bool]
_Located = tuple[int, int, str]
_Plan = dict[_PatternKey, int]

FIRST, FIRST_PER_FILE, COUNT, EVERY = 0b0001, 0b0011, 0b0101, 0b1111
"""How much of a pattern's matches a search needs (a plan's level) or found out (a
:class:`FileScan`'s), as bits: whether it matches (``FIRST``: the first match of the first
file is located later), and the first match located (``FIRST_PER_FILE``), or every match
counted (``COUNT``: the evidence of an ``absent`` whose evidence is capped locates only what
is shown), or every match counted and located (``EVERY``). A result answers a need when it
holds all of its bits (:func:`answers`); two needs merge by ``|``."""

LEVELS = (FIRST, FIRST_PER_FILE, COUNT, EVERY)


def answers(have: int, need: int) -> bool:
    """Whether a result of level ``have`` answers a need of level ``need``."""
    return have & need == need


@dataclass(frozen=True, slots=True)
class FileScan:
    """A pattern's matches in one file (only kept when there are matches or a timeout):
    ``matches`` the located ones (in file order), ``count`` every match when they were counted
    (-1 when not), ``level`` what the search found out (see :data:`FIRST`)."""

    matches: tuple[_Located, ...] = ()
    timed_out: bool = False
    skipped: bool = False
    level: int = EVERY
    count: int = -1

    @property
    def total(self) -> int:
        """Every match of the file (the located ones, when they were not counted)."""
        return self.count if self.count >= 0 else len(self.matches)


@dataclass(frozen=True, slots=True)
class PlanIds:
    """One merged plan's search ids, both ways, and its number in the cache (made once per
    plan and pass: replaying and storing a file then costs its hits, not its patterns)."""

    number: int
    sid_of: dict[_PatternKey, str]
    key_of: dict[str, _PatternKey]

    @classmethod
    def of(cls, cache: ResultCache, stored: Stored, plan: _Plan) -> PlanIds:
        sid_of = {key: stored.search_id(key) for key in plan}
        number = cache.plan_of(frozenset(sid_of.values()))
        return cls(number, sid_of, {sid: key for key, sid in sid_of.items()})


def decode_mode(rel: str) -> str:
    """How ``rel`` is decoded (part of the content key): PEP 263 for Python files."""
    return "py" if rel.endswith((".py", ".pyw", ".pyi")) else "text"


class Stored:
    """Cache access for one file ``real`` selected as ``rel``; ``before``: its stat data
    taken before any read (``None`` when it cannot be stat'ed)."""

    def __init__(
        self,
        cache: ResultCache,
        real: str,
        rel: str,
        options: EngineOptions,
        before: StatKey | None,
    ) -> None:
        self.cache = cache
        self.real = real
        self.rel = rel
        self.mode = decode_mode(rel)
        self.key = cache.known(real, self.mode, before)
        self._settings = (options.max_file_bytes, options.snippet_chars)
        self._entry: CacheEntry | None = None

    def search_id(self, key: _PatternKey) -> str:
        return check_key("scan", key[0], key[1], *self._settings)

    def _index_id(self) -> str:
        # The file's name appears in a syntax error's message.
        return check_key("index", self.rel, *self._settings)

    def _get_entry(self) -> CacheEntry | None:
        if self._entry is None and self.key is not None:
            self._entry = self.cache.entry(self.key)
        return self._entry

    def replay(
        self, session: EngineSession, plan: _Plan, module: bool, ids: PlanIds | None = None
    ) -> bool:
        """Serve all of this file's planned work from the cache; ``False`` when any result
        is missing (nothing is applied then). ``ids``: the plan's search ids (when the entry
        holds that very plan, only its hits are looked at)."""
        entry = self._get_entry()
        if entry is None:
            return False
        found: list[tuple[_PatternKey, Any]] = []
        if ids is not None and ids.number in entry.plans:
            for sid, hit in entry.hits.items():
                key = ids.key_of.get(sid)
                if key is None:
                    continue
                if not answers(_level_of(hit), plan[key]):
                    return False
                found.append((key, hit))
        else:
            for key, level in plan.items():
                sid = ids.sid_of[key] if ids is not None else self.search_id(key)
                stored = entry.hits.get(sid)
                if stored is not None:
                    if not answers(_level_of(stored), level):
                        return False
                    found.append((key, stored))
                elif not self.cache.answered(entry, sid):
                    return False
        index = None
        if module:
            index = entry.index.get(self._index_id())
            if index is None:
                return False
        self.cache.hits += 1
        for key, hit in found:
            _apply(session, key, self.real, hit)
        session.mark_done(self.real, plan)
        if index is not None:
            session._modules[self.real] = _index_from_json(index)
        return True

    def hashed(self, digest: str) -> None:
        """The file was read (``digest``: of its bytes): key its results by it from now on."""
        self.key = content_key(digest, self.mode)
        self._entry = None
        self.cache.remember(self.real, self.mode, self.key)

    def reuse(self, session: EngineSession, key: _PatternKey, level: int) -> bool:
        """Apply a stored search of ``key`` in this content, if the entry answers it."""
        entry = self._get_entry()
        if entry is None:
            return False
        sid = self.search_id(key)
        hit = entry.hits.get(sid)
        if hit is not None:
            if not answers(_level_of(hit), level):
                return False
            _apply(session, key, self.real, hit)
            return True
        if self.cache.answered(entry, sid):
            session._found.get(key, {}).pop(self.real, None)
            return True
        return False

    def reuse_index(self, session: EngineSession) -> bool:
        """Apply a stored symbol index of this content, if there is one."""
        entry = self._get_entry()
        stored = None if entry is None else entry.index.get(self._index_id())
        if stored is None:
            return False
        session._modules[self.real] = _index_from_json(stored)
        return True

    def store(
        self,
        session: EngineSession,
        touched: list[_PatternKey],
        ids: PlanIds | None,
        module: bool,
    ) -> None:
        """Store this file's results as the pass left them: one entry holding the plan (its
        searches without a stored hit found nothing) and the hits among ``touched`` (the
        patterns the matcher did not rule out); a time-out or a skipped search keeps the
        plan out (it did not run to the end)."""
        if self.key is None:
            return
        hits: dict[str, list[Any]] = {}
        complete = True
        for key in touched:
            scan = session._found.get(key, {}).get(self.real)
            if scan is None:
                continue
            if scan.timed_out or scan.skipped:
                complete = False
                continue
            sid = ids.sid_of[key] if ids is not None else self.search_id(key)
            hits[sid] = [scan.level, [list(m) for m in scan.matches], scan.count]
        index = None
        if module and self.real in session._modules:
            index = (self._index_id(), _index_to_json(session._modules[self.real]))
        plan_id = ids.number if ids is not None and complete else None
        if plan_id is not None or hits or index is not None:
            self.cache.store(self.key, plan_id, hits, index)


def _level_of(hit: Any) -> int:
    """A stored hit's level, less the counted bit when it holds no count (an entry written
    without one answers no need for counted matches: the file is read again)."""
    level = int(hit[0])
    counted = len(hit) > 2 and int(hit[2]) >= 0
    if not counted and not answers(level, EVERY):
        level &= ~(COUNT & ~FIRST)
    return level


def _apply(session: EngineSession, key: _PatternKey, real: str, hit: Any) -> None:
    level, matches = _level_of(hit), hit[1]
    count = int(hit[2]) if len(hit) > 2 else -1
    scan = FileScan(
        matches=tuple((int(m[0]), int(m[1]), str(m[2])) for m in matches), level=level, count=count
    )
    session._put(key, real, scan)


_Index = tuple[dict[str, tuple[Definition, ...]], str | None]


def _index_to_json(index: _Index) -> list[Any]:
    definitions, problem = index
    return [
        {
            name: [[d.qualname, d.kind, d.line, d.col, d.snippet] for d in ds]
            for name, ds in definitions.items()
        },
        problem,
    ]


def _index_from_json(stored: Any) -> _Index:
    definitions, problem = stored
    return (
        {
            str(name): tuple(
                Definition(str(q), str(k), int(ln), int(c), str(s)) for q, k, ln, c, s in ds
            )
            for name, ds in definitions.items()
        },
        None if problem is None else str(problem),
    )
