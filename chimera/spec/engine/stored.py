"""The engine session's side of the result cache: one file's planned work served from it.

:class:`Stored` is made per file of a batched pass when the cache is on. Before the file is
read, :meth:`Stored.replay` serves every planned search and the symbol index from the cache
if the file's stat data is unchanged and every result is there — then the file is not read
at all. Otherwise the file is read and hashed (:meth:`Stored.hashed`), each search and the
index use a stored result where one exists (:meth:`Stored.reuse`,
:meth:`Stored.reuse_index`), and what was computed is stored (:meth:`Stored.store`).

A stored search is a list of ``[line, col, snippet]`` (empty: no match); a stored index is
``[definitions, problem]`` with each definition as ``[qualname, kind, line, col, snippet]``.
Time-outs and skipped searches are never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chimera.spec.context import Definition
from chimera.spec.engine.cache import ResultCache, check_key, content_key
from chimera.spec.engine.options import EngineOptions

if TYPE_CHECKING:
    from chimera.spec.engine.session import EngineSession

_PatternKey = tuple[str, bool]
_Located = tuple[int, int, str]
_Planned = dict[_PatternKey, bool] | None


@dataclass(frozen=True, slots=True)
class FileScan:
    """A pattern's matches in one file (only kept when there are matches or a timeout)."""

    matches: tuple[_Located, ...] = ()
    timed_out: bool = False
    skipped: bool = False


def decode_mode(rel: str) -> str:
    """How ``rel`` is decoded (part of the content key): PEP 263 for Python files."""
    return "py" if rel.endswith((".py", ".pyw", ".pyi")) else "text"


class Stored:
    """Cache access for one file ``real`` selected as ``rel``."""

    def __init__(self, cache: ResultCache, real: str, rel: str, options: EngineOptions) -> None:
        self.cache = cache
        self.real = real
        self.rel = rel
        self.mode = decode_mode(rel)
        self.key = cache.known(real, self.mode)
        self._settings = (options.max_file_bytes, options.snippet_chars)

    def _scan_id(self, key: _PatternKey, need_all: bool) -> str:
        return check_key("scan", key[0], key[1], need_all, *self._settings)

    def _index_id(self) -> str:
        # The file's name appears in a syntax error's message.
        return check_key("index", self.rel, *self._settings)

    def replay(self, session: EngineSession, lit: _Planned, nolit: _Planned, module: bool) -> bool:
        """Serve all of this file's planned work from the cache; ``False`` when any result
        is missing (nothing is applied then)."""
        if self.key is None:
            return False
        results = self.cache.results(self.key)
        if results is None:
            return False
        found: list[tuple[_PatternKey, Any]] = []
        for planned in (lit, nolit):
            for key, need_all in (planned or {}).items():
                stored = results.get(self._scan_id(key, need_all))
                if stored is None:
                    return False
                if stored or key in session._found:
                    found.append((key, stored))
        index = None
        if module:
            index = results.get(self._index_id())
            if index is None:
                return False
        self.cache.hits += 1
        for key, stored in found:
            _apply(session, key, self.real, stored)
        session.mark_done(self.real, lit, nolit)
        if index is not None:
            session._modules[self.real] = _index_from_json(index)
        return True

    def hashed(self, text: str) -> None:
        """The file was read: key its results by its content from now on."""
        self.key = content_key(text, self.mode)
        self.cache.remember(self.real, self.mode, self.key)

    def reuse(self, session: EngineSession, key: _PatternKey, need_all: bool) -> bool:
        """Apply a stored search of ``key`` in this content, if there is one."""
        if self.key is None:
            return False
        stored = self.cache.get(self.key, self._scan_id(key, need_all))
        if stored is None:
            return False
        _apply(session, key, self.real, stored)
        return True

    def reuse_index(self, session: EngineSession) -> bool:
        """Apply a stored symbol index of this content, if there is one."""
        if self.key is None:
            return False
        stored = self.cache.get(self.key, self._index_id())
        if stored is None:
            return False
        session._modules[self.real] = _index_from_json(stored)
        return True

    def store(self, session: EngineSession, lit: _Planned, nolit: _Planned, module: bool) -> None:
        """Store this file's results as the pass left them (patterns the prefilter ruled
        out are stored as no match; time-outs are not stored)."""
        if self.key is None:
            return
        for planned in (lit, nolit):
            for key, need_all in (planned or {}).items():
                scan = session._found.get(key, {}).get(self.real)
                if scan is not None and (scan.timed_out or scan.skipped):
                    continue
                matches = [] if scan is None else [list(m) for m in scan.matches]
                if not need_all:
                    matches = matches[:1]
                self.cache.put(self.key, self._scan_id(key, need_all), matches)
        if module and self.real in session._modules:
            self.cache.put(self.key, self._index_id(), _index_to_json(session._modules[self.real]))


def _apply(session: EngineSession, key: _PatternKey, real: str, stored: Any) -> None:
    if stored:
        scan = FileScan(matches=tuple((int(m[0]), int(m[1]), str(m[2])) for m in stored))
        session._found.setdefault(key, {})[real] = scan
    else:
        session._found.get(key, {}).pop(real, None)


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
