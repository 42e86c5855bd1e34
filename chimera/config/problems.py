"""One way to report a configuration's validation problems: ``file: key: message`` on one
line, with "did you mean" for an unknown key.

Every surface that reads the configuration (``chimera check``, the pytest plugin, the agent
commands, ``chimera memory``...) formats a pydantic :class:`~pydantic.ValidationError` of a
configuration model through :func:`describe`, so a typo reads the same wherever it is met.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

__all__ = ["describe", "suggest"]


def suggest(word: str, choices: list[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``choices`` to ``word``, else ``""``."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _unwrap(annotation: Any) -> Any:
    """Strip ``X | None`` down to ``X``."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _keys_at(root: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The valid keys of the section that ``loc`` points into (for "did you mean")."""
    current: Any = root
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return []
            current = field.annotation
        elif get_origin(current) in (dict, Mapping):
            current = get_args(current)[1]
        elif get_origin(current) is list:
            current = get_args(current)[0]
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def describe(exc: ValidationError, file: str, prefix: str, model: type[BaseModel]) -> str:
    """Every problem of ``exc`` (raised validating ``model`` from ``file``) on one line:
    ``file: prefix.key: message``, the first in full and the rest after ``(and N more: ...)``.

    Args:
        exc: the validation error.
        file: the file's name as shown (``pyproject.toml``, ``chimera.toml``).
        prefix: the key path of the validated table, ending in ``.`` (``tool.chimera.``,
            ``tool.chimera.check.``) or ``""`` for the top level of ``chimera.toml``.
        model: the model that was validated (its fields give "did you mean").
    """
    lines: list[str] = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        key = ".".join(str(p) for p in loc)
        where = f"{prefix}{key}" if key else prefix.rstrip(".") or "(top level)"
        if error["type"] == "extra_forbidden":
            hint = suggest(str(loc[-1]), _keys_at(model, loc[:-1]))
            lines.append(f"{file}: {where}: unknown key{hint}")
        else:
            message = str(error["msg"]).removeprefix("Value error, ")
            lines.append(f"{file}: {where}: {message}")
    more = len(lines) - 1
    return lines[0] + (f" (and {more} more: {'; '.join(lines[1:])})" if more else "")
