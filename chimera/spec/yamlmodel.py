"""A YAML file validated into a pydantic model, with every error at ``file:line:col``.

The one way Chimera's own YAML formats other than the Spec (scripted models, benchmark
chains, task families, A/B registrations) are read: :func:`~chimera.spec.yamlload.parse_yaml`
keeps the position of every node, and — as the Spec loader does — every problem of the file
is collected in one pass and mapped back to its node, an unknown key with "did you mean"
(:mod:`chimera.spec.yamlproblems`).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chimera.errors import ConfigError, FileProblems, SpecProblem
from chimera.spec.yamlload import parse_yaml
from chimera.spec.yamlproblems import fields_at

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
        ConfigError: the file cannot be read (one line).
        FileProblems: it is malformed, empty or invalid: every problem found, each
            ``file:line:col: key: message`` (an unknown key with "did you mean").
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc}") from exc
    doc = parse_yaml(text)
    source = str(path)
    problems = [SpecProblem(source, i.mark.line, i.mark.col, i.message) for i in doc.issues]
    data: Any = doc.value
    if doc.syntax_error or (data is None and problems):
        raise FileProblems(problems)
    if doc.empty or data is None:
        raise FileProblems([SpecProblem(source, 1, 1, f"{what} is empty; expected {expected}")])
    bare_list = list_key is not None and isinstance(data, list)
    wrapped = {list_key: data} if bare_list else data
    try:
        value = model.model_validate(wrapped)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        hints: dict[tuple[str | int, ...], str] = {}
        for error in errors:
            loc = tuple(p for p in error["loc"] if isinstance(p, str | int))
            if error["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
                close = difflib.get_close_matches(
                    loc[-1], fields_at(model, loc[:-1]), n=1, cutoff=0.6
                )
                if close:
                    hints[loc] = close[0]
        # A misspelt key shows up twice in pydantic (unknown 'nme', missing 'name'): the
        # suggestion says both, so the "missing" half is dropped (as the Spec loader does).
        suggested = {(*loc[:-1], hit) for loc, hit in hints.items()}
        for error in errors:
            loc = tuple(p for p in error["loc"] if isinstance(p, str | int))
            if error["type"] == "missing" and loc in suggested:
                continue
            node = loc[1:] if bare_list and loc[:1] == (list_key,) else loc
            if any(node[:end] in doc.broken for end in range(len(node), 0, -1)):
                continue  # the YAML reader reported this node already
            key = ".".join(str(p) for p in loc)
            if error["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
                mark = doc.key_mark(node)
                hint = f"; did you mean '{hints[loc]}'?" if loc in hints else ""
                message = f"{key}: unknown field{hint}"
            else:
                mark = doc.mark(node)
                message = f"{key}: {error['msg']}" if key else str(error["msg"])
            problems.append(SpecProblem(source, mark.line, mark.col, message))
        problems.sort(key=lambda p: (p.line, p.col))
        raise FileProblems(problems) from exc
    if problems:  # duplicate keys and the like: the value parsed, but the file is wrong
        raise FileProblems(problems)
    return value
