"""A connector tool's descriptions reach the model as data, in one fence.

An MCP server or an OpenAPI document writes the words a model reads before it calls a tool:
the tool's description and every description, title and example in its arguments schema.
Nothing checks them: a server can write chat-template tokens (``<|im_start|>system ...``),
zero-width or Unicode tag characters (text the reviewer does not see), or plain instructions.
Tool *outputs* are fenced as untrusted data; so are descriptions, here:

* every annotation of the schema — ``description``, ``examples``, ``default`` at any depth —
  is taken out of the schema the model is sent, and listed under its path (``query.limit:
  Results per page``) after the tool's own description; ``title`` and ``$comment`` are dropped
  (generated noise, mostly: ``Url``, ``read_pageArguments``);
* that text is sanitized (:func:`~chimera.governance.sanitize.sanitize`: control tokens,
  invisible, bidi and tag characters removed), put on one line and placed in one
  :func:`~chimera.governance.sanitize.fence_inline` fence, after Chimera's own
  ``[connector NAME]`` tag, within the 1024 characters providers accept;
* what must stay in the schema because a call depends on it — property names, ``enum`` and
  ``const`` strings, ``pattern``, ``format``, ``type`` — is checked instead: a string that holds
  a control token, an invisible character or a line break, or a property name that is not an
  identifier, makes the tool refused (one line naming the place); the others connect.

One fence per tool, not one per parameter: an inline fence costs about 25 tokens, and a tool
has a dozen parameters. Validation of a call's arguments is unchanged (annotations validate
nothing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from chimera.errors import ConnectorError
from chimera.governance.sanitize import fence_inline, one_line, sanitize

__all__ = ["ANNOTATIONS", "MAX_DESCRIPTION", "describe_tool"]

MAX_DESCRIPTION = 1024
"""The longest tool description the strictest provider accepts, in characters."""

ANNOTATIONS = ("description", "examples", "example", "default")
"""Schema keywords that only describe: moved into the fenced description."""
DROPPED = ("title", "$comment")
"""Schema keywords that only describe and are dropped."""

_NAME = re.compile(r"[A-Za-z0-9_.$@\-\[\]]{1,64}")
_MAX_VALUE = 200


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def _checked(value: str, where: str) -> str:
    if len(value) > _MAX_VALUE or one_line(value) != value or sanitize(value) != value:
        raise ConnectorError(
            f"{where}: a value the model reads outside the description's fence holds a "
            "control token, an invisible character or a line break (or is over "
            f"{_MAX_VALUE} characters)"
        )
    return value


def _strip(node: Any, path: str, notes: list[tuple[str, str]]) -> Any:
    """``node`` without annotations (collected into ``notes`` under ``path``), its
    structural strings checked."""
    if isinstance(node, Mapping):
        out: dict[str, Any] = {}
        for key, value in node.items():
            key = str(key)
            if key in DROPPED:
                continue
            if key in ANNOTATIONS:
                text = _describe(value)
                if text.strip():
                    where = path or "arguments"
                    notes.append((f"{where} {key}" if key != "description" else where, text))
                continue
            if key in ("properties", "patternProperties", "$defs", "definitions"):
                if not isinstance(value, Mapping):
                    out[key] = value
                    continue
                props: dict[str, Any] = {}
                for name, schema in value.items():
                    name = str(name)
                    if key == "properties" and not _NAME.fullmatch(name):
                        raise ConnectorError(
                            f"{path or 'arguments'}: property name {one_line(name, 40)!r} is not "
                            "an identifier (letters, digits, _ . $ @ - [ ], at most 64)"
                        )
                    if key != "properties":
                        _checked(name, f"{path or 'arguments'}.{key}")
                    props[name] = _strip(schema, f"{path}.{name}" if path else name, notes)
                out[key] = props
                continue
            if key in ("enum", "const", "pattern", "format", "type", "required"):
                out[key] = _check_structural(value, f"{path or 'arguments'}.{key}")
                continue
            out[key] = _strip(value, path, notes)
        return out
    if isinstance(node, list):
        return [_strip(v, path, notes) for v in node]
    return node


def _check_structural(value: Any, where: str) -> Any:
    if isinstance(value, str):
        return _checked(value, where)
    if isinstance(value, list):
        return [_check_structural(v, where) for v in value]
    return value


def describe_tool(
    connector: str, description: str, parameters: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """``(description, parameters)`` of a connector tool as the model may see them (see the
    module docstring): the schema without annotations, and ``[connector NAME]`` followed by one
    fence holding the tool's description and each annotation under its path.

    Raises:
        ConnectorError: a structural string (property name, ``enum``, ``const``, ``pattern``,
            ``format``) the model would read outside the fence is unsafe (one line, where).
    """
    notes: list[tuple[str, str]] = []
    schema = _strip(dict(parameters), "", notes)
    parts = [one_line(description)] if description.strip() else []
    parts += [f"{where}: {one_line(text)}" for where, text in notes]
    prefix = f"[connector {one_line(connector, 64)}] "
    fence_cost = len(fence_inline("", "tool description"))
    room = MAX_DESCRIPTION - len(prefix) - fence_cost - 2
    text = " | ".join(p for p in parts if p) or "(no description)"
    return prefix + fence_inline(text, "tool description", limit=room), schema
