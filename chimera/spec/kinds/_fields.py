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


NO_BACKSLASH_PATTERN = r"^[^\\]*[^\\\s][^\\]*$"
"""JSON Schema side of `_path_text`: not blank, no backslash (editors flag it)."""

_NO_BACKSLASH_SCHEMA = Field(json_schema_extra={"pattern": NO_BACKSLASH_PATTERN})

RelPath = Annotated[str, AfterValidator(_path_text), _NO_BACKSLASH_SCHEMA]
"""A path relative to the checked root, with '/' separators."""

Glob = Annotated[str, AfterValidator(_path_text), _NO_BACKSLASH_SCHEMA]
"""A gitignore-style glob relative to the checked root."""

Globs = Annotated[list[Glob], Field(min_length=1)]
