"""pydantic errors mapped onto YAML nodes, as one-line ``file:line:col`` problem messages.

Shared by the one-pass loaders of Chimera's kind-keyed YAML files (crews, agent profiles):
each pydantic error lands on the node its ``loc`` names, unknown keys get a "did you mean"
suggestion from the model's own fields, and a missing field is reported on its parent.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from chimera.spec.yamlload import Mark, NodePath, YamlDocument, type_name


def unknown_message(key: str, where: str, allowed: Sequence[str], *, what: str = "field") -> str:
    """``unknown field 'x' in 'y'; did you mean 'z'?`` (or the allowed names)."""
    close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
    if close:
        return f"unknown {what} {key!r} {where}; did you mean '{close[0]}'?"
    return f"unknown {what} {key!r} {where} (expected one of: {', '.join(allowed)})"


def node_label(path: NodePath) -> str:
    """``roles[0].tools``: a node path as a person reads it."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _unwrap(annotation: Any) -> Any:
    """``X | None`` as ``X``."""
    if get_origin(annotation) in (Union, UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def fields_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The field names of the model found by following ``loc`` from ``model`` ([] if none):
    through fields, list items (an ``int`` part) and mapping values (a ``str`` part of a
    ``dict[str, X]``), ``X | None`` unwrapped."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        origin = get_origin(current)
        if isinstance(current, type) and issubclass(current, BaseModel) and isinstance(part, str):
            info = current.model_fields.get(part)
            current = info.annotation if info else None
        elif origin in (list, tuple, Sequence) and isinstance(part, int):
            current = get_args(current)[0] if get_args(current) else None
        elif origin in (dict, Mapping) and isinstance(part, str):
            args = get_args(current)
            current = args[1] if len(args) == 2 else None
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def pydantic_problems(
    exc: ValidationError,
    doc: YamlDocument,
    base: NodePath,
    model: type[BaseModel],
    *,
    top: str,
    unknown_parent: Callable[[str], str],
    missing_in: Callable[[str], str],
    skip_broken: bool = False,
) -> Iterator[tuple[Mark, str]]:
    """Each pydantic error of validating ``model`` at ``base`` as ``(mark, message)``.

    Args:
        top: how a node with an empty path is named (``crew``, ``profile``).
        unknown_parent: the parent's label → how an unknown key's parent is named.
        missing_in: the parent's label → how a missing field's parent is named.
        skip_broken: leave out errors on nodes the YAML reader already reported.
    """
    for error in exc.errors(include_url=False):
        loc = tuple(p for p in error["loc"] if isinstance(p, str | int))
        path = (*base, *loc)
        where = node_label(path) or top
        message = str(error["msg"]).removeprefix("Value error, ")
        kind = error["type"]
        if skip_broken and path in doc.broken:
            continue
        if kind == "extra_forbidden" and loc and isinstance(loc[-1], str):
            parent = unknown_parent(node_label(path[:-1]))
            yield (
                doc.key_mark(path),
                unknown_message(loc[-1], f"in '{parent}'", fields_at(model, loc[:-1])),
            )
        elif kind == "missing" and loc:
            parent = missing_in(node_label(path[:-1]))
            yield doc.mark(path[:-1]), f"missing required field '{loc[-1]}' in {parent}"
        elif kind in ("model_type", "model_attributes_type", "dict_type"):
            got = type_name(error.get("input"))
            yield doc.mark(path), f"'{where}' must be a mapping, got {got}"
        else:
            shown = error.get("input")
            plain = isinstance(shown, dict | list) or kind.startswith("value")
            yield doc.mark(path), f"{where}: {message}" + ("" if plain else f", got {shown!r}")
