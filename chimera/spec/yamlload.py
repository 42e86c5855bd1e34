"""YAML for spec files: plain Python values plus the line:col of every node.

PyYAML's ``SafeLoader`` composes the document into a node graph (each node carries its
start mark); :func:`parse_yaml` walks that graph once and builds ordinary Python values
(``dict`` / ``list`` / scalars) together with two position tables keyed by the node's path
from the root (``("requirements", 0, "contains", "pattern")``):

* ``marks[path]``: where the value at ``path`` starts;
* ``key_marks[path]``: where the mapping key that leads to ``path`` starts.

A pydantic error's ``loc`` is such a path (relative to the model's input), so an error deep
inside a requirement kind maps back to the exact YAML node.

Unlike ``yaml.safe_load`` this never keeps the last of two equal keys silently: a duplicate
key is an issue naming the first occurrence's line, and the first value is kept. Other
issues: a non-string key, an unsupported tag, a recursive alias, a document that expands to
too many nodes (an alias bomb). Merge keys (``<<: *anchor``) follow YAML's merge semantics.
Malformed YAML is reported as a single issue at the parser's marker position; nothing here
raises for bad input.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode

__all__ = [
    "Mark",
    "NodePath",
    "YamlDocument",
    "YamlIssue",
    "max_nodes",
    "parse_yaml",
    "type_name",
]

NodePath = tuple[str | int, ...]
"""A node's path from the document root: mapping keys and sequence indices."""


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


@dataclass(frozen=True, slots=True, order=True)
class Mark:
    """A position in the text; ``line`` and ``col`` are 1-based (columns count characters)."""

    line: int
    col: int

    @classmethod
    def of(cls, mark: yaml.Mark | None) -> Mark:
        if mark is None:
            return cls(1, 1)
        return cls(mark.line + 1, mark.column + 1)


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
        marks: start of each node's value, by path.
        key_marks: start of the key leading to each mapping entry, by path.
        issues: structural problems (duplicate keys, bad tags, ...), in document order.
        broken: paths whose value could not be read (an issue says why; the value is
            ``None``), so later validation does not report them a second time.
        empty: the text holds no document at all (only whitespace or comments).
        syntax_error: the text is not well-formed YAML; ``issues`` holds the parser's error.
    """

    value: Any = None
    marks: dict[NodePath, Mark] = field(default_factory=dict)
    key_marks: dict[NodePath, Mark] = field(default_factory=dict)
    issues: list[YamlIssue] = field(default_factory=list)
    broken: set[NodePath] = field(default_factory=set)
    empty: bool = False
    syntax_error: bool = False

    def mark(self, path: NodePath) -> Mark:
        """Where the value at ``path`` starts, or its nearest recorded ancestor's start."""
        for prefix in _prefixes(path):
            found = self.marks.get(prefix)
            if found is not None:
                return found
        return Mark(1, 1)

    def key_mark(self, path: NodePath) -> Mark:
        """Where the key leading to ``path`` starts; falls back to :meth:`mark`."""
        found = self.key_marks.get(path)
        return found if found is not None else self.mark(path)

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


def _describe_yaml_error(exc: yaml.YAMLError, text: str) -> YamlIssue:
    if isinstance(exc, yaml.MarkedYAMLError):
        problem = exc.problem or "malformed YAML"
        mark = exc.problem_mark or exc.context_mark
        if problem == "but found another document":
            return YamlIssue(
                Mark.of(mark), "a spec file holds one YAML document; a second one starts here"
            )
        message = f"invalid YAML: {problem}"
        if exc.context:
            where = ""
            if exc.context_mark is not None and exc.context_mark is not mark:
                where = f" at line {exc.context_mark.line + 1}"
            message += f" ({exc.context}{where})"
        return YamlIssue(Mark.of(mark), message)
    if isinstance(exc, yaml.reader.ReaderError):
        before = text[: exc.position]
        line = before.count("\n") + 1
        col = exc.position - (before.rfind("\n") + 1) + 1
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        return YamlIssue(
            Mark(line, col),
            f"invalid YAML: unacceptable character {ord(char):#06x} ({exc.reason})",
        )
    return YamlIssue(Mark(1, 1), f"invalid YAML: {exc}")


def _c_loader() -> type[Any] | None:
    found: type[Any] | None = getattr(yaml, "CSafeLoader", None)
    if found is None:
        return None
    base: type[Any] = found

    class CSafeLoader(base):  # type: ignore[misc]
        """libyaml's loader, resolving tags whatever ``yaml`` module is current.

        libyaml's extension builds nodes from the ``yaml.nodes`` classes of its first
        import; the resolver compares node classes by identity, so after a re-import of
        ``yaml`` (pytest's in-process runs restore ``sys.modules``) it resolved no tag at
        all. Node classes are mapped by name to the resolver's own.
        """

        def resolve(self, kind: type[Any], value: Any, implicit: Any) -> Any:
            own = base.resolve.__globals__.get(kind.__name__, kind)
            return super().resolve(own, value, implicit)

    return CSafeLoader


_C_LOADER: type[Any] | None = _c_loader()


def parse_yaml(text: str, *, fast: bool = True) -> YamlDocument:
    """Parse one YAML document from ``text``; never raises for bad input.

    PyYAML's pure-Python parser defines what a spec file may be. libyaml (``CSafeLoader``,
    when PyYAML was built with it) reads the same documents several times faster, so it is
    tried first, with two guards that keep every verdict, message and position the pure
    parser's:

    * anything libyaml rejects is parsed again by the pure parser, so malformed YAML gets
      the pure parser's message at its marker;
    * libyaml accepts some texts the pure parser rejects — tab characters where the pure
      scanner refuses them, and ``?`` inside a flow collection (``[a, ?b]``) — so a text
      holding a tab, or a ``?`` within the span of a flow collection, goes to the pure parser.

    Both parsers share PyYAML's Python constructors and resolver, and their marks count
    characters, so values and ``line:col`` are the same (the test suite compares both on
    the same good and bad files). ``fast=False`` uses the pure parser only.

    Returns:
        A :class:`YamlDocument`. Malformed YAML (including a second document in the same
        text) gives ``syntax_error=True`` and one issue at the parser's marker position.
    """
    if fast and _C_LOADER is not None and "\t" not in text:
        doc = _parse_with(_C_LOADER, text, flow_guard=True)
        if doc is not None:
            return doc
    parsed = _parse_with(yaml.SafeLoader, text)
    assert parsed is not None
    return parsed


_TOO_DEEP = YamlIssue(
    Mark(1, 1), "invalid YAML: the document nests too deeply (hundreds of levels) to read"
)
"""PyYAML's composer recurses per nesting level; a pathological file must not crash us."""


def _parse_with(
    loader_class: type[Any], text: str, *, flow_guard: bool = False
) -> YamlDocument | None:
    """Parse with ``loader_class``; with ``flow_guard`` (libyaml), ``None`` asks for the
    pure parser: the text was rejected, or holds what only libyaml accepts."""
    try:
        loader = loader_class(text)
    except yaml.YAMLError as exc:  # the reader rejects control characters up front
        if flow_guard:
            return None
        return YamlDocument(issues=[_describe_yaml_error(exc, text)], syntax_error=True)
    try:
        try:
            root = loader.get_single_node()
        except yaml.YAMLError as exc:
            if flow_guard:
                return None
            return YamlDocument(issues=[_describe_yaml_error(exc, text)], syntax_error=True)
        except RecursionError:
            if flow_guard:
                return None
            return YamlDocument(issues=[_TOO_DEEP], syntax_error=True)
        if root is None:
            return YamlDocument(empty=True)
        if flow_guard and _libyaml_differs(root, text):
            return None
        builder = _Builder(loader, max_nodes(len(text)))
        try:
            value = builder.build(root, ())
        except RecursionError:
            return YamlDocument(issues=[_TOO_DEEP], syntax_error=True)
        return YamlDocument(
            value=value,
            marks=builder.marks,
            key_marks=builder.key_marks,
            issues=builder.issues,
            broken=builder.broken,
        )
    finally:
        loader.dispose()


_BLOCK_HEADER_COMMENT = re.compile(r"[|>][-+0-9]*#")


def _flow_key_indicator(span: str) -> bool:
    """Whether ``span`` (a flow collection's text) holds a ``?`` outside quoted scalars (an
    explicit key, or a plain scalar the two parsers read differently, ``{run?: x}``). A ``?``
    inside a quoted pattern (``'(?:a|b)'``) is only text, which both parsers agree on."""
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


def _libyaml_differs(root: Node, text: str) -> bool:
    """Whether libyaml's reading of ``text`` may differ from the pure parser's: a block
    scalar header followed at once by ``#`` (``|#``, which only libyaml accepts), a ``?``
    within a flow collection, or an empty value in one (libyaml marks it one column later).
    """
    blocks = "|" in text or ">" in text
    if not blocks and "[" not in text and "{" not in text:
        return False
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if _kind(node) == "scalar":
            if getattr(node, "style", None) in ("|", ">") and _BLOCK_HEADER_COMMENT.match(
                text, node.start_mark.index
            ):
                return True
            continue
        if _kind(node) in ("sequence", "mapping"):
            if getattr(node, "flow_style", False):
                if _flow_key_indicator(text[node.start_mark.index : node.end_mark.index]):
                    return True
                for child in node.value:
                    parts = (child,) if _kind(node) == "sequence" else child
                    # An empty plain scalar (style None in PyYAML, "" in libyaml).
                    if any(_kind(p) == "scalar" and not p.value and not p.style for p in parts):
                        return True
            if _kind(node) == "sequence":
                stack.extend(node.value)
            else:
                for key, value in node.value:
                    stack.extend((key, value))
    return False


def _kind(node: Node) -> str:
    """``scalar``, ``sequence`` or ``mapping``. Not ``isinstance``: libyaml's extension
    builds nodes from the ``yaml.nodes`` classes of its first import, which a re-imported
    ``yaml`` (pytest's in-process runs restore ``sys.modules``) no longer has."""
    return str(getattr(node, "id", ""))


class _TooManyNodes(Exception):
    pass


_FAILED: Any = object()
"""Returned by ``_Builder._scalar`` when a scalar cannot be constructed (issue recorded)."""


class _Builder:
    """Turns a composed node graph into values and position tables (one walk)."""

    def __init__(self, loader: Any, limit: int) -> None:
        self._loader = loader
        self._limit = limit
        self.marks: dict[NodePath, Mark] = {}
        self.key_marks: dict[NodePath, Mark] = {}
        self.issues: list[YamlIssue] = []
        self.broken: set[NodePath] = set()
        self._visited = 0
        self._active: set[int] = set()

    def build(self, root: Node, path: NodePath) -> Any:
        try:
            return self._node(root, path)
        except _TooManyNodes:
            self.marks.clear()  # a partial expansion is meaningless; free it at once
            self.key_marks.clear()
            self.issues.append(
                YamlIssue(
                    Mark.of(root.start_mark),
                    f"document expands to more than {self._limit} nodes through its aliases "
                    "(an alias bomb?); refusing to read it",
                )
            )
            return None

    def _node(self, node: Node, path: NodePath) -> Any:
        self._visited += 1
        if self._visited > self._limit:
            raise _TooManyNodes
        self.marks[path] = Mark.of(node.start_mark)
        if id(node) in self._active:
            self.issues.append(
                YamlIssue(Mark.of(node.start_mark), "recursive alias: a node contains itself")
            )
            self.broken.add(path)
            return None
        if _kind(node) == "scalar":
            value = self._scalar(cast(ScalarNode, node))
            if value is _FAILED:
                self.broken.add(path)
                return None
            return value
        self._active.add(id(node))
        try:
            if _kind(node) == "sequence":
                if node.tag != _SEQ_TAG:
                    self._bad_tag(node, "a list")
                return [self._node(item, (*path, i)) for i, item in enumerate(node.value)]
            if _kind(node) == "mapping":
                if node.tag != _MAP_TAG:
                    self._bad_tag(node, "a mapping")
                return self._mapping(cast(MappingNode, node), path)
        finally:
            self._active.discard(id(node))
        self.issues.append(YamlIssue(Mark.of(node.start_mark), "unsupported YAML node"))
        return None

    def _own(self, node: ScalarNode) -> ScalarNode:
        """``node`` as the constructors' own ``ScalarNode`` class (see :func:`_kind`)."""
        own: Any = type(self._loader).construct_scalar.__globals__.get("ScalarNode")
        if own is None or type(node) is own:
            return node
        return cast(
            ScalarNode, own(node.tag, node.value, node.start_mark, node.end_mark, node.style)
        )

    def _bad_tag(self, node: Node, what: str) -> None:
        self.issues.append(
            YamlIssue(
                Mark.of(node.start_mark),
                f"unsupported tag {node.tag!r} on {what}; spec files use plain YAML",
            )
        )

    def _scalar(self, node: ScalarNode) -> Any:
        if node.tag == _STR_TAG:
            return node.value  # what SafeConstructor.construct_yaml_str returns
        try:
            return self._loader.construct_object(self._own(node), deep=True)
        except Exception as exc:
            # Explicit tags (``!!int abc``, ``!!int ""``, ``!!timestamp 2020-13-45``,
            # ``!custom``) fail inside PyYAML's constructors with whatever the conversion
            # raised (ValueError, IndexError, ...): all of it is bad input, reported here.
            problem = getattr(exc, "problem", None) or str(exc)
            self.issues.append(
                YamlIssue(
                    Mark.of(node.start_mark),
                    f"invalid value {node.value!r} ({node.tag}): {problem}",
                )
            )
            return _FAILED

    def _key(self, key_node: Node) -> str | None:
        """The key as a string, or ``None`` (with an issue) when it is not one."""
        if _kind(key_node) != "scalar":
            self.issues.append(
                YamlIssue(
                    Mark.of(key_node.start_mark),
                    "mapping keys must be plain strings, not a list or mapping",
                )
            )
            return None
        key = self._scalar(cast(ScalarNode, key_node))
        if isinstance(key, str):
            return key
        if key is not _FAILED:
            self.issues.append(
                YamlIssue(
                    Mark.of(key_node.start_mark),
                    f"mapping key {key_node.value!r} is read as {type_name(key)}, "
                    "not a string; quote it",
                )
            )
        return None

    def _mapping(self, node: MappingNode, path: NodePath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_seen: dict[str, Mark] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merges.append(value_node)
                continue
            key = self._key(key_node)
            if key is None:
                continue
            key_mark = Mark.of(key_node.start_mark)
            if key in first_seen:
                first = first_seen[key]
                self.issues.append(
                    YamlIssue(
                        key_mark,
                        f"duplicate key {key!r} (first defined at line {first.line}, "
                        f"col {first.col}); YAML would silently keep only the last value",
                    )
                )
                continue
            first_seen[key] = key_mark
            self.key_marks[(*path, key)] = key_mark
            result[key] = self._node(value_node, (*path, key))
        for merge_node in merges:
            self._merge(merge_node, path, result)
        return result

    def _merge(self, merge_node: Node, path: NodePath, result: dict[str, Any]) -> None:
        """Apply a ``<<`` merge key: keys already present win, earlier sources win."""
        sources: list[Node]
        if _kind(merge_node) == "mapping":
            sources = [merge_node]
        elif _kind(merge_node) == "sequence" and all(
            _kind(item) == "mapping" for item in merge_node.value
        ):
            sources = list(merge_node.value)
        else:
            self.issues.append(
                YamlIssue(
                    Mark.of(merge_node.start_mark),
                    "a merge key '<<' takes a mapping or a list of mappings",
                )
            )
            return
        for source in sources:
            if id(source) in self._active:
                self.issues.append(
                    YamlIssue(Mark.of(source.start_mark), "recursive alias in a merge key")
                )
                continue
            self._active.add(id(source))
            try:
                nested: list[Node] = []
                for key_node, value_node in source.value:
                    if key_node.tag == _MERGE_TAG:
                        nested.append(value_node)
                        continue
                    key = self._key(key_node)
                    if key is None or key in result:
                        continue
                    self.key_marks[(*path, key)] = Mark.of(key_node.start_mark)
                    result[key] = self._node(value_node, (*path, key))
                # A source's own keys take precedence over the sources it merges in turn.
                for nested_node in nested:
                    self._merge(nested_node, path, result)
            finally:
                self._active.discard(id(source))
