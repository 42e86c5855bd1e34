"""The one walk over a composed YAML node graph that builds plain values and the position
tables of a :class:`~chimera.spec.yamldoc.YamlDocument` (duplicate keys, merges, tags,
alias bombs)."""

from __future__ import annotations

from typing import Any, cast

from yaml.nodes import MappingNode, Node, ScalarNode

from chimera.spec.yamldoc import Mark, NodePath, Position, YamlIssue, type_name

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"


def node_kind(node: Node) -> str:
    """``scalar``, ``sequence`` or ``mapping``. Not ``isinstance``: libyaml's extension
    builds nodes from the ``yaml.nodes`` classes of its first import, which a re-imported
    ``yaml`` (pytest's in-process runs restore ``sys.modules``) no longer has."""
    return str(getattr(node, "id", ""))


def _position(mark: Any) -> Position:
    return (mark.line + 1, mark.column + 1)


class _TooManyNodes(Exception):
    pass


_FAILED: Any = object()
"""Returned by ``Builder._scalar`` when a scalar cannot be constructed (issue recorded)."""


class Builder:
    """Turns a composed node graph into values and position tables (one walk)."""

    def __init__(self, loader: Any, limit: int) -> None:
        self._loader = loader
        self._limit = limit
        self.marks: dict[NodePath, Position] = {}
        self.key_marks: dict[NodePath, Position] = {}
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
        self.marks[path] = _position(node.start_mark)
        if id(node) in self._active:
            self.issues.append(
                YamlIssue(Mark.of(node.start_mark), "recursive alias: a node contains itself")
            )
            self.broken.add(path)
            return None
        if node_kind(node) == "scalar":
            value = self._scalar(cast(ScalarNode, node))
            if value is _FAILED:
                self.broken.add(path)
                return None
            return value
        self._active.add(id(node))
        try:
            if node_kind(node) == "sequence":
                if node.tag != _SEQ_TAG:
                    self._bad_tag(node, "a list")
                return [self._node(item, (*path, i)) for i, item in enumerate(node.value)]
            if node_kind(node) == "mapping":
                if node.tag != _MAP_TAG:
                    self._bad_tag(node, "a mapping")
                return self._mapping(cast(MappingNode, node), path)
        finally:
            self._active.discard(id(node))
        self.issues.append(YamlIssue(Mark.of(node.start_mark), "unsupported YAML node"))
        return None

    def _own(self, node: ScalarNode) -> ScalarNode:
        """``node`` as the constructors' own ``ScalarNode`` class (see :func:`node_kind`)."""
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
        if node_kind(key_node) != "scalar":
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
            self.key_marks[(*path, key)] = (key_mark.line, key_mark.col)
            result[key] = self._node(value_node, (*path, key))
        for merge_node in merges:
            self._merge(merge_node, path, result)
        return result

    def _merge(self, merge_node: Node, path: NodePath, result: dict[str, Any]) -> None:
        """Apply a ``<<`` merge key: keys already present win, earlier sources win."""
        sources: list[Node]
        if node_kind(merge_node) == "mapping":
            sources = [merge_node]
        elif node_kind(merge_node) == "sequence" and all(
            node_kind(item) == "mapping" for item in merge_node.value
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
                    self.key_marks[(*path, key)] = _position(key_node.start_mark)
                    result[key] = self._node(value_node, (*path, key))
                # A source's own keys take precedence over the sources it merges in turn.
                for nested_node in nested:
                    self._merge(nested_node, path, result)
            finally:
                self._active.discard(id(source))
