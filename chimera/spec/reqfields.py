"""The fields every requirement carries besides its check (id, title, risk, depends_on,
owner), and the id pattern."""

from __future__ import annotations

import re
from typing import Annotated, Any, NamedTuple

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
)

from chimera.spec.kinds.fields import NO_BACKSLASH_PATTERN, Glob
from chimera.spec.model import Risk

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""A requirement id: safe in pytest node ids (``file::id``), shell arguments and URLs."""

# ``\Z``, not ``$``: Python's ``$`` also matches before a final newline, so ``"abc\n"`` would
# pass as an id and carry a line break into every surface that shows one.
ID_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


def is_requirement_id(value: object) -> bool:
    """True when ``value`` is a string with the shape of a requirement id (:data:`ID_PATTERN`,
    the whole string: no trailing newline)."""
    return isinstance(value, str) and ID_RE.match(value) is not None


# --------------------------------------------------------------------------- common fields


def _check_id(value: str) -> str:
    if not ID_RE.match(value):
        raise ValueError(
            f"invalid id {value!r}: an id starts with a letter or digit and continues with "
            "letters, digits, '_', '.' or '-'"
        )
    return value


def _one_or_many(value: object) -> object:
    """Accept a single string where a list of strings is expected."""
    return [value] if isinstance(value, str) else value


RequirementId = Annotated[
    str, AfterValidator(_check_id), Field(json_schema_extra={"pattern": ID_PATTERN})
]


def _string_or_list_schema(item: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [item, {"type": "array", "items": item}]}


class RequirementFields(BaseModel):
    """Fields every requirement carries besides its one check (the kind key)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="Requirement")

    id: RequirementId = Field(
        description=(
            "Unique id across the whole spec directory; the pytest node id is "
            "'<spec file>::<id>'. Letters, digits, '_', '.', '-'."
        ),
    )
    title: str | None = Field(default=None, description="Human title shown in reports.")
    risk: Risk = Field(
        default=Risk.LOW,
        description=(
            "How much human attention a change needs: 'high' opens a draft PR that waits "
            "for a maintainer's approval."
        ),
    )
    depends_on: Annotated[
        list[RequirementId],
        BeforeValidator(_one_or_many),
        WithJsonSchema(_string_or_list_schema({"type": "string", "pattern": ID_PATTERN})),
    ] = Field(
        default_factory=list,
        description="Ids of requirements this one builds on (one id or a list).",
    )
    owner: Annotated[
        list[Glob],
        BeforeValidator(_one_or_many),
        WithJsonSchema(_string_or_list_schema({"type": "string", "pattern": NO_BACKSLASH_PATTERN})),
    ] = Field(
        default_factory=list,
        description=(
            "Path scope (a gitignore-style glob, or a list of them, '/' separators) used to "
            "build ownership-scoped context."
        ),
    )


class CommonFields(NamedTuple):
    """A requirement's common fields as the Spec keeps them (lists as tuples, no repeats)."""

    id: str
    title: str | None
    risk: Risk
    depends_on: tuple[str, ...]
    owner: tuple[str, ...]


_ID_AND_TITLE = frozenset({"id", "title"})


def plain_fields(common: dict[str, Any]) -> CommonFields | None:
    """The fields of the common case, an id (already matched) and maybe a title, read
    without pydantic; ``None`` for anything else (:class:`RequirementFields` reads it)."""
    if common.keys() <= _ID_AND_TITLE:
        title = common.get("title")
        if title is None or type(title) is str:
            return CommonFields(common["id"], title, Risk.LOW, (), ())
    return None
