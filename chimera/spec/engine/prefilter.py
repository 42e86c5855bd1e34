"""Which planned patterns may match a text, from their required literals: one RE2 ``Set``
(the ``fast`` extra) or an Aho-Corasick automaton over rare anchored suffixes, then substring
searches for a pattern's other literal sets."""

from __future__ import annotations

import importlib
import operator
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

import ahocorasick

_PatternKey = tuple[str, bool]


RE2_SET_MAX_MEM = 256 * 1024 * 1024
"""Memory budget of the RE2 ``Set`` (program and DFA cache); bytes."""

_END = "\0"
"""The sentinel literal appended to every text the ``Set`` searches (see :class:`_LiteralSet`)."""


class _LiteralSet:
    """Which planned patterns may match a text, from their required literals, with one
    RE2 ``Set`` of literal strings (the ``fast`` extra, ``google-re2``): one DFA pass per
    file in C++ that returns the distinct literals present.

    Only literals go to RE2 (``Options.literal``): a literal's occurrence in the UTF-8
    bytes of a text is exactly its occurrence in the text (UTF-8 is self-synchronising), so
    the answer is the same set :class:`Prefilter` gives; patterns themselves always run on
    the ``regex`` module. A text that cannot be encoded (a lone surrogate) falls back to
    substring searches.

    A failed match must never read as "no literal here" (that would pass an ``absent``
    unsearched): the binding drops ``RE2::Set::Match``'s result flag and returns an empty
    list when the DFA fails (out of memory), exactly as for a text without a literal. So
    every text is searched with a sentinel literal (a NUL byte) appended; an answer
    without the sentinel means the DFA did not reach the end, and that text and every later
    one go to the Aho-Corasick :class:`Prefilter` instead.
    """

    def __init__(
        self,
        by_literal: dict[str, set[_PatternKey]],
        re2: Any,
        max_mem: int | None = None,
        also: Iterable[str] = (),
    ) -> None:
        # The DFA's cost per byte hardly depends on how many literals it knows, so the
        # patterns' other necessary literals go in too: their presence is then known
        # exactly, without a substring search per pattern (``exact``).
        self.literals = sorted(set(by_literal).union(also))
        self.keys = {lit: tuple(by_literal.get(lit, ())) for lit in self.literals}
        self.exact: frozenset[str] = frozenset(self.literals)
        """Literals whose absence from :meth:`hits` means absence from the text."""
        self._by_literal = by_literal
        options = re2.Options()
        options.literal = True
        options.max_mem = RE2_SET_MAX_MEM if max_mem is None else max_mem
        options.log_errors = False  # a failure is handled below, not logged to stderr
        self._set = re2.Set.SearchSet(options)
        for literal in self.literals:
            self._set.Add(literal)
        self._end = self._set.Add(_END)
        self._set.Compile()
        self.fallback: Prefilter | None = None
        """The automaton used once a match has failed (``None`` until then)."""

    def hits(self, text: str) -> set[str]:
        """The literals present in ``text`` (exactly, or a superset after a failure)."""
        if self.fallback is not None:
            return self.fallback.hits(text)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return {lit for lit in self.literals if lit in text}
        found = set(self._set.Match(data + b"\0") or ())
        if self._end not in found:
            # The DFA gave up: the answer says nothing. A failure is not a one-off (the
            # budget is fixed), so the automaton takes over for the rest of the pass.
            self.fallback = Prefilter(self._by_literal)
            self.exact = frozenset()
            return self.fallback.hits(text)
        found.discard(self._end)
        literals = self.literals
        return {literals[i] for i in found}


def make_prefilter(
    by_literal: dict[str, set[_PatternKey]], also: Iterable[str] = ()
) -> Prefilter | _LiteralSet:
    """The prefilter for ``by_literal`` (literal -> the patterns it may admit); ``also``:
    more literals whose presence :func:`has_all` asks about, known exactly when RE2 is."""
    try:
        re2 = importlib.import_module("re2")
    except ImportError:
        return Prefilter(by_literal)
    try:
        return _LiteralSet(by_literal, re2, also=also)
    except Exception:  # RE2 refused the set (memory limit): the automaton always works
        return Prefilter(by_literal)


class Prefilter:
    """Which planned patterns may match a text, from their required literals.

    Rare literals share one Aho-Corasick automaton: one pass over the text finds all of
    them. Two measured costs shape it (pyahocorasick, CPython 3.11):

    * the automaton's time per character grows with the number of distinct first letters of
      its keys (its root's fan-out), so each literal is represented by a suffix that starts
      at one of a few rare "anchor" characters, chosen by greedy set cover — a suffix of a
      required literal is itself required, so this only adds false positives, never misses;
    * a literal occurring on many lines would make the pass yield at nearly every line;
      such a literal is tested with a plain substring search instead, which stops at its
      first occurrence. The first files of a pass are sampled with ``str.count`` (which also
      gives the character frequencies for the anchors); afterwards a literal present in most
      files moves too. The automaton's hits are deduplicated in C (``set(map(...))``), so no
      Python code runs per occurrence.
    """

    SAMPLE = 24
    REBALANCE_EVERY = 64
    COMMON_SHARE = 0.5
    """Share of files containing a literal above which it counts as common."""
    COMMON_PER_FILE = 20.0
    """Average occurrences per file above which a literal counts as common anyway."""
    MIN_KEY = 4
    """Shortest anchored suffix used as a key (shorter ones would hit everywhere)."""

    exact: frozenset[str] = frozenset()
    """Anchored keys give a superset: no literal's absence is known exactly."""

    def __init__(self, by_literal: dict[str, set[_PatternKey]], also: Iterable[str] = ()) -> None:
        del also  # substring searches answer for those, only where a pattern needs them
        self.literals = sorted(by_literal)
        self.keys = {lit: tuple(by_literal[lit]) for lit in self.literals}
        """The pattern keys that need each literal."""
        self.occurrences = [0] * len(self.literals)
        self.present = [0] * len(self.literals)
        self.char_counts: dict[str, int] = dict.fromkeys(
            {c for lit in self.literals for c in lit}, 0
        )
        self.files = 0
        self.common: set[int] = set()
        self.automaton: ahocorasick.Automaton | None = None

    def hits(self, text: str) -> set[str]:
        """The literals present in ``text`` (a superset, for anchored keys)."""
        found: set[int] = set()
        self.files += 1
        if self.files <= self.SAMPLE:
            for idx, literal in enumerate(self.literals):
                n = text.count(literal)
                if n:
                    found.add(idx)
                    self.occurrences[idx] += n
            for char in self.char_counts:
                self.char_counts[char] += text.count(char)
            if self.files == self.SAMPLE:
                self._rebalance()
        else:
            if self.automaton is not None:
                # Distinct keys found, deduplicated in C: no Python code runs per occurrence.
                for ids in set(map(_second, self.automaton.iter(text))):
                    found.update(ids)
            for idx in self.common:
                if self.literals[idx] in text:
                    found.add(idx)
            if self.files % self.REBALANCE_EVERY == 0:
                self._rebalance()
        present = self.present
        literals = self.literals
        out: set[str] = set()
        for idx in found:
            present[idx] += 1
            out.add(literals[idx])
        return out

    def _rebalance(self) -> None:
        share = self.files * self.COMMON_SHARE
        many = self.SAMPLE * self.COMMON_PER_FILE
        # Occurrences are counted in the sample only; afterwards presence decides.
        common = self.common | {
            i
            for i in range(len(self.literals))
            if self.present[i] > share or self.occurrences[i] > many
        }
        if common == self.common and self.automaton is not None:
            return
        self.common = common
        rare = [i for i in range(len(self.literals)) if i not in common]
        self.automaton = None
        if not rare:
            return
        automaton = ahocorasick.Automaton()
        for key, ids in self._anchored_keys(rare).items():
            automaton.add_word(key, tuple(ids))
        automaton.make_automaton()
        self.automaton = automaton

    def _anchored_keys(self, rare: list[int]) -> dict[str, list[int]]:
        """A suffix per literal, starting at few, rare characters (greedy set cover)."""
        options: dict[int, dict[str, str]] = {}
        for idx in rare:
            literal = self.literals[idx]
            starts = range(max(1, len(literal) - self.MIN_KEY + 1))
            choices: dict[str, str] = {}
            for i in starts:
                choices.setdefault(literal[i], literal[i:])
            options[idx] = choices
        keys: dict[str, list[int]] = {}
        left = set(rare)
        while left:
            cover: dict[str, int] = {}
            for idx in left:
                for char in options[idx]:
                    cover[char] = cover.get(char, 0) + 1
            anchor = max(
                sorted(cover), key=lambda c: cover[c] / (self.char_counts.get(c, 0) + 1) ** 0.5
            )
            for idx in [i for i in left if anchor in options[i]]:
                keys.setdefault(options[idx][anchor], []).append(idx)
                left.discard(idx)
        return keys


_second = operator.itemgetter(1)


def has_all(
    sets: tuple[frozenset[str], ...],
    text: str,
    seen: dict[str, bool],
    present: AbstractSet[str] = frozenset(),
    exact: AbstractSet[str] = frozenset(),
) -> bool:
    """Whether ``text`` has a string of every set after the first (which the prefilter
    already found): a literal in ``exact`` is present when it is in ``present`` (the
    prefilter's exact answer); others are searched for, memoised per file in ``seen``."""
    for need in sets[1:]:
        for literal in need:
            if literal in exact:
                found = literal in present
            else:
                known = seen.get(literal)
                found = seen[literal] = literal in text if known is None else known
            if found:
                break
        else:
            return False
    return True
