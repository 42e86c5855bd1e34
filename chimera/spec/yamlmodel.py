"""A YAML file validated into a pydantic model, with every error at ``file:line:col``.

The one way Chimera's own YAML formats other than the Spec (scripted models, benchmark
chains, A/B registrations) are read: :func:`~chimera.spec.yamlload.parse_yaml` keeps the
position of every node, and the first validation error is mapped back to its node.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chimera.errors import ConfigError
from chimera.spec.yamlload import parse_yaml

M = TypeVar("M", bound=BaseModel)


def load_yaml_model(
    path: Path, model: type[M], *, what: str, expected: str, list_key: str | None = None
) -> M:
    """Read ``path`` (YAML, or JSON, a subset) into ``model``.

    Args:
        path: the file.
        model: the pydantic model of the whole document.
        list_key: when given, a document that is a bare list is read as ``{list_key: [...]}``
            (and error locations are reported relative to the list).
        what: names the document in messages (``the script``).
        expected: what an empty file should have held (``a list of turns``).

    Raises:
        ConfigError: ``file:line:col: key: message`` for an unreadable, malformed, empty or
            invalid file (the first problem; one line).
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc}") from exc
    doc = parse_yaml(text)
    if doc.issues:
        issue = doc.issues[0]
        raise ConfigError(f"{path}:{issue.mark.line}:{issue.mark.col}: {issue.message}")
    data: Any = doc.value
    if doc.empty or data is None:
        raise ConfigError(f"{path}:1:1: {what} is empty; expected {expected}")
    bare_list = list_key is not None and isinstance(data, list)
    wrapped = {list_key: data} if bare_list else data
    try:
        return model.model_validate(wrapped)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        node = loc[1:] if bare_list and loc[:1] == (list_key,) else loc
        mark = doc.key_mark(node) if error["type"] == "extra_forbidden" else doc.mark(node)
        key = ".".join(str(p) for p in loc)
        raise ConfigError(f"{path}:{mark.line}:{mark.col}: {key}: {error['msg']}") from exc
