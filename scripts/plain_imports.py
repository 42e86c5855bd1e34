"""Every import reachable from the plain install's entry points, checked against its dependencies.

The plain install (``pip install pytest-chimera``) must run ``chimera check``, the pytest plugin
and the Action's ``check`` mode. This walks, from those entry points, every ``import`` and
``from ... import`` that can run — module level and function-local alike, ``TYPE_CHECKING``
blocks excepted — through Chimera's own modules (a module reached is walked whole, with its
parent packages), and sorts each import of another distribution:

* the standard library, or a plain dependency (``[project] dependencies``): fine;
* a package of an extra (``[project.optional-dependencies]``): fine only behind the one guard,
  ``try: import X`` / ``except ImportError: raise MissingExtraError(feature, "EXTRA")`` naming an
  extra that holds it, so a user without it gets one line naming the install command;
* anything else (an extra's package without the guard, a package no group declares): a problem.

Entry points (:data:`ENTRIES`): the console script's check path (``chimera.cli`` and its
``check`` subcommand, which ``chimera check`` alone imports), the ``pytest11`` plugin, and the
Action's ``check`` mode (the functions of ``chimera.cli.action`` that mode runs). Dynamic imports
(``importlib.import_module("name")`` with a literal) count as imports. Which import names a
distribution provides is read from the installed distributions (the ``dev`` install holds
every group)::

    python scripts/plain_imports.py          # list the problems; exit 1 when there are any
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("chimera", "pytest_chimera")
GUARD_ERROR = "MissingExtraError"
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
# A guard whose handler goes on without the package (an accelerator's plain fallback).
FALLBACK = "(fallback)"

# Extras for Chimera's own development, never named to users.
TOOL_EXTRAS = frozenset({"dev", "docs"})

# Module → the functions of it that the entry point runs (``None``: the whole module).
ENTRIES: dict[str, tuple[str, ...] | None] = {
    # The console script (``chimera = chimera.cli:main``): ``chimera check`` imports the package,
    # then only the subcommand module named like the command (``chimera.cli._parser_for``).
    "chimera.cli": None,
    "chimera.cli.check": None,
    # The pytest11 entry point.
    "pytest_chimera.plugin": None,
    # ``chimera action --mode check``: the handler's check branch, before any other mode's.
    "chimera.cli.action": ("register", "_handle", "_check", "_root", "_env"),
}
# A package that imports its submodules by computed name (``import_module(f"...{x}")``): each of
# them is walked with these functions (``None``: whole). Any other package that does so has all
# of its direct submodules walked whole. ``chimera --help`` imports every subcommand module and
# calls its ``register``; a handler runs only for its own command.
DYNAMIC: dict[str, tuple[str, ...] | None] = {"chimera.cli": ("register",)}


@dataclass(frozen=True)
class Import:
    """One import statement's target: ``module`` (absolute, dotted), where it is, and the extra
    its guard names (``None``: not guarded)."""

    module: str
    source: str
    line: int
    guard: str | None


def _req_name(spec: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", spec)
    assert match is not None, spec
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def dependency_groups(pyproject: Path) -> dict[str, set[str]]:
    """``{"": plain distributions, extra: its distributions}``, names normalised; an extra that
    names ``pytest-chimera[a,b]`` holds a's and b's too."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    own = _req_name(project["name"])
    raw: dict[str, list[str]] = {"": list(project.get("dependencies", []))}
    raw |= project.get("optional-dependencies", {})
    groups: dict[str, set[str]] = {}

    def expand(group: str, seen: frozenset[str] = frozenset()) -> set[str]:
        out: set[str] = set()
        for spec in raw[group]:
            name = _req_name(spec)
            if name == own:
                inner = re.search(r"\[([^\]]*)\]", spec)
                for extra in inner.group(1).split(",") if inner else []:
                    extra = extra.strip()
                    if extra and extra not in seen:
                        out |= expand(extra, seen | {group})
            else:
                out.add(name)
        return out

    for group in raw:
        groups[group] = expand(group)
    return groups


def import_names() -> dict[str, set[str]]:
    """Top-level import name → the (normalised) distributions that provide it, as installed."""
    out: dict[str, set[str]] = {}
    for name, dists in importlib.metadata.packages_distributions().items():
        out[name] = {_req_name(d) for d in dists}
    return out


def _module_file(module: str, root: Path) -> Path | None:
    base = root.joinpath(*module.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _guard_extra(handlers: list[ast.ExceptHandler]) -> str | None:
    """What a ``try``'s ``ImportError`` handler makes of a missing package: the extra it names
    in ``raise MissingExtraError(feature, "x")``, :data:`FALLBACK` when it raises nothing (the
    code goes on without the package), ``None`` when there is no such handler or it raises
    something else."""
    for handler in handlers:
        caught = handler.type
        names = (
            ([caught] if not isinstance(caught, ast.Tuple) else list(caught.elts))
            if caught is not None
            else []
        )
        if not any(isinstance(n, ast.Name) and n.id in IMPORT_ERRORS for n in names):
            continue
        raises = [
            node
            for node in ast.walk(ast.Module(body=handler.body, type_ignores=[]))
            if isinstance(node, ast.Raise)
        ]
        if not raises:
            return FALLBACK
        for node in raises:
            if not isinstance(node.exc, ast.Call):
                continue
            func = node.exc.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name != GUARD_ERROR:
                continue
            args = list(node.exc.args[1:2]) + [
                k.value for k in node.exc.keywords if k.arg == "extra"
            ]
            for arg in args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    return arg.value
    return None


def _resolve(node: ast.ImportFrom, module: str, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_pkg else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports(
    body: list[ast.stmt], module: str, is_pkg: bool, source: str, guard: str | None
) -> Iterator[Import]:
    """The imports that ``body`` can run (``TYPE_CHECKING`` blocks left out), with guards."""
    for stmt in body:
        yield from _stmt_imports(stmt, module, is_pkg, source, guard)


def _stmt_imports(
    node: ast.AST, module: str, is_pkg: bool, source: str, guard: str | None
) -> Iterator[Import]:
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        yield from _imports(node.orelse, module, is_pkg, source, guard)
        return
    if isinstance(node, ast.Try | ast.TryStar):
        inner = _guard_extra(node.handlers) or guard
        yield from _imports(node.body, module, is_pkg, source, inner)
        for part in (*node.handlers, node.orelse, node.finalbody):
            stmts = part.body if isinstance(part, ast.ExceptHandler) else part
            yield from _imports(stmts, module, is_pkg, source, guard)
        return
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield Import(alias.name, source, node.lineno, guard)
        return
    if isinstance(node, ast.ImportFrom):
        base = _resolve(node, module, is_pkg)
        yield Import(base, source, node.lineno, guard)
        for alias in node.names:
            if alias.name != "*":
                # A name may be a submodule (``from chimera.spec import engine``).
                yield Import(f"{base}.{alias.name}", source, node.lineno, guard)
        return
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        first = node.args[0] if node.args else None
        if name == "import_module" and first is not None:
            literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
            # A computed name: any submodule of this package (see DYNAMIC).
            package = module if is_pkg else module.rpartition(".")[0]
            target = str(first.value) if literal else f"{package}.*"  # type: ignore[union-attr]
            yield Import(target, source, node.lineno, guard)
    for child in ast.iter_child_nodes(node):
        yield from _stmt_imports(child, module, is_pkg, source, guard)


def _parents(module: str) -> Iterator[str]:
    parts = module.split(".")
    for i in range(1, len(parts)):
        yield ".".join(parts[:i])


# Module → the module whose import first reached it (for the messages: the path walked).
VIA: dict[str, str] = {}


def via(module: str) -> list[str]:
    """The chain of modules the last walk took to reach ``module``, entry point first."""
    chain = [module]
    while chain[-1] in VIA and VIA[chain[-1]] not in chain:
        chain.append(VIA[chain[-1]])
    return chain[::-1]


def reachable_imports(root: Path, entries: dict[str, tuple[str, ...] | None]) -> list[Import]:
    """Every import reachable from ``entries`` (module → functions, ``None`` = whole module)
    through the modules of :data:`PACKAGES` under ``root``; the imports of other
    distributions and of the standard library, in the order found."""
    queue: list[tuple[str, tuple[str, ...] | None]] = list(entries.items())
    done: set[str] = set()
    outside: list[Import] = []
    VIA.clear()
    while queue:
        module, functions = queue.pop(0)
        key = module if functions is None else f"{module}:{','.join(functions)}"
        if key in done or (functions is not None and module in done):
            continue
        done.add(key)
        path = _module_file(module, root)
        if path is None:
            continue
        is_pkg = path.name == "__init__.py"
        source = str(path.relative_to(root))
        tree = ast.parse(path.read_bytes(), filename=source)
        body = tree.body if functions is None else _top_level(tree.body, functions)
        for parent in _parents(module):
            queue.append((parent, None))
        for found in _imports(body, module, is_pkg, source, None):
            top = found.module.split(".")[0]
            if top not in PACKAGES:
                if found.module:
                    outside.append(found)
            elif found.module.endswith(".*"):
                package = found.module[:-2]
                for child in _submodules(package, root):
                    queue.append((child, DYNAMIC.get(package)))
                    VIA.setdefault(child, module)
            elif _module_file(found.module, root) is not None:
                queue.append((found.module, None))
                VIA.setdefault(found.module, module)
    return outside


def _top_level(body: list[ast.stmt], functions: tuple[str, ...]) -> list[ast.stmt]:
    """What runs on import (class bodies included), with the bodies of functions left out
    except those named in ``functions``."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name in functions:
                out.append(stmt)
        elif isinstance(stmt, ast.ClassDef):
            out.extend(_top_level(stmt.body, functions))
        else:
            out.append(stmt)
    return out


def _submodules(package: str, root: Path) -> list[str]:
    folder = root.joinpath(*package.split("."))
    names = sorted(p.stem for p in folder.glob("*.py") if p.name != "__init__.py")
    names += sorted(p.name for p in folder.iterdir() if (p / "__init__.py").is_file())
    return [f"{package}.{n}" for n in names]


def problems(root: Path = ROOT, entries: dict[str, tuple[str, ...] | None] = ENTRIES) -> list[str]:
    """One line per import on the plain walk that the plain install cannot satisfy (see the
    module docstring), ``path:line: message``; empty when the walk is clean."""
    groups = dependency_groups(root / "pyproject.toml")
    plain = groups[""]
    names = import_names()
    out: list[str] = []
    seen: set[tuple[str, int, str]] = set()
    found_all = reachable_imports(root, entries)
    # A module's guarded import of a package covers its other imports of that package: they
    # run after the guard (the module's one way in to the package).
    guarded = {
        (f.source, f.module.split(".")[0]): f.guard for f in found_all if f.guard is not None
    }
    for found in found_all:
        top = found.module.split(".")[0]
        if top in sys.stdlib_module_names or top == "__future__":
            continue
        dists = names.get(top, set())
        if dists & plain:
            continue
        key = (found.source, found.line, top)
        if key in seen:
            continue
        seen.add(key)
        holders = sorted(
            g for g, members in groups.items() if g and g not in TOOL_EXTRAS and dists & members
        )
        where = f"{found.source}:{found.line}"
        guard = found.guard or guarded.get((found.source, top))
        if not holders:
            out.append(f"{where}: '{top}' is in no dependency group of pyproject.toml")
        elif guard == FALLBACK:
            continue
        elif guard is None:
            out.append(
                f"{where}: '{top}' (extra {', '.join(holders)}) is imported without the "
                f"{GUARD_ERROR} guard on the plain install's path"
            )
        elif guard not in holders:
            out.append(
                f"{where}: '{top}' is guarded as extra '{guard}', which does not hold it "
                f"(it is in: {', '.join(holders)})"
            )
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} import(s) the plain install cannot satisfy", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
