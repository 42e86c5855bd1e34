"""The symbol index of a Python file for ``defines``: read with ``ast``, never imported.

A name counts as defined when a statement binds it at module level or directly in a class
body (recursively for nested classes): ``def`` / ``async def`` (decorated or not), ``class``,
assignments (plain, annotated — with or without a value —, augmented, tuple/list/starred
targets), ``type`` aliases, and imports. Statements under module- or class-level ``if`` /
``try`` / ``with`` blocks count, because they run on import; the body of
``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) does not, because it never runs — its
``else:`` branch does. Likewise a branch that a constant test rules out (``if False:``,
``if 0:``, ``if not True:``) is dead code and does not count, while its live branch does.
Any other test is not evaluated (the code is never run): both branches count, in a class body
as at module level, so a method defined only under ``if sys.version_info >= (3, 99):`` is
defined (the requirement states what the source defines, not what one interpreter binds).
Function bodies are not indexed (their locals are not attributes).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from chimera.spec.check_context import Definition

CLASS = "class"
FUNCTION = "function"
METHOD = "method"
VARIABLE = "variable"
IMPORT = "import"
STAR_IMPORT = "star import"

STAR = "*"
"""The key :func:`index_source` files ``from m import *`` statements under: no ``symbol`` can
name it, and the names such a statement binds are unknown without importing ``m``."""


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING"
    return False


def _is_not_type_checking(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and _is_type_checking(test.operand)
    )


def _constant_truth(test: ast.expr) -> bool | None:
    """The truth of a test that is a constant (or ``not`` a constant); ``None`` otherwise."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _constant_truth(test.operand)
        return None if inner is None else not inner
    return None


def _target_names(target: ast.expr) -> Iterable[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


class _Indexer:
    def __init__(self, lines: Sequence[str], snippet_chars: int) -> None:
        self.lines = lines
        self.snippet_chars = snippet_chars
        self.found: dict[str, list[Definition]] = {}

    def add(self, key: str, kind: str, node: ast.AST, *, qualname: str | None = None) -> None:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + 1
        text = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        if len(text) > self.snippet_chars:
            text = text[: self.snippet_chars - 1] + "…"
        found = Definition(qualname or key, kind, line, col, text)
        self.found.setdefault(key, []).append(found)

    def block(self, body: Sequence[ast.stmt], prefix: str, in_class: bool) -> None:
        for stmt in body:
            self.stmt(stmt, prefix, in_class)

    def stmt(self, node: ast.stmt, prefix: str, in_class: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.add(prefix + node.name, METHOD if in_class else FUNCTION, node)
        elif isinstance(node, ast.ClassDef):
            name = prefix + node.name
            self.add(name, CLASS, node)
            self.block(node.body, name + ".", True)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name_node in _target_names(target):
                    self.add(prefix + name_node.id, VARIABLE, name_node)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            for name_node in _target_names(node.target):
                self.add(prefix + name_node.id, VARIABLE, name_node)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    assert isinstance(node, ast.ImportFrom)
                    source = "." * node.level + (node.module or "")
                    self.add(STAR, STAR_IMPORT, node, qualname=source)
                    continue
                bound = alias.asname or alias.name.split(".")[0]
                self.add(prefix + bound, IMPORT, node)
        elif isinstance(node, ast.If):
            constant = _constant_truth(node.test)
            if constant is not None:
                # A branch the compiler proves dead never runs, so it defines nothing.
                self.block(node.body if constant else node.orelse, prefix, in_class)
            elif _is_type_checking(node.test):
                self.block(node.orelse, prefix, in_class)
            elif _is_not_type_checking(node.test):
                self.block(node.body, prefix, in_class)
            else:
                self.block(node.body, prefix, in_class)
                self.block(node.orelse, prefix, in_class)
        elif isinstance(node, ast.Try):
            self.block(node.body, prefix, in_class)
            for handler in node.handlers:
                self.block(handler.body, prefix, in_class)
            self.block(node.orelse, prefix, in_class)
            self.block(node.finalbody, prefix, in_class)
        elif isinstance(node, ast.With | ast.AsyncWith):
            self.block(node.body, prefix, in_class)
        elif type(node).__name__ in ("TryStar",):
            for attr in ("body", "orelse", "finalbody"):
                self.block(getattr(node, attr), prefix, in_class)
            for handler in getattr(node, "handlers", ()):
                self.block(handler.body, prefix, in_class)
        elif type(node).__name__ == "TypeAlias":  # `type X = ...` (Python 3.12+)
            alias_name = getattr(node, "name", None)
            if isinstance(alias_name, ast.Name):
                self.add(prefix + alias_name.id, VARIABLE, node)


def index_source(
    text: str, filename: str, *, snippet_chars: int = 200
) -> tuple[dict[str, tuple[Definition, ...]], str | None]:
    """Index ``text`` (the source of ``filename``).

    Returns:
        ``(definitions by qualified name, None)``, or ``({}, reason)`` when the file does not
        parse — ``"syntax error at file:line:col: message"``. Star imports are listed under
        :data:`STAR`, each a ``star import`` definition whose ``qualname`` is the module
        imported from (``attr.filters``, ``.base``).
    """
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as exc:
        where: str = filename
        if exc.lineno:
            where += f":{exc.lineno}"
            if exc.offset:
                where += f":{exc.offset}"
        return {}, f"syntax error at {where}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return {}, f"cannot parse {filename}: {type(exc).__name__}: {exc}"
    indexer = _Indexer(text.split("\n"), snippet_chars)
    indexer.block(tree.body, "", False)
    return {k: tuple(v) for k, v in indexer.found.items()}, None


def kind_matches(wanted: str, found: str) -> bool:
    """Whether a definition of kind ``found`` satisfies ``kind: wanted``.

    ``any`` accepts everything; ``variable`` accepts assignments and imported names.
    """
    if wanted == "any":
        return True
    if wanted == VARIABLE:
        return found in (VARIABLE, IMPORT)
    return wanted == found
