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
from typing import Any

import yaml
from yaml.nodes import Node

from chimera.spec.yamlbuild import Builder, node_kind
from chimera.spec.yamldoc import Mark, NodePath, YamlDocument, YamlIssue, max_nodes, type_name
from chimera.spec.yamlevents import (
    BLOCK_HEADER_COMMENT,
    PURE,
    bare_end,
    empty_plain,
    flow_key_indicator,
    read_events,
)

__all__ = [
    "Mark",
    "NodePath",
    "YamlDocument",
    "YamlIssue",
    "max_nodes",
    "parse_yaml",
    "pure_only",
    "type_name",
]


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
            # Called for every node: the class mapping is looked up once per node class.
            own = owns.get(kind)
            if own is None:
                own = owns[kind] = names.get(kind.__name__, kind)
            if own is scalar and not implicit[0] and not implicit[1]:
                # Only an empty scalar tagged "!" (``a: !``) gets here so: libyaml calls it
                # not implicit, the pure parser plain (null, not "").
                implicit = (True, False)
            if (
                own is scalar
                and implicit[0]
                and value[:1] not in self.yaml_implicit_resolvers
                and None not in self.yaml_implicit_resolvers
                and not self.yaml_path_resolvers
            ):
                # What the base method returns for a plain scalar no resolver claims by its
                # first character, without its lists and loops (most keys and strings).
                return self.DEFAULT_SCALAR_TAG
            return base_resolve(self, own, value, implicit)

    owns: dict[type[Any], type[Any]] = {}
    names: dict[str, Any] = base.resolve.__globals__
    scalar = names.get("ScalarNode")
    base_resolve = base.resolve
    return CSafeLoader


_C_LOADER: type[Any] | None = _c_loader()


_DIRECTIVE_COMMENT = re.compile(r"^%YAML[ ]+[0-9]+\.[0-9]+#", re.MULTILINE)
_ODD_TAG_HANDLE = re.compile(r"(?:^|[\s\[\]{},])![0-9A-Za-z_-]*[^0-9A-Za-z_\s!-][^\s!]*!", re.M)
"""A tag whose handle (``!x!``) holds a character the pure scanner refuses there (``!@!str``):
libyaml reads it as the primary handle and a longer suffix."""


def pure_only(text: str) -> bool:
    """Whether ``text`` holds what libyaml reads where the pure parser refuses or counts it:
    a tab; a byte order mark past the first character (two files concatenated: libyaml
    skips it, so columns after it were one off and a mark where a document must start was
    accepted); a ``%YAML 1.1#`` directive with a comment glued to its version; a tag handle
    holding a character other than ``[0-9A-Za-z_-]`` (``!@!str``)."""
    return (
        "\t" in text
        or "\ufeff" in text[1:]
        or ("%YAML" in text and _DIRECTIVE_COMMENT.search(text) is not None)
        or ("!" in text and _ODD_TAG_HANDLE.search(text) is not None)
    )


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
      holding a tab, or a ``?`` within the span of a flow collection, goes to the pure parser;
      so does the rest of what :func:`pure_only` names.

    Both parsers share PyYAML's Python constructors and resolver, and their marks count
    characters, so values and ``line:col`` are the same (the test suite compares both on
    the same good and bad files). A plain document (no anchor, tag, merge key or issue) is
    read straight from libyaml's events without composing nodes
    (:func:`~chimera.spec.yamlevents.read_events`, about ten times faster than the pure
    parser on a large spec); the rest is composed and walked. ``fast=False`` uses the pure
    parser only.

    Returns:
        A :class:`YamlDocument`. Malformed YAML (including a second document in the same
        text) gives ``syntax_error=True`` and one issue at the parser's marker position.
    """
    if fast and _C_LOADER is not None and not pure_only(text):
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
    pure parser: the text was rejected, or holds what only libyaml accepts.

    With ``flow_guard`` a plain document is read from libyaml's events in one pass
    (:mod:`chimera.spec.yamlevents`); only a text that reader leaves to the node graph
    (anchors, tags, merge keys, anything reported as an issue) is composed into nodes."""
    if flow_guard:
        found = read_events(loader_class, text)
        if isinstance(found, YamlDocument):
            return found
        if found == PURE:
            return None
    try:
        loader = loader_class(text)
    except UnicodeError:
        if flow_guard:  # libyaml reads UTF-8: a lone surrogate cannot be encoded for it
            return None
        raise
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
        except (ValueError, OverflowError):
            # The pure scanner turns "\U00110000" into chr() of a number past U+10FFFF and
            # raises (OverflowError past 2**31); its reader stops on the hex digits, two
            # characters past the backslash.
            if flow_guard:
                return None
            at = Mark.of(loader.get_mark())
            issue = YamlIssue(
                Mark(at.line, max(1, at.col - 2)),
                "invalid YAML: escape beyond U+10FFFF in a double-quoted scalar",
            )
            return YamlDocument(issues=[issue], syntax_error=True)
        if root is None:
            return YamlDocument(empty=True)
        if flow_guard and _libyaml_differs(root, text):
            return None
        builder = Builder(loader, max_nodes(len(text)))
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


def _libyaml_differs(root: Node, text: str) -> bool:
    """Whether libyaml's reading of ``text`` may differ from the pure parser's: a block
    scalar header followed at once by ``#`` (``|#``, which only libyaml accepts), a ``?``
    within a flow collection, or an empty value in one (libyaml marks it one column later),
    or an empty value at the very end of a text without a final line break (``? a``, a bare
    ``---``: libyaml may mark it a line later).
    """
    end = bare_end(text)
    blocks = "|" in text or ">" in text
    if not blocks and end < 0 and "[" not in text and "{" not in text:
        return False
    # One pass over every node, so each is looked at with as few attribute reads as can be.
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        kind = node_kind(node)
        if kind == "scalar":
            if end >= 0 and node.start_mark.index == end and empty_plain(node):
                return True
            if (
                blocks
                and getattr(node, "style", None) in ("|", ">")
                and BLOCK_HEADER_COMMENT.match(text, node.start_mark.index)
            ):
                return True
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if kind == "sequence":
            children = list(node.value)
        elif kind == "mapping":
            children = [part for pair in node.value for part in pair]
        else:
            continue
        if getattr(node, "flow_style", False):
            if flow_key_indicator(text[node.start_mark.index : node.end_mark.index]):
                return True
            # An empty plain scalar (style None in PyYAML, "" in libyaml).
            if any(node_kind(c) == "scalar" and not c.value and not c.style for c in children):
                return True
        stack.extend(children)
    return False
