"""Field types shared by the built-in kinds (globs, paths, patterns)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field


def _path_text(value: str) -> str:
    # One validator, not two: it runs for every path and glob of every requirement.
    if not value.strip():
        raise ValueError("must not be empty")
    if "\\" in value:
        raise ValueError(
            f"backslash in {value!r}: paths and globs use '/' (gitignore syntax) on every OS"
        )
    return value


def _glob_text(value: str) -> str:
    # Globs no gitignore line reads as files are refused here, at their line: they would
    # select nothing, silently (a comment) or as a "selects zero files" error at check time.
    _path_text(value)
    if value[0] == "#":
        raise ValueError(
            f"{value!r} is a comment in gitignore syntax and selects nothing; "
            f"write '/{value}' (or './{value}') for the file {value!r} at the root"
        )
    body = value[1:] if value[0] == "!" else value
    segments = body.split("/")
    if not body.strip():
        raise ValueError(f"{value!r} negates nothing: write '!' followed by a glob")
    if all(seg in ("", ".") for seg in segments):
        raise ValueError(
            f"{value!r} names the root directory, not files; write '**' for every file"
        )
    if ".." in segments:
        raise ValueError(f"'..' in {value!r} never matches: globs select files inside the root")
    return value


NO_BACKSLASH_PATTERN = r"^[^\\]*[^\\\s][^\\]*$"
"""JSON Schema side of `_path_text`: not blank, no backslash (editors flag it)."""

_NO_BACKSLASH_SCHEMA = Field(json_schema_extra={"pattern": NO_BACKSLASH_PATTERN})

RelPath = Annotated[str, AfterValidator(_path_text), _NO_BACKSLASH_SCHEMA]
"""A path relative to the checked root, with '/' separators."""

Glob = Annotated[str, AfterValidator(_glob_text), _NO_BACKSLASH_SCHEMA]
"""A gitignore-style glob relative to the checked root (a leading ``./`` anchors it there);
never a comment (``#x``), the root itself (``./``, ``.``) or a ``..`` segment."""

Globs = Annotated[list[Glob], Field(min_length=1)]
