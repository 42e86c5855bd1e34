"""A linear-time second engine (RE2, the ``fast`` extra) for patterns it reads identically.

The Spec's dialect is the ``regex`` module's; RE2 only answers two questions for it, and only
on ASCII texts: *is there a match?* and *where does the leftmost one start?*. Both answers are
properties of the language a pattern denotes, not of the engine, as long as the pattern is
truly regular (no backreferences, lookarounds, atomic groups or possessive repeats) and both
engines read every construct the same way. On ASCII text that holds for the subset translated
here: literals, ``.`` (not across ``\\n``), classes, ``\\d \\w \\s`` and their negations
(Unicode-aware in ``regex``, but on ASCII characters they are ``[0-9]``, ``[0-9A-Za-z_]`` and
``[\\t-\\r ]``), greedy and lazy repeats, groups, alternation, ``^ $`` per line, ``\\A \\Z \\b
\\B``. Anything else — and any pattern with inline flags — gets no second engine.

The session then skips ``regex`` entirely on a file without a match, and starts ``regex``'s
own search at the leftmost match when it needs every match (so evidence is ``regex``'s).

A text that is not ASCII is searched through its ASCII image (:class:`AsciiImages`): each
non-ASCII character replaced, one for one, by an ASCII character of the same ``\\s``/``\\w``/
``\\d`` class that the pattern never names, on which the pattern matches at the same places.

About 450 lines on purpose: the translated subset and the ASCII images rest on one reading of
each construct on ASCII text (which classes a pattern names, which characters stand in); kept
together, the two cannot drift apart.
"""

from __future__ import annotations

import codecs
import importlib
from typing import Any

_sre: Any = importlib.import_module("re._constants")

_ASCII_MAX = 0x7F
_UNICODE_MAX = 0x10FFFF
_CATEGORIES: dict[Any, list[tuple[int, int]]] = {
    _sre.CATEGORY_DIGIT: [(0x30, 0x39)],
    _sre.CATEGORY_WORD: [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
    _sre.CATEGORY_SPACE: [(0x09, 0x0D), (0x20, 0x20)],
}
_NEGATED = {
    _sre.CATEGORY_NOT_DIGIT: _sre.CATEGORY_DIGIT,
    _sre.CATEGORY_NOT_WORD: _sre.CATEGORY_WORD,
    _sre.CATEGORY_NOT_SPACE: _sre.CATEGORY_SPACE,
}
_AT = {
    _sre.AT_BEGINNING: "^",
    _sre.AT_END: "$",
    _sre.AT_BEGINNING_STRING: r"\A",
    _sre.AT_END_STRING: r"\z",
    _sre.AT_BOUNDARY: r"\b",
    _sre.AT_NON_BOUNDARY: r"\B",
}
_ALLOWED_FLAGS = _sre.SRE_FLAG_UNICODE | _sre.SRE_FLAG_MULTILINE
_RE2_MAX_COUNT = 1000


class _Untranslatable(Exception):
    pass


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in sorted(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = max(nxt, hi + 1)
    if nxt <= _ASCII_MAX:
        out.append((nxt, _ASCII_MAX))
    return out


def _class_ranges(
    items: list[tuple[Any, Any]], wide: bool = False
) -> tuple[bool, list[tuple[int, int]], bool]:
    """``(negated, ranges, has_category)`` of a class; ranges are clipped to ASCII unless
    ``wide`` (a category contributes its ASCII part either way)."""
    negate = False
    category = False
    ranges: list[tuple[int, int]] = []
    for op, av in items:
        if op is _sre.NEGATE:
            negate = True
        elif op is _sre.LITERAL:
            ranges.append((av, av))
        elif op is _sre.RANGE:
            ranges.append(av)
        elif op is _sre.CATEGORY and av in _CATEGORIES:
            ranges.extend(_CATEGORIES[av])
            category = True
        elif op is _sre.CATEGORY and av in _NEGATED:
            ranges.extend(_complement(_CATEGORIES[_NEGATED[av]]))
            category = True
        else:
            raise _Untranslatable
    if wide:
        return negate, ranges, category
    # Only ASCII characters exist in the texts this engine sees: clip to them.
    clipped = [(lo, min(hi, _ASCII_MAX)) for lo, hi in ranges if lo <= _ASCII_MAX]
    return negate, clipped, category


def _char(code: int) -> str:
    return f"\\x{{{code:x}}}"


def _body(ranges: list[tuple[int, int]]) -> str:
    return "".join(_char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}" for lo, hi in ranges)


class _Wide:
    """Whether a wide translation stayed exact (no category, no word boundary), and whether
    it keeps word boundaries."""

    def __init__(self) -> None:
        self.exact = True
        self.boundaries = False


def _class(items: list[tuple[Any, Any]], wide: _Wide | None = None) -> str:
    negate, ranges, category = _class_ranges(items, wide is not None)
    if wide is not None:
        # Every code point: explicit members are exact; a category's non-ASCII members are
        # unknown here, so a positive class takes them all and a negated one none of them
        # (both supersets of what ``regex`` matches).
        if category:
            wide.exact = False
            if not negate:
                ranges = [*ranges, (_ASCII_MAX + 1, _UNICODE_MAX)]
        if not ranges:
            raise _Untranslatable
        return f"[{'^' if negate else ''}{_body(sorted(ranges))}]"
    if negate:
        # Complemented within ASCII, so a negated class never matches past ASCII either way.
        ranges = _complement(ranges)
    if not ranges:
        raise _Untranslatable  # matches nothing: rare, left to ``regex``
    return f"[{_body(ranges)}]"


def _seq(items: list[tuple[Any, Any]], wide: _Wide | None = None) -> str:
    return "".join(_item(op, av, wide) for op, av in items)


def _item(op: Any, av: Any, wide: _Wide | None = None) -> str:
    if op is _sre.LITERAL:
        if av > _ASCII_MAX and wide is None:
            raise _Untranslatable
        return _char(av)
    if op is _sre.NOT_LITERAL:
        if wide is not None:
            return f"[^{_char(av)}]"
        return _class([(_sre.NEGATE, None), (_sre.LITERAL, av)])
    if op is _sre.ANY:
        return "."
    if op is _sre.IN:
        return _class(list(av), wide)
    if op is _sre.CATEGORY:
        return _class([(op, av)], wide)
    if op is _sre.AT:
        if av not in _AT:
            raise _Untranslatable
        if wide is not None and av in (_sre.AT_BOUNDARY, _sre.AT_NON_BOUNDARY):
            if wide.boundaries:
                wide.exact = False
                return _AT[av]
            # RE2's word boundaries are ASCII-only: dropped, the match set only grows.
            wide.exact = False
            return ""
        return _AT[av]
    if op is _sre.BRANCH:
        return "(?:" + "|".join(_seq(list(b), wide) for b in av[1]) + ")"
    if op is _sre.SUBPATTERN:
        _group, add_flags, del_flags, p = av
        if add_flags or del_flags:
            raise _Untranslatable
        return f"(?:{_seq(list(p), wide)})"
    if op is _sre.MAX_REPEAT or op is _sre.MIN_REPEAT:
        lo, hi, p = av
        unbounded = hi == _sre.MAXREPEAT
        if lo > _RE2_MAX_COUNT or (not unbounded and hi > _RE2_MAX_COUNT):
            raise _Untranslatable
        count = f"{{{lo},}}" if unbounded else f"{{{lo},{hi}}}"
        lazy = "?" if op is _sre.MIN_REPEAT else ""
        return f"(?:{_seq(list(p), wide)}){count}{lazy}"
    raise _Untranslatable


def translate(parsed: Any) -> str | None:
    """The RE2 pattern that matches exactly where ``parsed`` (a stdlib ``re`` parse of a Spec
    pattern whose reading ``regex`` shares) matches, on ASCII texts; ``None`` when the
    pattern uses anything outside the translated subset (see the module docstring)."""
    if parsed.state.flags & ~_ALLOWED_FLAGS:
        return None
    try:
        return "(?m)" + _seq(list(parsed))
    except (_Untranslatable, RecursionError):
        return None


def translate_wide(parsed: Any, *, boundaries: bool = False) -> tuple[str, bool] | None:
    """``(pattern, exact)``: an RE2 pattern (UTF-8 mode) that matches the UTF-8 bytes of any
    text wherever ``parsed`` matches the text, and maybe elsewhere: ``\\d \\w \\s`` and their
    negations take every non-ASCII character their ``regex`` reading may take, ``\\b \\B``
    are dropped. ``exact`` when none of those occur (then it matches exactly there: literals,
    classes of explicit members, ``.`` and anchors read alike in both engines). ``None``
    outside the translated subset.

    With ``boundaries``, ``\\b \\B`` are kept (RE2 reads them over ASCII word characters):
    then the pattern is exact on every ASCII text, where the widened categories meet no
    character they could take wrongly.

    A combined matcher asks it only *whether* a pattern may match a text; a yes on a text
    that is not ASCII is confirmed by the pattern's own exact search unless ``exact``.
    """
    if parsed.state.flags & ~_ALLOWED_FLAGS:
        return None
    wide = _Wide()
    wide.boundaries = boundaries
    try:
        return "(?m)" + _seq(list(parsed), wide), wide.exact
    except (_Untranslatable, RecursionError):
        return None


def _loops_consume(items: Any) -> bool:
    """Whether every repeat in ``items`` consumes at least one character per iteration
    (the engines may choose different extents only through loops that can match empty)."""
    for op, av in items:
        if op is _sre.MAX_REPEAT or op is _sre.MIN_REPEAT:
            if av[2].getwidth()[0] == 0 or not _loops_consume(av[2]):
                return False
        elif op is _sre.SUBPATTERN:
            if not _loops_consume(av[3]):
                return False
        elif op is _sre.BRANCH and not all(_loops_consume(b) for b in av[1]):
            return False
    return True


def exact_extents(parsed: Any) -> bool:
    """Whether RE2 (leftmost-first, like ``regex``) also picks the same extent for every
    match of a translated pattern, so that its ``finditer`` yields ``regex``'s matches: when
    no match can be empty and no loop can iterate on nothing."""
    return bool(parsed.getwidth()[0] > 0 and _loops_consume(parsed))


def compile_linear(parsed: Any) -> LinearPattern | None:
    """The RE2 form of ``parsed`` (see :func:`translate`), compiled on first use, or
    ``None`` when the pattern has no translation or the ``fast`` extra is not installed."""
    pattern = translate(parsed)
    if pattern is None:
        return None
    try:
        importlib.import_module("re2")
    except ImportError:
        return None
    return LinearPattern(pattern)


class LinearPattern:
    """A translated pattern, compiled by RE2 when first searched (most patterns of a run are
    decided by the combined matcher and never need their own)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._regexp: Any = None
        self._refused = False

    def _compiled(self) -> Any | None:
        if self._regexp is None and not self._refused:
            re2 = importlib.import_module("re2")
            try:
                options = re2.Options()
                options.max_mem = 64 * 1024 * 1024
                options.log_errors = False
                self._regexp = re2.compile(self.source, options)
            except Exception:  # RE2 refused it (size limits): ``regex`` alone is always right
                self._refused = True
        return self._regexp

    def starts(self, data: bytes, *, every: bool) -> list[int] | None:
        """Start offsets of the leftmost match (``every``: of every match, left to right,
        without overlaps; only for a pattern whose matches are never empty) in ``data``;
        ``None`` when RE2 refused the pattern."""
        compiled = self._compiled()
        if compiled is None:
            return None
        low = getattr(compiled, "_regexp", None)
        anchor = getattr(
            getattr(getattr(_re2_low(), "RE2", None), "Anchor", None), "UNANCHORED", None
        )
        if low is None or anchor is None:
            # The binding's internals moved: its public API gives the same offsets.
            if every:
                return [m.start() for m in compiled.finditer(data)]
            m = compiled.search(data)
            return [] if m is None else [m.start()]
        # The binding's low-level call: one per match, without building a Match object
        # (its finditer cost ~6 us a match; a file of tests has thousands).
        out: list[int] = []
        pos = 0
        end = len(data)
        match = low.Match
        while pos <= end:
            span = match(anchor, data, pos, end)[0]
            if span[0] < 0:
                break
            out.append(span[0])
            if not every:
                break
            pos = span[1]
        return out


def _re2_low() -> Any:
    return importlib.import_module("re2._re2")


# -- ASCII images of non-ASCII texts --------------------------------------------------------
#
# A translated pattern can test a character in few ways: equal to an ASCII literal, inside an
# explicit ASCII class (or outside it, negated), ``\d \w \s`` (or their negations, or ``\b``
# between two characters), ``.`` and ``^ $`` (``\n`` or not). A non-ASCII character is never
# an ASCII literal nor in an explicit ASCII class, so it answers every test exactly as an ASCII
# character with the same ``\s``/``\w``/``\d`` class under ``regex`` that the pattern never
# names explicitly. Replacing each non-ASCII character of a text by such a stand-in (one for
# one: offsets are unchanged) gives an ASCII image on which the pattern matches at exactly the
# same places, so RE2 can answer for the image.

SPACE, WORD, DIGIT, OTHER = 0, 1, 2, 3
"""Classes of characters under ``regex``: ``\\s``; ``\\w`` but not ``\\d``; ``\\d`` (which is
``\\w``); none of them. Every character is in exactly one (checked for ASCII stand-ins)."""

_STAND_INS = {
    SPACE: "\x0b\x0c\r\t ",
    WORD: "QXZJKVWYqxzjkvwyABCDEFGHILMNOPRSTUabcdefghilmnoprstu_",
    DIGIT: "7359820146",
    OTHER: "\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19"
    "\x1a\x1b\x1c\x1d\x1e\x1f\x7f\x00~`@#$%&!?;:,'\"<>=|+*-/\\^(){}[]",
}
"""ASCII stand-ins per class, in order of preference (rarely named in patterns first)."""

_CLASS_OF: dict[str, int | None] = {}
_TESTS: list[Any] = []


def char_class(char: str) -> int | None:
    """The class (:data:`SPACE`, ...) of one character under ``regex``'s Unicode rules, or
    ``None`` for a combination no ASCII character has (none is known: fail safe)."""
    known = _CLASS_OF.get(char, -1)
    if known != -1:
        return known
    if not _TESTS:
        import regex

        _TESTS.extend(regex.compile(p) for p in (r"\s", r"\w", r"\d"))
    space, word, digit = (t.match(char) is not None for t in _TESTS)
    found = {
        (True, False, False): SPACE,
        (False, True, False): WORD,
        (False, True, True): DIGIT,
        (False, False, False): OTHER,
    }.get((space, word, digit))
    _CLASS_OF[char] = found
    return found


def _named(items: Any, out: set[int]) -> None:
    """The ASCII codes ``items`` names explicitly (literals and class members)."""
    for op, av in items:
        if op is _sre.LITERAL or op is _sre.NOT_LITERAL:
            out.add(av)
        elif op is _sre.RANGE:
            out.update(range(av[0], min(av[1], _ASCII_MAX) + 1))
        elif op is _sre.IN:
            _named(av, out)
        elif op is _sre.BRANCH:
            for branch in av[1]:
                _named(branch, out)
        elif op is _sre.SUBPATTERN:
            _named(av[3], out)
        elif op is _sre.MAX_REPEAT or op is _sre.MIN_REPEAT:
            _named(av[2], out)


StandIns = tuple[str | None, str | None, str | None, str | None]


def stand_ins(parsed: Any) -> StandIns:
    """Per class, an ASCII character of that class the translated pattern never names (see
    above), or ``None`` when it names them all (texts with such characters keep ``regex``)."""
    named: set[int] = set()
    _named(parsed, named)
    picked: list[str | None] = []
    for cls in (SPACE, WORD, DIGIT, OTHER):
        fit = [c for c in _STAND_INS[cls] if ord(c) not in named and char_class(c) == cls]
        picked.append(fit[0] if fit else None)
    return (picked[0], picked[1], picked[2], picked[3])


class _NoImage(Exception):
    """A character of the text has no stand-in for the pattern."""


_HANDLERS: set[StandIns] = set()


def _handler_name(stand: StandIns) -> str:
    """The codec error handler that writes ``stand``'s stand-ins (registered once): the C
    encoder copies the ASCII runs and calls it only for each run of other characters."""
    name = "chimera-ascii-image-" + "-".join(str(ord(c)) if c else "x" for c in stand)
    if stand not in _HANDLERS:

        def replace(exc: UnicodeError) -> tuple[str, int]:
            if not isinstance(exc, UnicodeEncodeError):
                raise exc
            out = []
            for char in exc.object[exc.start : exc.end]:
                cls = char_class(char)
                sub = None if cls is None else stand[cls]
                if sub is None:
                    raise _NoImage
                out.append(sub)
            return "".join(out), exc.end

        codecs.register_error(name, replace)
        _HANDLERS.add(stand)
    return name


class AsciiImages:
    """ASCII images of one text that is not ASCII, one per set of stand-ins (built lazily).

    ``image(stand)`` is the text with each non-ASCII character replaced by the stand-in of
    its class (:func:`stand_ins`): the same length, and a translated pattern matches it at
    exactly the places it matches the text. ``None`` when a character of the text has no
    stand-in for that pattern.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._images: dict[StandIns, bytes | None] = {}

    def image(self, stand: StandIns) -> bytes | None:
        if stand in self._images:
            return self._images[stand]
        try:
            data: bytes | None = self.text.encode("ascii", _handler_name(stand))
        except _NoImage:
            data = None
        self._images[stand] = data
        return data
