"""Plain spec YAML read straight from libyaml's event stream, without a node graph.

Composing nodes and then walking them costs a Python object, a resolver call and a
constructor lookup per scalar; most spec files are plain mappings, lists and strings, so
:func:`read_events` builds the values and position tables of a
:class:`~chimera.spec.yamldoc.YamlDocument` in one pass over the parser's events instead.

It takes only what it can read exactly as the node-graph path
(:mod:`chimera.spec.yamlbuild`) would, and that path reported no issue for: anything else —
an anchor or alias, an explicit tag, a merge key, a key that is not a string, a duplicate
key, a value PyYAML's constructors reject, very deep nesting — returns :data:`COMPOSE`, and
the caller reads the text again through the node graph, which reports it. What libyaml reads
differently from the pure parser returns :data:`PURE`, as ``_libyaml_differs`` does.
"""

from __future__ import annotations

import re
from typing import Any, Final

import yaml

from chimera.spec.yamldoc import NodePath, Position, YamlDocument

COMPOSE: Final = "compose"
"""Read this text through the composed node graph (it holds what only that path reports)."""
PURE: Final = "pure"
"""Read this text with the pure parser (libyaml rejects it or may read it differently)."""

_MAX_DEPTH = 48
"""Deeper documents go through the node graph, which reports runaway nesting."""

BLOCK_HEADER_COMMENT = re.compile(r"[|>][-+0-9]*#")
_PLAIN_TAGS = frozenset(
    "tag:yaml.org,2002:" + name for name in ("null", "bool", "int", "float", "timestamp")
)
_STR_TAG = "tag:yaml.org,2002:str"

# Event kinds, by class name: libyaml builds events from the ``yaml.events`` classes of its
# first import, which a re-imported ``yaml`` no longer has (see yamlbuild.node_kind).
_SCALAR, _SEQ, _MAP, _END, _OTHER = range(1, 6)  # never 0: looked up as `get(...) or ...`
_KIND_BY_NAME = {
    "ScalarEvent": _SCALAR,
    "SequenceStartEvent": _SEQ,
    "MappingStartEvent": _MAP,
    "SequenceEndEvent": _END,
    "MappingEndEvent": _END,
}


class _Leave(Exception):
    """The event reader hands the text to another path (:data:`COMPOSE` or :data:`PURE`)."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


def read_events(loader_class: type[Any], text: str) -> YamlDocument | str:
    """Read ``text`` through ``loader_class``'s event stream (libyaml's ``CParser``).

    Returns:
        The document (values, marks and key marks, no issues), or :data:`COMPOSE` /
        :data:`PURE` naming the path that must read ``text`` instead. Never raises for bad
        input: a text libyaml rejects is :data:`PURE`.
    """
    resolvers: dict[Any, Any] = loader_class.yaml_implicit_resolvers
    if loader_class.yaml_path_resolvers or None in resolvers:
        return COMPOSE  # a resolver keyed on something other than the first character
    try:
        loader = loader_class(text)
    except (yaml.YAMLError, UnicodeError):  # libyaml takes UTF-8: a lone surrogate fails
        return PURE
    try:
        return _Reader(loader, text, resolvers).document()
    except _Leave as leave:
        return leave.where
    except yaml.YAMLError:
        return PURE
    finally:
        loader.dispose()


class _Reader:
    def __init__(self, loader: Any, text: str, resolvers: dict[Any, Any]) -> None:
        self._next = loader.get_event
        self._loader = loader
        self._text = text
        self._bare_end = bare_end(text)
        self._resolvers = resolvers
        # The class the resolver compares node kinds with (our CSafeLoader maps by name).
        self._scalar_kind = type(loader).resolve.__globals__.get(
            "ScalarNode", yaml.nodes.ScalarNode
        )
        self._node_class = type(loader).construct_scalar.__globals__["ScalarNode"]
        self._kinds: dict[type[Any], int] = {}
        # Plain scalars seen before, as the value they resolve to (keys such as 'title' or
        # 'timeout' start with a character some implicit resolver claims, every time).
        self._plain: dict[str, Any] = {}
        self.marks: dict[NodePath, Position] = {}
        self.key_marks: dict[NodePath, Position] = {}

    def _kind(self, event: Any) -> int:
        cls = type(event)
        kind = self._kinds.get(cls)
        if kind is None:
            kind = self._kinds[cls] = _KIND_BY_NAME.get(cls.__name__, _OTHER)
        return kind

    def document(self) -> YamlDocument:
        self._next()  # the stream's start
        start = self._next()
        if type(start).__name__ == "StreamEndEvent":
            return YamlDocument(empty=True)
        event = self._next()
        value = self._node(event, (), False, 0)
        self._next()  # the document's end
        if type(self._next()).__name__ != "StreamEndEvent":
            raise _Leave(PURE)  # a second document: the pure parser names it
        return YamlDocument(value=value, marks=self.marks, key_marks=self.key_marks)

    def _node(self, event: Any, path: NodePath, flow: bool, depth: int) -> Any:
        """The value of the node ``event`` starts; records its mark (and its children's)."""
        mark = event.start_mark
        self.marks[path] = (mark.line + 1, mark.column + 1)
        kind = self._kind(event)
        if kind == _SCALAR:
            return self._scalar(event, flow)
        if event.anchor is not None or event.tag is not None or depth > _MAX_DEPTH:
            raise _Leave(COMPOSE)
        if kind == _SEQ:
            return self._sequence(event, path, depth)
        if kind == _MAP:
            return self._mapping(event, path, depth)
        raise _Leave(COMPOSE)  # an alias

    def _scalar(self, event: Any, flow: bool) -> Any:
        if event.anchor is not None or event.tag is not None:
            raise _Leave(COMPOSE)
        value: str = event.value
        if event.implicit[0]:  # plain, untagged: the implicit resolvers decide its type
            if not value and (flow or event.start_mark.index == self._bare_end):
                # libyaml marks an empty flow value one column later, and an empty value
                # at the end of a text without a final line break (`? a`) a line later.
                raise _Leave(PURE)
            if value[:1] in self._resolvers:
                found = self._plain.get(value, self._plain)
                return self._resolve(value) if found is self._plain else found
            return value
        style = event.style
        if (style == "|" or style == ">") and BLOCK_HEADER_COMMENT.match(
            self._text, event.start_mark.index
        ):
            raise _Leave(PURE)  # `|#`: only libyaml accepts a comment glued to the header
        return value

    def _resolve(self, value: str) -> Any:
        """A plain scalar's value as PyYAML's resolver and constructors make it."""
        loader = self._loader
        tag = loader.resolve(self._scalar_kind, value, (True, False))
        if tag == _STR_TAG:
            result: Any = value
        elif tag in _PLAIN_TAGS:
            try:
                result = loader.construct_object(self._node_class(tag, value), deep=True)
            except Exception as exc:  # the node graph reports it, with its mark
                raise _Leave(COMPOSE) from exc
        else:
            raise _Leave(COMPOSE)  # a merge key, a `=` value, a resolver someone added
        self._plain[value] = result
        return result

    def _sequence(self, start: Any, path: NodePath, depth: int) -> list[Any]:
        flow = bool(start.flow_style)
        marks, nxt, kinds = self.marks, self._next, self._kinds
        items: list[Any] = []
        while True:
            event = nxt()
            kind = kinds.get(type(event)) or self._kind(event)
            if kind == _END:
                break
            if kind == _SCALAR:
                mark = event.start_mark
                marks[(*path, len(items))] = (mark.line + 1, mark.column + 1)
                items.append(self._scalar(event, flow))
            else:
                items.append(self._node(event, (*path, len(items)), flow, depth + 1))
        if flow:
            self._flow_span(start, event)
        return items

    def _mapping(self, start: Any, path: NodePath, depth: int) -> dict[str, Any]:
        flow = bool(start.flow_style)
        marks, key_marks, nxt, kinds = self.marks, self.key_marks, self._next, self._kinds
        result: dict[str, Any] = {}
        while True:
            event = nxt()
            kind = kinds.get(type(event)) or self._kind(event)
            if kind == _END:
                break
            if kind != _SCALAR:
                raise _Leave(COMPOSE)  # a list, mapping or alias as a key
            key = self._scalar(event, flow)
            if type(key) is not str or key in result:
                raise _Leave(COMPOSE)  # not a string, or a duplicate: reported there
            mark = event.start_mark
            key_path = (*path, key)
            key_marks[key_path] = (mark.line + 1, mark.column + 1)
            event = nxt()
            if (kinds.get(type(event)) or self._kind(event)) == _SCALAR:
                mark = event.start_mark
                marks[key_path] = (mark.line + 1, mark.column + 1)
                result[key] = self._scalar(event, flow)
            else:
                result[key] = self._node(event, key_path, flow, depth + 1)
        if flow:
            self._flow_span(start, event)
        return result

    def _flow_span(self, start: Any, end: Any) -> None:
        if flow_key_indicator(self._text[start.start_mark.index : end.end_mark.index]):
            raise _Leave(PURE)  # a `?` in a flow collection: the parsers read it differently


def bare_end(text: str) -> int:
    """``len(text)`` when ``text`` does not end with a line break, else ``-1``."""
    return -1 if text.endswith(_LINE_BREAKS) else len(text)


_LINE_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")


def empty_plain(event_or_node: Any) -> bool:
    """An empty plain scalar (style ``""`` in libyaml's events and nodes)."""
    return getattr(event_or_node, "style", None) == "" and not event_or_node.value


def flow_key_indicator(span: str) -> bool:
    """Whether ``span`` (a flow collection's text) holds a ``?`` outside quoted scalars (an
    explicit key, or a plain scalar the two parsers read differently, ``{run?: x}``). A ``?``
    inside a quoted pattern (``'(?:a|b)'``) is only text, which both parsers agree on."""
    if "?" not in span:
        return False  # nearly every flow collection: no character-by-character walk
    quote = ""
    i, n = 0, len(span)
    while i < n:
        ch = span[i]
        if quote == "'":
            if ch == "'":
                if i + 1 < n and span[i + 1] == "'":
                    i += 1  # '' is an escaped quote
                else:
                    quote = ""
        elif quote == '"':
            if ch == "\\":
                i += 1
            elif ch == '"':
                quote = ""
        elif ch in "'\"" and (i == 0 or span[i - 1] in "{[,: \t\n\r"):
            quote = ch  # a quote opens a scalar only where a scalar can start
        elif ch == "?":
            return True
        i += 1
    return False
