"""One combined matcher per group of patterns: which of them match a file, in one pass over its
bytes.

A group is the set of patterns planned on some files (every file selected by the same scopes
shares one). With RE2 (the ``fast`` extra, ``google-re2``) the matcher is one RE2 ``Set`` in
UTF-8 mode over the file's bytes (its decoded text, UTF-8 encoded: for a UTF-8 file without a
BOM or CRLF, the bytes read), built from each pattern's translation
(:func:`~chimera.spec.engine.linear.translate_wide`):

* on an ASCII text the ``ascii`` translations (word boundaries kept) are exact: a pattern the
  ``Set`` reports matches, one it does not report does not — no per-pattern search;
* on other texts the ``wide`` translations are supersets (``\\w`` and friends take every
  non-ASCII character, ``\\b`` is dropped): a report is a *maybe*, confirmed by the pattern's
  exact search, unless the translation is exact (no category, no boundary);
* a pattern RE2 cannot express (lookarounds, backreferences, inline flags, ...) is a *maybe*
  when its required literals (:func:`~chimera.spec.engine.patterns.required_literal_sets`, put
  into the same ``Set``) are present, or on every file when it has none.

A failed match must never read as "no pattern here" (that would pass an ``absent``
unsearched): the binding drops ``RE2::Set::Match``'s error flag and returns an empty answer
when the DFA runs out of memory, so every ``Set`` also holds ``\\z``, which matches at the end
of every text; an answer without it makes every pattern of the group a *maybe* for that file.
A ``Set`` that does not compile is split in halves until its parts do (a single pattern that
still does not is a *maybe* everywhere).

Without RE2, the matcher is the Aho-Corasick literal prefilter
(:class:`~chimera.spec.engine.prefilter.Prefilter`) and every pattern with its literals
present is a *maybe*.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chimera.spec.engine.prefilter import Prefilter, has_all, make_prefilter

if TYPE_CHECKING:
    from chimera.spec.engine.patterns import CompiledPattern

_PatternKey = tuple[str, bool]

SET_MAX_MEM = 256 * 1024 * 1024
"""Memory budget of one RE2 ``Set`` (program and DFA cache); bytes."""

_END = r"\z"


def load_re2() -> Any | None:
    """The ``re2`` module (``google-re2``), or ``None`` when it is not installed."""
    try:
        return importlib.import_module("re2")
    except ImportError:
        return None


def _literal_source(literal: str) -> str:
    return "".join(f"\\x{{{ord(c):x}}}" for c in literal)


@dataclass
class Hits:
    """What a matcher says about one text: patterns that match (``sure``) and patterns that
    may match (``maybe``: their exact search decides)."""

    sure: set[_PatternKey] = field(default_factory=set)
    maybe: set[_PatternKey] = field(default_factory=set)


class _SetGroup:
    """RE2 ``Set`` s (one, or several after a split) over one list of sources."""

    def __init__(self, re2: Any, sources: Sequence[str], max_mem: int) -> None:
        self.sets: list[tuple[Any, list[int]]] = []
        """Each compiled ``Set`` and, per entry it holds, the index into ``sources``."""
        self.refused: list[int] = []
        """Sources no ``Set`` would take (each a *maybe* everywhere)."""
        self._build(re2, list(range(len(sources))), sources, max_mem)

    def _build(self, re2: Any, indices: list[int], sources: Sequence[str], max_mem: int) -> None:
        if not indices:
            return
        options = re2.Options()
        options.max_mem = max_mem
        options.log_errors = False
        try:
            made = re2.Set.SearchSet(options)
            for i in indices:
                made.Add(sources[i])
            made.Add(_END)
            made.Compile()
        except Exception:  # a source RE2 refuses, or the Set is over its memory budget
            if len(indices) == 1:
                self.refused.append(indices[0])
                return
            half = len(indices) // 2
            self._build(re2, indices[:half], sources, max_mem)
            self._build(re2, indices[half:], sources, max_mem)
            return
        self.sets.append((made, indices))

    def match(self, data: bytes) -> set[int] | None:
        """The indices of the sources that match ``data``; ``None`` when a ``Set`` failed."""
        found: set[int] = set()
        for made, indices in self.sets:
            # The binding answers ``None`` (or ``[]``) when the match failed.
            answer = made.Match(data) or ()
            end = len(indices)
            if end not in answer:
                return None
            found.update(indices[i] for i in answer if i != end)
        return found


class CombinedMatcher:
    """Which of ``patterns`` match a text, in one pass (see the module docstring).

    Args:
        patterns: compiled patterns (each key once).
        re2: the ``re2`` module, or ``None`` for the literal prefilter alone.
        max_mem: budget of each RE2 ``Set``; bytes.
    """

    def __init__(
        self,
        patterns: Sequence[CompiledPattern],
        re2: Any | None,
        max_mem: int = SET_MAX_MEM,
    ) -> None:
        self.patterns = {cp.key: cp for cp in patterns}
        self._re2 = re2
        self._max_mem = max_mem
        self.always: set[_PatternKey] = set()
        """Patterns searched on every file (no translation and no required literal)."""
        by_literal: dict[str, set[_PatternKey]] = {}
        others: set[str] = set()
        self._translated: list[CompiledPattern] = []
        for cp in self.patterns.values():
            if re2 is not None and cp.set_ascii is not None:
                self._translated.append(cp)
            elif cp.literal_sets:
                for literal in cp.literal_sets[0]:
                    by_literal.setdefault(literal, set()).add(cp.key)
                for need in cp.literal_sets[1:]:
                    others.update(need)
            else:
                self.always.add(cp.key)
        self._by_literal = by_literal
        self._others = others
        self._literals = sorted(set(by_literal).union(others))
        self._ascii: _SetGroup | None = None
        self._wide: _SetGroup | None = None
        self._prefilter: Prefilter | Any | None = None
        self.failures = 0
        """Texts on which a ``Set`` failed (every pattern was a *maybe* there)."""

    # -- building ---------------------------------------------------------------------

    def _sources(self, wide: bool) -> list[str]:
        out = [cp.set_wide if wide else cp.set_ascii for cp in self._translated]
        return [s for s in out if s is not None] + [_literal_source(x) for x in self._literals]

    def _group(self, wide: bool) -> _SetGroup:
        if wide:
            if self._wide is None:
                self._wide = _SetGroup(self._re2, self._sources(True), self._max_mem)
            return self._wide
        if self._ascii is None:
            self._ascii = _SetGroup(self._re2, self._sources(False), self._max_mem)
        return self._ascii

    # -- matching ---------------------------------------------------------------------

    def hits(self, text: str, data: bytes | None, ascii: bool) -> Hits:
        """What matches ``text``; ``data`` is its UTF-8 encoding (``None``: not encodable,
        e.g. a lone surrogate — every pattern is then a *maybe*), ``ascii`` whether it is
        all ASCII."""
        if self._re2 is None:
            return self._prefiltered(text)
        out = Hits(maybe=set(self.always))
        if data is None:
            out.maybe.update(self.patterns)
            return out
        group = self._group(not ascii)
        found = group.match(data)
        if found is None:
            self.failures += 1
            out.maybe.update(self.patterns)
            return out
        translated = self._translated
        n = len(translated)
        present: set[str] = set()
        for i in found:
            if i < n:
                cp = translated[i]
                if ascii or cp.wide_exact:
                    out.sure.add(cp.key)
                else:
                    out.maybe.add(cp.key)
            else:
                present.add(self._literals[i - n])
        for i in group.refused:
            if i < n:
                out.maybe.add(translated[i].key)
            else:
                present.add(self._literals[i - n])  # unknown: counted as present
        if present:
            exact = frozenset(self._literals).difference(
                self._literals[i - n] for i in group.refused if i >= n
            )
            self._admit(text, present, exact, out)
        return out

    def _admit(self, text: str, present: set[str], exact: frozenset[str], out: Hits) -> None:
        """The untranslated patterns whose required literals ``present`` (and the text) hold."""
        seen: dict[str, bool] = {}
        for literal in present:
            for key in self._by_literal.get(literal, ()):
                if key in out.maybe:
                    continue
                sets = self.patterns[key].literal_sets
                if len(sets) < 2 or has_all(sets, text, seen, present, exact):
                    out.maybe.add(key)

    def _prefiltered(self, text: str) -> Hits:
        out = Hits(maybe=set(self.always))
        if not self._by_literal:
            return out
        if self._prefilter is None:
            self._prefilter = make_prefilter(self._by_literal, self._others)
        prefilter = self._prefilter
        present = prefilter.hits(text)
        self._admit(text, present, prefilter.exact, out)
        return out
