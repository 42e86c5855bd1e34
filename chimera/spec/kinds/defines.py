"""``defines``: a Python file defines a symbol (read with ``ast``, never imported)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, Self

from pydantic import Field, model_validator

from chimera.spec.kinds._fields import RelPath
from chimera.spec.model import Check, CheckOutcome

if TYPE_CHECKING:
    from chimera.spec.context import CheckContext


class SymbolKind(StrEnum):
    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"
    VARIABLE = "variable"
    ANY = "any"


class Defines(Check):
    """The module at ``path`` (or importable as ``module``) defines ``symbol``.

    ``symbol`` is a dotted path inside the module: ``AuditLog.append`` is the method
    ``append`` of class ``AuditLog``; nested classes work the same way. Definitions count
    when they are ``def`` / ``async def`` / ``class`` statements, assignments (plain,
    annotated, augmented, tuple targets), imports bound at module level, decorated or not,
    including under module-level ``if`` / ``try`` / ``with`` blocks — but not when they exist
    only under ``if TYPE_CHECKING:``.

    Status: ``failed`` when the file is missing or the symbol is not defined (with the
    closest names as evidence); ``error`` when the file cannot be parsed (the line named).
    """

    kind_name: ClassVar[str] = "defines"

    path: RelPath | None = None
    module: str | None = Field(default=None, pattern=r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
    symbol: str = Field(pattern=r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
    kind: SymbolKind = SymbolKind.ANY

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if (self.path is None) == (self.module is None):
            raise ValueError("give exactly one of 'path' or 'module'")
        return self

    def describe(self) -> str:
        where = self.path if self.path is not None else f"module {self.module}"
        what = "" if self.kind is SymbolKind.ANY else f"{self.kind.value} "
        return f"defines {what}{self.symbol} in {where}"

    def check(self, ctx: CheckContext) -> CheckOutcome:
        raise NotImplementedError
