"""``contains`` and ``absent``: a pattern is (not) found in a file or a set of files."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, Self

from pydantic import Field, model_validator

from chimera.spec.kinds._fields import Glob, Globs, RelPath
from chimera.spec.model import Check, CheckOutcome

if TYPE_CHECKING:
    from chimera.spec.context import CheckContext


class MatchMode(StrEnum):
    ANY = "any"
    ALL = "all"


class _TextCheck(Check):
    path: RelPath | None = None
    paths: Globs | None = None
    exclude: list[Glob] = Field(default_factory=list)
    pattern: str = Field(min_length=1)
    regex: bool = True

    @model_validator(mode="after")
    def _one_scope(self) -> Self:
        if (self.path is None) == (self.paths is None):
            raise ValueError("give exactly one of 'path' or 'paths'")
        return self

    def scope(self) -> str:
        if self.path is not None:
            return self.path
        text = ", ".join(self.paths or [])
        if self.exclude:
            text += " excluding " + ", ".join(self.exclude)
        return text

    def shown_pattern(self) -> str:
        return repr(self.pattern) if not self.regex else f"/{self.pattern}/"


class Contains(_TextCheck):
    """The pattern is found in ``path``, or in any (``match: all``: every) file of ``paths``.

    Fail-closed: an unreadable selected file never helps; with ``match: all`` it makes the
    requirement ``error``. A scope that selects zero files is ``error``.
    """

    kind_name: ClassVar[str] = "contains"

    match: MatchMode = MatchMode.ANY

    def describe(self) -> str:
        quant = " (every file)" if self.match is MatchMode.ALL and self.paths else ""
        return f"contains {self.shown_pattern()} in {self.scope()}{quant}"

    def check(self, ctx: CheckContext) -> CheckOutcome:
        raise NotImplementedError


class Absent(_TextCheck):
    """The pattern is found in no selected file.

    Fail-closed: a selected file that cannot be scanned (binary, undecodable, over the size
    limit, broken link) turns the requirement red with the reason. A missing ``path`` passes
    (nothing can contain the pattern); a ``paths`` scope selecting zero files is ``error``.
    """

    kind_name: ClassVar[str] = "absent"

    def describe(self) -> str:
        return f"absent {self.shown_pattern()} from {self.scope()}"

    def check(self, ctx: CheckContext) -> CheckOutcome:
        raise NotImplementedError
