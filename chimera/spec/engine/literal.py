"""Literal ``paths`` globs answered by lookup instead of pattern matching.

A glob with no wildcard, range, escape or negation names paths outright; pathspec's
gitwildmatch still tries its regular expression on every candidate, so a Spec with one such
scope per file did work growing with requirements x files. Here such globs are answered from a
sorted listing with a set and a segment index, built once per tree. Anything gitwildmatch
could read as more than a path is left to pathspec (``literal_glob`` returns ``None``).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

# Characters that make a gitwildmatch pattern more than a path: wildcards, ranges, escapes.
_NOT_LITERAL = frozenset("*?[]\\")


@dataclass(frozen=True, slots=True)
class Literal:
    """A glob that gitwildmatch matches as a plain path (see :func:`literal_glob`)."""

    body: str
    """The path, without a leading or trailing slash."""
    anchored: bool
    """Matched from the root (a slash before its end); else any path segment equal to it."""
    dir_only: bool
    """A trailing slash: only what lies under a directory of that name."""


def literal_glob(glob: str) -> Literal | None:
    """``glob`` (as :func:`normalize_glob` leaves it) as a :class:`Literal`, or ``None``.

    ``None`` whenever pathspec's gitwildmatch could read it as more than a path: a negation,
    a comment, a wildcard, a range, an escape, leading or trailing whitespace (git strips
    trailing spaces unless escaped), an empty, ``.`` or ``..`` segment. Those take pathspec.
    """
    if not glob or glob[0] in "#!" or glob[0].isspace() or glob != glob.rstrip():
        return None
    if _NOT_LITERAL.intersection(glob):
        return None
    anchored = glob.startswith("/")
    body = glob[1:] if anchored else glob
    dir_only = body.endswith("/")
    if dir_only:
        body = body[:-1]
    segments = body.split("/")
    if any(seg in ("", ".", "..") for seg in segments):
        return None
    return Literal(body, anchored or len(segments) > 1, dir_only)


def literal_globs(globs: Sequence[str]) -> list[Literal] | None:
    """Every glob as a :class:`Literal`; ``None`` if any is not one (or there are none)."""
    out: list[Literal] = []
    for glob in globs:
        lit = literal_glob(glob)
        if lit is None:
            return None
        out.append(lit)
    return out or None


class Listing:
    """Sorted candidate names with exact lookups, built once per tree (or walked pool).

    A literal gitwildmatch pattern ``a/b`` matches the file ``a/b`` and everything under a
    directory ``a/b``; an unanchored ``b`` matches any path with a segment ``b`` (``b/`` only
    a segment before the last). Lookups here give exactly those sets.
    """

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self._set = frozenset(names)
        self._segments: dict[str, list[str]] | None = None

    def _under(self, directory: str) -> Sequence[str]:
        lo = bisect.bisect_left(self.names, directory + "/")
        hi = bisect.bisect_left(self.names, directory + "0")  # "0" sorts right after "/"
        return self.names[lo:hi]

    def _with_segment(self, segment: str) -> list[str]:
        if self._segments is None:
            index: dict[str, list[str]] = {}
            for name in self.names:
                for seg in set(name.split("/")):
                    index.setdefault(seg, []).append(name)
            self._segments = index
        return self._segments.get(segment, [])

    def matches(self, literals: Sequence[Literal]) -> set[str]:
        """The names any of ``literals`` matches."""
        out: set[str] = set()
        for lit in literals:
            if lit.anchored:
                if not lit.dir_only and lit.body in self._set:
                    out.add(lit.body)
                out.update(self._under(lit.body))
            elif lit.dir_only:
                out.update(n for n in self._with_segment(lit.body) if lit.body in n.split("/")[:-1])
            else:
                out.update(self._with_segment(lit.body))
        return out

    def in_pool_order(self, literals: Sequence[Literal], anchors: Sequence[str]) -> list[str]:
        """:meth:`matches` restricted to the names under ``anchors``, in the order
        ``_under(names, anchors)`` lists them (anchor by anchor, each sorted)."""
        found = self.matches(literals)
        if "" in anchors:
            return sorted(found)
        ranked: list[tuple[int, str]] = []
        for name in found:
            for rank, anchor in enumerate(anchors):
                if name.startswith(anchor + "/"):
                    ranked.append((rank, name))
                    break
        return [name for _, name in sorted(ranked)]
