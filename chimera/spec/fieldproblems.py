"""Messages for a spec's fields: pydantic errors mapped onto the YAML nodes their ``loc``
names, unknown fields with a suggestion."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from chimera.spec.yamlload import Mark, NodePath, YamlDocument, type_name


def suggest(word: str, candidates: Sequence[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


def unknown_field_message(
    key: str, where: str, allowed: Sequence[str], suggestion: str | None = None
) -> str:
    if suggestion is None:
        suggestion = suggest(key, allowed)
    if suggestion is not None:
        return f"unknown field {key!r} {where}; did you mean '{suggestion}'?"
    return f"unknown field {key!r} {where} (expected one of: {', '.join(allowed)})"


# --------------------------------------------------------------------------- pydantic errors

_NO_INPUT = object()
_MAPPING_ERRORS = frozenset({"model_type", "model_attributes_type", "dict_type"})
_MESSAGE_PREFIXES = ("Value error, ", "Assertion failed, ")


def _loc_label(base: str, loc: Sequence[str | int]) -> str:
    text = base
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text = f"{text}.{part}" if text else part
    return text


def _shown(value: object) -> str:
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def pydantic_problems(
    exc: ValidationError,
    doc: YamlDocument,
    base: NodePath,
    label: str,
    model: type[BaseModel],
) -> Iterator[tuple[Mark, str]]:
    """Map each pydantic error onto the YAML node its ``loc`` names, with a clear message."""
    owner = f"'{label}'" if label else "requirement"
    errors = exc.errors(include_url=False)
    # A misspelt field shows up twice in pydantic (unknown 'sybmol', missing 'symbol');
    # the suggestion already says it, so the "missing" half is dropped.
    suggested: set[tuple[str | int, ...]] = set()
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
            hit = suggest(loc[-1], _field_names_at(model, loc[:-1]))
            if hit is not None:
                suggested.add((*loc[:-1], hit))
    for error in errors:
        loc = tuple(part for part in error["loc"] if isinstance(part, str | int))
        path = (*base, *loc)
        kind = error["type"]
        if any(prefix in doc.broken for prefix in _prefix_paths(path)):
            continue  # the YAML layer reported this value already
        if kind == "missing" and loc in suggested:
            continue
        message = str(error["msg"])
        for prefix in _MESSAGE_PREFIXES:
            if message.startswith(prefix):
                message = message[len(prefix) :]
        where = _loc_label(label, loc)

        if kind == "extra_forbidden" and loc and isinstance(loc[-1], str):
            allowed = _field_names_at(model, loc[:-1])
            parent = f"'{_loc_label(label, loc[:-1])}'" if loc[:-1] else owner
            yield (
                doc.key_mark(path),
                unknown_field_message(loc[-1], f"in {parent}", allowed or []),
            )
        elif kind == "missing" and loc:
            parent = f"'{_loc_label(label, loc[:-1])}'" if loc[:-1] else owner
            yield doc.mark(path[:-1]), f"missing required field '{loc[-1]}' in {parent}"
        elif kind in _MAPPING_ERRORS:
            fields = _field_names_at(model, loc)
            listed = f" ({', '.join(fields)})" if fields else ""
            yield (
                doc.mark(path),
                f"'{where}' must be a mapping of its fields{listed}, "
                f"got {type_name(error.get('input'))}",
            )
        elif kind in {"value_error", "assertion_error"}:
            yield doc.mark(path), f"{where}: {message}" if where else message
        else:
            shown = error.get("input", _NO_INPUT)
            # A container's value would only repeat "got a list"; scalars are worth showing.
            got = (
                ""
                if isinstance(shown, dict | list) or shown is _NO_INPUT
                else f", got {_shown(shown)}"
            )
            yield doc.mark(path), f"{where}: {message}{got}" if where else message + got


def _prefix_paths(path: NodePath) -> Iterator[NodePath]:
    for end in range(len(path), 0, -1):
        yield path[:end]


def _field_names_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The YAML keys (aliases) of the model reached by following ``loc`` from ``model``."""
    candidates: list[Any] = [model]
    for part in loc:
        nxt: list[Any] = []
        for ann in _expand(candidates):
            if isinstance(part, str) and isinstance(ann, type) and issubclass(ann, BaseModel):
                for name, info in ann.model_fields.items():
                    if part in (name, info.alias):
                        nxt.append(info.annotation)
            elif isinstance(part, int):
                args = get_args(ann)
                if get_origin(ann) in (list, tuple, set, frozenset) and args:
                    nxt.append(args[0])
            elif get_origin(ann) is dict and len(get_args(ann)) == 2:
                nxt.append(get_args(ann)[1])
        candidates = nxt
    for ann in _expand(candidates):
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return [info.alias or name for name, info in ann.model_fields.items()]
    return []


def _expand(annotations: list[Any]) -> Iterator[Any]:
    """Unwrap ``Annotated``, ``Optional`` and unions into their member types."""
    for ann in annotations:
        origin = get_origin(ann)
        if origin is Annotated:
            yield from _expand([get_args(ann)[0]])
        elif origin is Union or origin is UnionType:
            yield from _expand(list(get_args(ann)))
        else:
            yield ann
