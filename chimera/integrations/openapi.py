"""OpenAPI 3.0 / 3.1 documents to operations: parsed with ``openapi-pydantic``, refs resolved.

:func:`read_document` validates a document with ``openapi-pydantic`` (the version picked from
its ``openapi`` field) and returns its operations, filtered (:class:`OperationFilter`: by
operation id, tag or path pattern — imported documents routinely exceed a provider's 128-tool
limit and the context window). For each selected operation :func:`operation_schema` builds
the arguments schema the model sees, grouped as ``{path, query, header, body}``.

References: only local ones (``#/components/...``, JSON Pointer) are resolved; a remote
reference (another file, a URL) is refused, naming it — resolving it would read a file or
reach the network on the document's say. Cycles (a schema that refers to itself, two that
refer to each other, or a longer loop) are cut where they close: the reference is left as an
open object with a description naming it, so the expansion is finite. An expansion that
still grows past :data:`MAX_NODES` nodes is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, ValidationError

from chimera.errors import ConnectorError, MissingExtraError
from chimera.spec.yamlload import parse_yaml

__all__ = [
    "HTTP_METHODS",
    "MAX_NODES",
    "Operation",
    "OperationFilter",
    "operation_schema",
    "read_document",
    "resolve_refs",
]

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_NODES = 20_000
"""Most nodes one operation's schema may expand to (a wide, acyclic ref graph can explode)."""

GROUPS = ("path", "query", "header")


class OperationFilter(BaseModel):
    """Selects operations: any match of ``ids`` (operation ids), ``tags`` or ``paths``
    (``fnmatch`` patterns over the path template) selects; all empty selects everything."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ids: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    def selects(self, op: Operation) -> bool:
        if not (self.ids or self.tags or self.paths):
            return True
        return (
            any(fnmatchcase(op.operation_id, p) for p in self.ids)
            or any(t in self.tags for t in op.tags)
            or any(fnmatchcase(op.path, p) for p in self.paths)
        )


@dataclass(frozen=True)
class Operation:
    """One operation of a document.

    Attributes:
        operation_id: its ``operationId`` (or ``<method>_<path>`` when it has none).
        method: lower case (``get``...).
        path: the path template (``/pets/{id}``).
        summary: ``summary`` or the start of ``description``.
        tags: its tags.
        raw: the operation object as written (refs unresolved).
        path_parameters: the path item's shared ``parameters`` as written.
    """

    operation_id: str
    method: str
    path: str
    summary: str
    tags: tuple[str, ...]
    raw: Mapping[str, Any]
    path_parameters: tuple[Any, ...] = ()


def _pointer(document: Mapping[str, Any], ref: str) -> Any:
    node: Any = document
    for part in ref[2:].split("/") if ref != "#" else []:
        key = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise ConnectorError(f"reference {ref!r} points at nothing in the document")
    return node


def resolve_refs(node: Any, document: Mapping[str, Any], *, limit: int = MAX_NODES) -> Any:
    """``node`` with every local ``$ref`` expanded in place (see the module docstring).

    Raises:
        ConnectorError: a remote or dangling reference, or an expansion past ``limit`` nodes.
    """
    count = 0

    def walk(value: Any, stack: tuple[str, ...]) -> Any:
        nonlocal count
        count += 1
        if count > limit:
            raise ConnectorError(f"the schema expands past {limit} nodes through its references")
        if isinstance(value, Mapping):
            ref = value.get("$ref")
            if isinstance(ref, str):
                if not ref.startswith("#"):
                    raise ConnectorError(f"remote reference {ref!r} refused (only '#/...' refs)")
                if ref in stack:
                    loop = " -> ".join((*stack[stack.index(ref) :], ref))
                    return {"type": "object", "description": f"recursive: {loop} (not expanded)"}
                target = walk(_pointer(document, ref), (*stack, ref))
                siblings = {k: walk(v, stack) for k, v in value.items() if k != "$ref"}
                if siblings and isinstance(target, Mapping):
                    return {**target, **siblings}
                return target
            return {k: walk(v, stack) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, stack) for v in value]
        return value

    return walk(node, ())


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConnectorError(f"{path}: cannot read the OpenAPI document: {exc}") from exc
    doc = parse_yaml(text)
    if doc.issues:
        issue = doc.issues[0]
        raise ConnectorError(f"{path}:{issue.mark.line}:{issue.mark.col}: {issue.message}")
    if not isinstance(doc.value, dict):
        raise ConnectorError(f"{path}:1:1: an OpenAPI document is a mapping")
    value: dict[str, Any] = doc.value
    return value


_ID_SAFE = re.compile(r"[^A-Za-z0-9_]+")
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")


def read_document(
    path: Path, select: OperationFilter | None = None
) -> tuple[dict[str, Any], list[Operation]]:
    """The raw document and its selected operations, in document order.

    Raises:
        ConnectorError: unreadable or malformed YAML/JSON (``file:line:col``), not a valid
            OpenAPI 3.0/3.1 document (the first error's location), or no ``paths``.
        MissingExtraError: ``openapi-pydantic`` is not installed.
    """
    try:
        from openapi_pydantic import parse_obj
    except ImportError as exc:
        raise MissingExtraError("OpenAPI connectors", "openapi") from exc
    raw = _load(path)
    version = str(raw.get("openapi", ""))
    if not version.startswith(("3.0", "3.1")):
        raise ConnectorError(f"{path}: 'openapi' must be 3.0.x or 3.1.x, got {version!r}")
    try:
        parsed = parse_obj(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        # The union's branch tag (``3.1.0``) is not a place in the document.
        where = ".".join(str(p) for p in first["loc"] if not _VERSION.match(str(p)))
        raise ConnectorError(
            f"{path}: not a valid OpenAPI document: {where}: {first['msg']}"
        ) from exc
    operations: list[Operation] = []
    for route, item in (parsed.paths or {}).items():
        raw_item = raw["paths"][route]
        for method in HTTP_METHODS:
            op = getattr(item, method, None)
            if op is None:
                continue
            op_id = op.operationId or _ID_SAFE.sub("_", f"{method}{route}").strip("_")
            summary = op.summary or (op.description or "").strip().split("\n")[0]
            operations.append(
                Operation(
                    operation_id=op_id,
                    method=method,
                    path=route,
                    summary=summary[:300],
                    tags=tuple(op.tags or ()),
                    raw=raw_item[method],
                    path_parameters=tuple(raw_item.get("parameters") or ()),
                )
            )
    chosen = select or OperationFilter()
    return raw, [op for op in operations if chosen.selects(op)]


def operation_schema(
    op: Operation, document: Mapping[str, Any], *, hidden: Iterable[tuple[str, str]] = ()
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The arguments schema of ``op`` and the parameter names per group.

    Args:
        hidden: ``(group, name)`` parameters left out of the schema (credentials the tool
            injects at call time), matched case-insensitively for headers.

    Returns:
        ``(schema, groups)``: ``schema`` is an object with ``path``/``query``/``header``
        objects and ``body`` (the JSON request body's schema), each present only when the
        operation has such parameters; ``groups`` maps each group to its parameter names.

    Raises:
        ConnectorError: a remote or dangling reference, or an over-large expansion.
    """
    skip = {(g, n.lower() if g == "header" else n) for g, n in hidden}
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for param in (*op.path_parameters, *(op.raw.get("parameters") or ())):
        resolved = resolve_refs(param, document)
        if not isinstance(resolved, Mapping):
            continue
        where, name = str(resolved.get("in", "")), str(resolved.get("name", ""))
        if where in GROUPS and name:
            merged[(where, name)] = dict(resolved)  # an operation's parameter overrides the path's
    properties: dict[str, Any] = {}
    required: list[str] = []
    groups: dict[str, list[str]] = {}
    for group in GROUPS:
        props: dict[str, Any] = {}
        needed: list[str] = []
        for (where, name), param in merged.items():
            key = name.lower() if where == "header" else name
            if where != group or (where, key) in skip:
                continue
            schema = dict(param.get("schema") or {"type": "string"})
            if param.get("description") and "description" not in schema:
                schema["description"] = str(param["description"])[:500]
            props[name] = schema
            if param.get("required") or where == "path":
                needed.append(name)
        if props:
            properties[group] = {"type": "object", "properties": props, "required": needed}
            groups[group] = list(props)
            if needed:
                required.append(group)
    body = op.raw.get("requestBody")
    if body is not None:
        resolved_body = resolve_refs(body, document)
        content = resolved_body.get("content") or {} if isinstance(resolved_body, Mapping) else {}
        media = next((content[k] for k in content if "json" in k), None)
        if isinstance(media, Mapping):
            properties["body"] = dict(media.get("schema") or {})
            groups["body"] = []
            if resolved_body.get("required"):
                required.append("body")
    return {"type": "object", "properties": properties, "required": required}, groups
