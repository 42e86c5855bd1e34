"""The values :func:`~chimera.spec.yamlload.parse_yaml` returns: a document's Python value,
the ``line:col`` of every node by its path, and the issues found."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import yaml

NodePath = tuple[str | int, ...]
"""A node's path from the document root: mapping keys and sequence indices."""

Position = tuple[int, int]
"""``(line, col)``, 1-based, as the position tables hold it; :class:`Mark` names the parts.

A plain tuple of two ints is left alone by the cyclic garbage collector (CPython untracks
exact tuples of atoms), so the tens of thousands a large spec holds cost its full
collections nothing; a :class:`Mark` (a tuple subclass) would stay tracked.
"""


def max_nodes(text_length: int) -> int:
    """How many nodes a document of ``text_length`` characters may expand to.

    Without aliases a document cannot hold more nodes than characters; the slack lets
    anchors be reused freely while an alias bomb ("billion laughs") stops within
    milliseconds instead of exhausting memory.
    """
    return 10_000 + 4 * text_length


_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"


class Mark(NamedTuple):
    """A position in the text; ``line`` and ``col`` are 1-based (columns count characters).

    A named tuple, so it equals the :data:`Position` it is read from and is made cheaply.
    """

    line: int
    col: int

    @classmethod
    def of(cls, mark: yaml.Mark | None) -> Mark:
        if mark is None:
            return cls(1, 1)
        return cls(mark.line + 1, mark.column + 1)


_new = tuple.__new__
"""A :class:`Mark` from a :data:`Position` without the named tuple's Python ``__new__``."""


@dataclass(frozen=True, slots=True)
class YamlIssue:
    """A problem found while reading the YAML itself (before any spec validation)."""

    mark: Mark
    message: str


@dataclass
class YamlDocument:
    """One parsed YAML document.

    Attributes:
        value: the document as plain Python values; ``None`` for an empty document or when
            the YAML is malformed (``syntax_error`` is then set).
        marks: start of each node's value, by path (read through :meth:`mark`).
        key_marks: start of the key leading to each mapping entry, by path (read through
            :meth:`key_mark`).
        issues: structural problems (duplicate keys, bad tags, ...), in document order.
        broken: paths whose value could not be read (an issue says why; the value is
            ``None``), so later validation does not report them a second time.
        empty: the text holds no document at all (only whitespace or comments).
        syntax_error: the text is not well-formed YAML; ``issues`` holds the parser's error.
    """

    value: Any = None
    marks: dict[NodePath, Position] = field(default_factory=dict)
    key_marks: dict[NodePath, Position] = field(default_factory=dict)
    issues: list[YamlIssue] = field(default_factory=list)
    broken: set[NodePath] = field(default_factory=set)
    empty: bool = False
    syntax_error: bool = False

    def mark(self, path: NodePath) -> Mark:
        """Where the value at ``path`` starts, or its nearest recorded ancestor's start."""
        found = self.marks.get(path)
        if found is not None:
            return _new(Mark, found)  # the common case, without building the prefixes
        for prefix in _prefixes(path):
            found = self.marks.get(prefix)
            if found is not None:
                return _new(Mark, found)
        return Mark(1, 1)

    def key_mark(self, path: NodePath) -> Mark:
        """Where the key leading to ``path`` starts; falls back to :meth:`mark`."""
        found = self.key_marks.get(path)
        return _new(Mark, found) if found is not None else self.mark(path)

    def has(self, path: NodePath) -> bool:
        """True when ``path`` names a node present in the document."""
        return path in self.marks


def _prefixes(path: NodePath) -> Iterator[NodePath]:
    for end in range(len(path), -1, -1):
        yield path[:end]


def type_name(value: object) -> str:
    """The YAML-ish name of a Python value's type, for messages (``'a list'``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"
