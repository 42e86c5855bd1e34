"""Plain patterns: a literal with at most a leading ``^`` and a trailing ``$``, searched
without compiling a regular expression (see :func:`plain_pattern`)."""

from __future__ import annotations

_META = frozenset("\\.^$*+?{}[]|()")
"""Characters with a meaning in a ``regex`` pattern outside a class (``#`` and spaces only
have one under ``(?x)``, which needs ``(``)."""

Plain = tuple[str, bool, bool]


def plain_pattern(source: str) -> Plain | None:
    """``(literal, at_line_start, at_line_end)`` when ``source`` is a literal with at most a
    leading ``^`` and a trailing ``$`` (``^    debug: bool = False$``), else ``None``.

    Such a pattern means the same to ``regex`` (``MULTILINE``: ``^`` after a newline or at
    the start, ``$`` before a newline or at the end) as a substring search with those two
    checks, so it needs no compiling: a Spec of thousands of them loads and runs without
    paying ``regex``'s compiler for each.
    """
    start = source.startswith("^")
    end = source.endswith("$") and len(source) > 1
    body = source[1 if start else 0 : len(source) - 1 if end else len(source)]
    if not body or not _META.isdisjoint(body):
        return None
    return body, start, end


def plain_search(text: str, plain: Plain, first_only: bool) -> list[int]:
    """Start offsets of the matches of a :func:`plain_pattern` in ``text``, exactly as
    ``regex``'s ``finditer`` (non-overlapping, left to right) would give them."""
    body, at_start, at_end = plain
    size = len(body)
    end_of_text = len(text)
    out: list[int] = []
    pos = text.find(body)
    while pos >= 0:
        after = pos + size
        if (not at_start or pos == 0 or text[pos - 1] == "\n") and (
            not at_end or after == end_of_text or text[after] == "\n"
        ):
            out.append(pos)
            if first_only:
                break
            pos = text.find(body, after)
        else:
            pos = text.find(body, pos + 1)
    return out
