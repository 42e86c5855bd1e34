"""Patterns: compiled once, searched with a time limit, prefiltered by required literals.

Every pattern is compiled by the ``regex`` module with ``MULTILINE`` (so ``^``/``$`` work per
line over the whole text) and searched with a time limit, which turns catastrophic
backtracking into a :class:`TimeoutError` instead of a hung run: a wall-clock deadline where
one can be armed (:mod:`.deadline`), else ``regex``'s own ``timeout=`` (CPU time).

The prefilter is the classic "required literals" analysis used by fast grep tools (ripgrep's
literal extraction, Russ Cox's "Regular Expression Matching with a Trigram Index"): from the
parsed pattern we derive a set of strings at least one of which must occur in any text the
pattern matches — several such sets when the pattern has several necessary parts, all of which
must then be present. All those literals of a run go into one Aho-Corasick automaton
(pyahocorasick), so each file is scanned once for every pattern at the same time, and the real
regex runs only on the files where one of its literals occurs. The analysis uses the stdlib
``re`` parser and is conservative: whenever ``re`` would read the pattern differently from
``regex`` (syntax only ``regex`` knows, fuzzy ``{e<=1}`` suffixes, POSIX classes, any parser
warning) or the pattern ignores case, the pattern has no prefilter and simply runs on every
file of its scope — slower, never wrong.

Why one module past ~400 lines: the literal analysis, the compile cache and the timed search
share one parsed-pattern representation; the RE2 path lives apart in :mod:`.linear`.
"""

from __future__ import annotations

import functools
import importlib
import re
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import regex

from chimera.spec.engine.deadline import within
from chimera.spec.engine.linear import (
    LinearPattern,
    StandIns,
    compile_linear,
    exact_extents,
    stand_ins,
    translate_wide,
)
from chimera.spec.engine.options import EngineOptions, EngineStats
from chimera.spec.engine.plain import Plain, plain_pattern, plain_search
from chimera.spec.model import one_line

_sre_parse: Any = importlib.import_module("re._parser")
_sre: Any = importlib.import_module("re._constants")

_LITERAL = _sre.LITERAL
_SUBPATTERN = _sre.SUBPATTERN
_BRANCH = _sre.BRANCH
_ASSERT = _sre.ASSERT
_REPEATS = tuple(
    getattr(_sre, name)
    for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    if hasattr(_sre, name)
)
_ATOMIC = getattr(_sre, "ATOMIC_GROUP", None)
_AT = _sre.AT
_LINE_STARTS = (_sre.AT_BEGINNING, _sre.AT_BEGINNING_STRING)
# Plain ints: ``re.IGNORECASE`` is an enum whose ``&`` costs a Python call (130,000 of them
# when analysing 5,000 patterns).
_IGNORECASE = int(_sre.SRE_FLAG_IGNORECASE)
_VERBOSE = int(_sre.SRE_FLAG_VERBOSE)
MAX_REPEAT_CHARS = 64
"""Longest literal taken from one repeated character (`` {40,}``); longer adds little."""
_POSIX_CLASS = re.compile(r"\[:\^?[A-Za-z]+:\]")


class _NoPrefilter(Exception):
    """The pattern cannot be prefiltered safely; run it on every file."""


PATTERN_FLAGS = regex.MULTILINE
"""Flags every Spec pattern is compiled with (validation and search alike)."""


def shown(pattern: str, is_regex: bool) -> str:
    """How a pattern is named in messages, on one line: ``/regex/`` (line breaks escaped, as a
    ``|`` YAML block leaves one at the end) or ``'literal'``."""
    return f"/{one_line(pattern)}/" if is_regex else repr(pattern)


_COMPILED: dict[str, regex.Pattern[str]] = {}
COMPILED_MEMO_SIZE = 16384
"""Compiled patterns kept per process: the spec's validation and the engine compile the
same sources, and ``regex``'s own cache (500 entries) thrashes on a large Spec."""


def pattern_problem(source: str) -> str | None:
    """Why ``source`` is not a valid Spec regex (see :func:`compile_pattern`), or ``None``.

    A :func:`plain_pattern` is valid without compiling, and so is a pattern in the subset
    RE2 reads as ``regex`` does (:func:`_set_sources`: the stdlib parser read it without a
    warning, and it is made only of literals, classes, repeats, groups, alternation and
    anchors — every such pattern compiles in ``regex``, a differential test checks it): the
    parse is the one the engine's analysis needs anyway, so a Spec's patterns are parsed
    once, and ``regex`` compiles only the others (or, later, one a search needs)."""
    if plain_pattern(source) is not None or _set_sources(source, True) is not None:
        return None
    return compile_pattern(source)[1]


def compile_pattern(source: str) -> tuple[regex.Pattern[str] | None, str | None]:
    """Compile a Spec regex with :data:`PATTERN_FLAGS` (memoised per process).

    Returns:
        ``(compiled, None)``, or ``(None, problem)`` where ``problem`` is one line naming
        the pattern, the reason and its 0-based position (``invalid pattern /a(/: missing )
        at position 2``). Never raises.
    """
    known = _COMPILED.get(source)
    if known is not None:
        return known, None
    try:
        compiled = regex.compile(source, PATTERN_FLAGS)
        if len(_COMPILED) >= COMPILED_MEMO_SIZE:
            _COMPILED.clear()
        _COMPILED[source] = compiled
        return compiled, None
    except regex.error as exc:
        pos = getattr(exc, "pos", None)
        where = f" at position {pos}" if pos is not None else ""
        msg = getattr(exc, "msg", None) or str(exc)
        return None, f"invalid pattern {shown(source, True)}: {one_line(msg)}{where}"
    except (ValueError, OverflowError, RecursionError) as exc:
        return None, f"invalid pattern {shown(source, True)}: {one_line(str(exc))}"


@dataclass(frozen=True)
class CompiledPattern:
    """A pattern ready to search.

    Attributes:
        source: the pattern as written in the Spec.
        is_regex: ``False`` for ``regex: false`` (a literal searched with ``str.find``).
        compiled: the compiled ``regex`` pattern (``None`` for literals and on error).
        error: a one-line compile error with its position, or ``None``.
        literals: every string the prefilter looks for (the union of ``literal_sets``);
            ``None`` means no prefilter (search every file).
        literal_sets: the prefilter's conditions — a text can match only if, for each set,
            it contains one of the set's strings.
    """

    source: str
    is_regex: bool
    compiled: regex.Pattern[str] | None
    error: str | None
    literals: frozenset[str] | None
    literal_sets: tuple[frozenset[str], ...] = ()
    """Every necessary set (a text can match only if it has a string of each)."""
    plain: Plain | None = None
    """Set for a :func:`plain_pattern`: searched without ``regex`` (``compiled`` is ``None``)."""
    prefix: str | None = None
    """The literal every match starts with, behind a leading ``^`` (see
    :func:`line_start_prefix`); searches then jump between its occurrences."""
    use_linear: bool = False
    """Whether the pattern's own RE2 form (:attr:`linear`) may be tried; it is analysed and
    compiled only when first needed (most patterns are decided by the combined matcher)."""
    deferred: bool = False
    """The ``regex`` form is compiled on first use (validation proved the pattern compiles
    without compiling it: see :func:`pattern_problem`); ``compiled`` is ``None`` until then."""
    set_ascii: str | None = None
    """The pattern for a combined RE2 ``Set`` over UTF-8 bytes, exact on ASCII texts
    (:func:`~chimera.spec.engine.linear.translate_wide` with word boundaries), or ``None``."""
    set_wide: str | None = None
    """The same for any text: a superset unless ``wide_exact``."""
    wide_exact: bool = False
    """Whether ``set_wide`` matches exactly where the pattern does, on every text."""

    @property
    def key(self) -> tuple[str, bool]:
        return (self.source, self.is_regex)

    @functools.cached_property
    def _linear_parts(self) -> tuple[LinearPattern | None, bool, StandIns | None]:
        if not self.use_linear:
            return None, False, None
        return _linear_of(self.source)

    @property
    def linear(self) -> LinearPattern | None:
        """The pattern in RE2 (:mod:`chimera.spec.engine.linear`), used on ASCII texts only to
        find whether and where the leftmost match is; ``None`` when there is no exact one."""
        return self._linear_parts[0]

    @property
    def linear_all(self) -> bool:
        """Whether ``linear`` also finds every match exactly (:func:`exact_extents`)."""
        return self._linear_parts[1]

    @property
    def stand_ins(self) -> StandIns | None:
        """With ``linear``: the stand-ins of the ASCII images of non-ASCII texts it may
        search (:class:`~chimera.spec.engine.linear.AsciiImages`)."""
        return self._linear_parts[2]

    def regex_form(self) -> regex.Pattern[str]:
        """The compiled ``regex`` pattern (compiled now if it was deferred)."""
        if self.compiled is None:
            compiled, problem = compile_pattern(self.source)
            if compiled is None:  # validation said it compiles: never expected
                raise ValueError(problem)
            object.__setattr__(self, "compiled", compiled)
            return compiled
        return self.compiled

    @property
    def shown(self) -> str:
        return shown(self.source, self.is_regex)

    def search(
        self, text: str, *, first_only: bool, timeout: float, ascii_bytes: bytes | None = None
    ) -> list[int]:
        """Start offsets of the matches in ``text`` (just the first when ``first_only``).

        ``ascii_bytes`` is ``text`` encoded when it is ASCII, or its ASCII image for this
        pattern (:class:`~chimera.spec.engine.linear.AsciiImages`; same offsets, same
        matches): then the linear engine (when the pattern has one) finds the leftmost
        match, and ``regex`` runs only from there, only when every match is wanted.

        Raises:
            TimeoutError: the regex ran past ``timeout`` seconds (not for literals).
        """
        if not self.is_regex:
            return list(_find_all(text, self.source, first_only))
        if self.plain is not None:
            return plain_search(text, self.plain, first_only)
        start = 0
        if ascii_bytes is not None and self.linear is not None:
            every = self.linear_all and not first_only
            found = self.linear.starts(ascii_bytes, every=every)
            if found is not None:
                if every or not found:
                    return found
                start = found[0]
                if first_only:
                    return [start]
        if self.prefix is not None:
            return within(timeout, lambda: self._jump_search(text, first_only, timeout, start))
        compiled = self.regex_form()
        if first_only:
            m = within(timeout, lambda: compiled.search(text, timeout=timeout))
            return [] if m is None else [m.start()]
        # Starting at the leftmost match changes nothing: ``regex`` would find no match
        # before it, and ``^``/``\b`` still see the text before ``start``.
        return within(
            timeout, lambda: [m.start() for m in compiled.finditer(text, start, timeout=timeout)]
        )

    def _jump_search(
        self, text: str, first_only: bool, timeout: float, start: int = 0
    ) -> list[int]:
        """``search``/``finditer`` for a pattern whose every match starts with ``prefix``:
        the same matches, trying the pattern only where the prefix occurs (``match`` at a
        position sees the text before it, so ``^``, ``\\b`` and lookbehinds behave as in a
        search). The time limit covers the whole text, as for one ``finditer``."""
        assert self.prefix is not None
        match = self.regex_form().match
        prefix = self.prefix
        deadline = time.monotonic() + timeout
        out: list[int] = []
        pos = text.find(prefix, start)
        while pos >= 0:
            if pos and text[pos - 1] != "\n":
                # Every match starts at a line start (behind ``^`` or ``\A``): none starts
                # here, nor further on this line; ``regex`` need not be asked.
                eol = text.find("\n", pos)
                pos = -1 if eol < 0 else text.find(prefix, eol + 1)
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("regex timed out")
            m = match(text, pos, timeout=left)
            if m is None:
                pos = text.find(prefix, pos + 1)
                continue
            out.append(pos)
            if first_only:
                break
            # Matches never overlap, and cannot be empty (they hold the prefix).
            pos = text.find(prefix, m.end())
        return out


def _find_all(text: str, needle: str, first_only: bool) -> Iterator[int]:
    pos = text.find(needle)
    while pos >= 0:
        yield pos
        if first_only:
            return
        pos = text.find(needle, pos + len(needle))


class PatternCache:
    """Compiles each distinct pattern once per session (counted in ``stats.compiles``)."""

    def __init__(self, options: EngineOptions, stats: EngineStats) -> None:
        self.options = options
        self.stats = stats
        self._cache: dict[tuple[str, bool], CompiledPattern] = {}

    def get(self, source: str, is_regex: bool) -> CompiledPattern:
        key = (source, is_regex)
        cp = self._cache.get(key)
        if cp is None:
            cp = self._compile(source, is_regex)
            self._cache[key] = cp
        return cp

    def _compile(self, source: str, is_regex: bool) -> CompiledPattern:
        cp = self._compile_one(source, is_regex)
        if cp.error is not None:
            return cp
        sets = _set_sources(source, is_regex)
        if sets is None:
            return cp
        return replace(cp, set_ascii=sets[0], set_wide=sets[1], wide_exact=sets[2])

    def _compile_one(self, source: str, is_regex: bool) -> CompiledPattern:
        if not is_regex:
            if len(source) < self.options.min_literal_chars:
                return CompiledPattern(source, False, None, None, None)
            whole = frozenset({source})
            return CompiledPattern(source, False, None, None, whole, literal_sets=(whole,))
        plain = plain_pattern(source)
        if plain is not None:
            whole = frozenset({plain[0]})
            if len(plain[0]) < self.options.min_literal_chars:
                return CompiledPattern(source, True, None, None, None, plain=plain)
            return CompiledPattern(
                source, True, None, None, whole, literal_sets=(whole,), plain=plain
            )
        # Compiled once per session: analysed (parsed, translated) here, and compiled by
        # ``regex`` here too unless RE2 reads it (then only if a search needs ``regex``).
        self.stats.compiles[source] += 1
        deferred = _set_sources(source, True) is not None
        compiled: regex.Pattern[str] | None = None
        if not deferred:
            compiled, problem = compile_pattern(source)
            if compiled is None:
                return CompiledPattern(source, True, None, problem, None)
        sets = required_literal_sets(source, self.options.min_literal_chars)
        prefix = line_start_prefix(source, self.options.min_literal_chars)
        # A pattern with a line-start prefix already jumps between the prefix's occurrences,
        # which measured faster than a linear scan of the whole text.
        use_linear = self.options.linear_engine and prefix is None
        return CompiledPattern(
            source,
            True,
            compiled,
            None,
            frozenset().union(*sets) if sets else None,
            literal_sets=sets or (),
            prefix=prefix,
            use_linear=use_linear,
            deferred=deferred,
        )


def _linear_of(source: str) -> tuple[LinearPattern | None, bool, StandIns | None]:
    # The same guards as the literal analysis: wherever ``re``'s parser may read the
    # pattern differently from ``regex``, there is no second engine.
    if "[:" in source or _FUZZY_RISK.search(source):
        return None, False, None
    parsed = _parsed(source)
    linear = None if parsed is None else compile_linear(parsed)
    if linear is None:
        return None, False, None
    return linear, exact_extents(parsed), stand_ins(parsed)


@functools.lru_cache(maxsize=16384)
def _set_sources(source: str, is_regex: bool) -> tuple[str, str, bool] | None:
    """``(ascii, wide, wide_exact)`` for a combined RE2 ``Set`` (see
    :func:`~chimera.spec.engine.linear.translate_wide`), or ``None`` when the pattern has no
    translation (or ``re``'s parser may read it differently from ``regex``). Memoised: the
    validation of a Spec and its engine ask for the same patterns."""
    if not is_regex:
        literal = "".join(f"\\x{{{ord(c):x}}}" for c in source)
        return literal, literal, True
    if "[:" in source or _FUZZY_RISK.search(source):
        return None
    parsed = _parsed(source)
    if parsed is None:
        return None
    ascii_form = translate_wide(parsed, boundaries=True)
    wide_form = translate_wide(parsed)
    if ascii_form is None or wide_form is None:
        return None
    return ascii_form[0], wide_form[0], wide_form[1]


MAX_LITERAL_SETS = 3
"""How many independent literal requirements of one pattern the prefilter checks."""


def required_literal_sets(
    pattern: str, min_chars: int = 2, limit: int = MAX_LITERAL_SETS
) -> tuple[frozenset[str], ...] | None:
    """Independent necessary conditions of ``pattern``: each set has a string that occurs
    in every text the pattern matches (``log\\(.*DEBUG`` needs ``log(`` *and*
    ``DEBUG``). At most ``limit`` sets, best first; ``None`` when none is known with every
    string at least ``min_chars`` long, or when the pattern may mean something else to the
    ``regex`` module than to the ``re`` parser used for the analysis (see the module
    docstring).
    """
    if "[:" in pattern:
        if "\\[" in pattern:
            return None  # an escaped bracket next to a POSIX-like class: not worth the risk
        # `regex` knows POSIX classes (`[[:space:]]`), `re` does not; any one-character
        # class stands in for them here, since the analysis only needs to know that a
        # single non-literal character is matched there.
        pattern = _POSIX_CLASS.sub(r"\\w", pattern)
    parsed = _parsed(pattern)
    if parsed is None or parsed.state.flags & _IGNORECASE:
        return None
    try:
        found = _candidates(list(parsed))
    except _NoPrefilter:
        return None
    usable = sorted(
        {c for c in found if min(len(s) for s in c) >= min_chars}, key=_score, reverse=True
    )
    return tuple(usable[:limit]) or None


def required_literals(pattern: str, min_chars: int = 2) -> frozenset[str] | None:
    """The best single necessary set of :func:`required_literal_sets` (``None`` if none)."""
    sets = required_literal_sets(pattern, min_chars, limit=1)
    return sets[0] if sets else None


@functools.lru_cache(maxsize=16384)
def _parsed(pattern: str) -> Any:
    """``pattern`` parsed by the stdlib ``re`` parser (read-only; shared by both analyses),
    or ``None`` when it does not parse cleanly (errors and warnings alike)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return _sre_parse.parse(pattern, 0)
    except (re.error, Warning, RecursionError, OverflowError, ValueError):
        return None


def _repeated_char(op: Any, av: Any) -> tuple[str, int, bool] | None:
    """``(char, count, exact)`` for a repeat of one literal character at least once."""
    if op not in _REPEATS:
        return None
    lo, hi, p = av
    items = list(p)
    if lo < 1 or len(items) != 1 or items[0][0] is not _LITERAL or items[0][1] == ord("{"):
        return None
    count = min(lo, MAX_REPEAT_CHARS)
    return chr(items[0][1]), count, hi == lo and count == lo


def line_start_prefix(pattern: str, min_chars: int = 2) -> str | None:
    """The literal every match of ``pattern`` starts with, when the pattern begins with
    ``^`` (``^ {40,}\\S`` gives 40 spaces); ``None`` when there is none of ``min_chars``.

    The ``regex`` module finds a leading literal by itself, but not one behind ``^``: it
    then tries the anchor at every position of the text. Knowing the prefix, a search can
    jump from one occurrence of it to the next (see :meth:`CompiledPattern.search`).
    """
    if "[:" in pattern or _FUZZY_RISK.search(pattern):
        return None
    parsed = _parsed(pattern)
    if parsed is None or parsed.state.flags & (_IGNORECASE | _VERBOSE):
        return None
    items = list(parsed)
    if not items or items[0][0] is not _AT or items[0][1] not in _LINE_STARTS:
        return None
    prefix: list[str] = []
    for op, av in items[1:]:
        if op is _LITERAL and av != ord("{"):
            prefix.append(chr(av))
            continue
        repeated = _repeated_char(op, av)
        if repeated is None:
            break
        char, lo, exact = repeated
        prefix.append(char * lo)
        if not exact:
            break
    text = "".join(prefix)
    return text if len(text) >= min_chars else None


_FUZZY_RISK = re.compile(r"\{(?![0-9,]*\})")
"""A ``{`` that is not a plain ``{m,n}`` repeat: it may open a fuzzy constraint of the
``regex`` module (``{e<=1}``), which lets the text before it differ from the pattern."""


def _score(cand: frozenset[str]) -> tuple[int, int, tuple[str, ...]]:
    return (min(len(s) for s in cand), -len(cand), tuple(sorted(cand)))


def _candidates(items: list[tuple[Any, Any]]) -> list[frozenset[str]]:
    """Every necessary literal set found in a sequence of parsed items (each one alone is
    a necessary condition of the sequence matching)."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            candidates.append(frozenset({"".join(run)}))
            run.clear()

    for op, av in items:
        if op is _LITERAL:
            if av == ord("{"):
                # `regex` reads `{e<=1}` after an item as fuzzy matching, `re` as literals:
                # a literal brace may mean the preceding text need not occur verbatim.
                raise _NoPrefilter
            run.append(chr(av))
            continue
        repeated = _repeated_char(op, av)
        if repeated is not None:
            # ` {40,}`: the character occurs `lo` times in a row, joined to the text before;
            # when more may follow, the text after is joined to the last `lo` only.
            char, lo, exact = repeated
            run.append(char * lo)
            if not exact:
                flush()
                run.append(char * lo)
            continue
        flush()
        if op is _SUBPATTERN:
            _group, add_flags, _del_flags, p = av
            if not add_flags & _IGNORECASE:
                candidates.extend(_candidates(list(p)))
        elif op in _REPEATS:
            lo, _hi, p = av
            if lo >= 1:
                candidates.extend(_candidates(list(p)))
        elif _ATOMIC is not None and op is _ATOMIC:
            candidates.extend(_candidates(list(av)))
        elif op is _ASSERT:
            _direction, p = av
            candidates.extend(_candidates(list(p)))
        elif op is _BRANCH:
            # One alternative matches: only a set taking one string from every branch is
            # necessary — the union of each branch's best set.
            _, branches = av
            best: list[frozenset[str]] = []
            for branch in branches:
                found = _candidates(list(branch))
                if not found:
                    best = []
                    break
                best.append(max(found, key=_score))
            if best:
                candidates.append(frozenset().union(*best))
    flush()
    return candidates
