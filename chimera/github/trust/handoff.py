"""Versioned files handed from one job or process to another: written atomically, parsed once.

The Action's hand-offs (the run report from the agent job to the publish job, the agent
child's request) are pydantic models with a ``version`` field. :func:`write_model` writes one
with :mod:`chimera.atomic`, so a reader never sees a torn file; :func:`read_model` parses it
once at the boundary, never through a link, and turns every failure (a missing or unreadable
file, a link or special file, invalid JSON, an unknown version, a missing field, a wrong
type, an unknown field) into one :class:`~chimera.errors.HandoffError` line naming the file
and the first problem.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from chimera.atomic import atomic_write_text
from chimera.confine import read_regular
from chimera.errors import HandoffError, UnsafePathError

__all__ = ["describe_validation", "read_model", "supported_version", "write_model"]

M = TypeVar("M", bound=BaseModel)


def supported_version(value: object, supported: int, what: str) -> int:
    """``value`` when it is the ``supported`` version, else a ``ValueError`` naming both (use
    it from a ``mode="before"`` validator on the ``version`` field, so an unknown version is
    reported as such and not as the first field the new format renamed)."""
    if value != supported or isinstance(value, bool):
        raise ValueError(
            f"{what} version {value!r} is not supported (this Chimera reads version {supported})"
        )
    return supported


def describe_validation(exc: ValidationError) -> str:
    """The first problem of ``exc`` as ``field.path: message`` (plus how many more)."""
    errors = exc.errors(include_url=False)
    if not errors:  # pragma: no cover - pydantic never raises an empty ValidationError
        return str(exc).splitlines()[0]
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "missing":
        message = "required field missing"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"


def write_model(path: Path, model: BaseModel) -> Path:
    """Write ``model`` as JSON to ``path`` atomically (parents created); returns ``path``.

    Raises:
        OSError: the directory is not writable (the target is untouched).
    """
    atomic_write_text(path, model.model_dump_json(indent=2) + "\n")
    return path


def read_model(path: Path, model: type[M], what: str) -> M:
    """Parse ``path`` as ``model`` (``what`` names it in errors: ``"run report"``).

    Raises:
        HandoffError: one line, ``PATH: invalid WHAT: field: problem`` (or: missing,
            unreadable).
    """
    try:
        data = read_regular(path.parent, path.name, what=str(path))
        if data is None:
            raise HandoffError(f"{path}: no {what}")
        raw = data.decode("utf-8")
    except UnsafePathError as exc:
        raise HandoffError(f"cannot read the {what}: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise HandoffError(f"{path}: cannot read the {what}: {reason}") from exc
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise HandoffError(f"{path}: invalid {what}: {describe_validation(exc)}") from exc
