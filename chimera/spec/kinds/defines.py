"""``defines``: a Python file defines a symbol (read with ``ast``, never imported)."""

from __future__ import annotations

import difflib
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, Self

from pydantic import Field, model_validator

from chimera.spec.kinds.fields import RelPath
from chimera.spec.model import Check, CheckOutcome, Evidence, Status

if TYPE_CHECKING:
    from collections.abc import Mapping

    from chimera.spec.check_context import CheckContext, Definition


def _joined(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


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
    including under module- or class-level ``if`` / ``try`` / ``with`` blocks (every branch
    of an ``if`` whose test is not a constant: a method under ``if sys.version_info >= ...:``
    in a class body counts) — but not when they exist only under ``if TYPE_CHECKING:`` or in
    a branch a constant test rules out (``if False:``).

    Status: ``failed`` when the file is missing or the symbol is not defined (with the
    closest names as evidence); ``error`` when the file cannot be parsed (the line named).
    """

    kind_name: ClassVar[str] = "defines"
    cacheable: ClassVar[bool] = True

    path: RelPath | None = Field(
        default=None, description="Python file relative to the root (or give 'module')."
    )
    module: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$",
        description="Dotted module name, looked up from the root and src/ (or give 'path').",
    )
    symbol: str = Field(
        pattern=r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$",
        description="Dotted name inside the module, e.g. 'AuditLog.append'.",
    )
    kind: SymbolKind = Field(
        default=SymbolKind.ANY,
        description="What the symbol must be: class, function, method, variable or any.",
    )

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if (self.path is None) == (self.module is None):
            raise ValueError("give exactly one of 'path' or 'module'")
        return self

    def describe(self) -> str:
        where = self.path if self.path is not None else f"module {self.module}"
        what = "" if self.kind is SymbolKind.ANY else f"{self.kind.value} "
        return f"defines {what}{self.symbol} in {where}"

    def _target(self, ctx: CheckContext) -> tuple[str | None, str | None]:
        """``(relative path, None)`` or ``(None, why the module was not found)``."""
        if self.path is not None:
            return self.path, None
        assert self.module is not None
        found, looked = ctx.resolve_module(self.module)
        if found is None:
            return None, f"module {self.module} not found (looked for {', '.join(looked)})"
        return found, None

    def prepare(self, ctx: CheckContext) -> None:
        path, _ = self._target(ctx)
        if path is not None:
            ctx.announce_module(path)

    def check(self, ctx: CheckContext) -> CheckOutcome:
        from chimera.spec.engine.pyindex import kind_matches

        path, not_found = self._target(ctx)
        if path is None:
            return CheckOutcome(Status.FAILED, not_found or "module not found")
        index = ctx.module_index(path)
        if index.missing:
            return CheckOutcome(
                Status.FAILED,
                f"{index.file} does not exist (expected to define {self.symbol})",
                (Evidence(file=index.file, note="missing"),),
            )
        if index.problem is not None:
            return CheckOutcome(Status.ERROR, index.problem)
        wanted = self.kind.value
        what = "" if self.kind is SymbolKind.ANY else f"{wanted} "
        # Evidence names the file a person would edit, and the link when one selected it.
        file = index.source or index.file
        via = f"via symlink {index.file}" if index.source else ""
        found = index.definitions.get(self.symbol, ())
        fitting = [d for d in found if kind_matches(wanted, d.kind)]
        if fitting:
            d = fitting[0]
            return CheckOutcome(
                Status.PASSED,
                f"{index.file} defines {what}{self.symbol} ({d.kind})",
                (Evidence(file=file, line=d.line, col=d.col, snippet=d.snippet, note=via),),
            )
        if found:
            kinds = sorted({d.kind for d in found})
            return CheckOutcome(
                Status.FAILED,
                f"{self.symbol} in {index.file} is a {' / '.join(kinds)}, not a {wanted}",
                tuple(
                    Evidence(
                        file=file,
                        line=d.line,
                        col=d.col,
                        snippet=d.snippet,
                        note=_joined(d.kind, via),
                    )
                    for d in found
                ),
            )
        message = f"{index.file} does not define {what}{self.symbol}"
        near = self._near_misses(file, index.definitions, via)
        if index.star_imports:
            # `from m import *` may well bind the symbol; saying "no similar names" would
            # send the reader looking for a typo that is not there.
            sources = ", ".join(dict.fromkeys(d.qualname for d in index.star_imports))
            message += (
                f" (it re-exports with a star import from {sources}, which is not followed; "
                "point the requirement at the module that defines it)"
            )
            near += [
                Evidence(
                    file=file,
                    line=d.line,
                    col=d.col,
                    snippet=d.snippet,
                    note=_joined(f"star import from {d.qualname}, not followed", via),
                )
                for d in index.star_imports
            ]
        if not near:
            near = [Evidence(file=file, note=_joined("no similar names defined", via))]
        return CheckOutcome(Status.FAILED, message, tuple(near))

    def _near_misses(
        self, file: str, definitions: Mapping[str, tuple[Definition, ...]], via: str = ""
    ) -> list[Evidence]:
        """Definitions whose names are close to ``symbol`` (a typo, a moved method)."""
        names = list(definitions)
        leaf = self.symbol.rsplit(".", 1)[-1]
        lowered = self.symbol.lower()
        # The same name elsewhere first (a method that lives on a base class, a function
        # that moved into a class), then case slips, then spelling neighbours.
        close = [n for n in names if n.rsplit(".", 1)[-1] == leaf]
        close += [n for n in names if n.lower() == lowered and n not in close]
        close += [
            n
            for n in difflib.get_close_matches(self.symbol, names, n=5, cutoff=0.6)
            if n not in close
        ]
        out = []
        for name in close[:5]:
            d = definitions[name][0]
            out.append(
                Evidence(
                    file=file,
                    line=d.line,
                    col=d.col,
                    snippet=d.snippet,
                    note=_joined(f"similar name: {name} ({d.kind})", via),
                )
            )
        return out
