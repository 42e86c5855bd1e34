"""Infer a starter Spec for an existing repository (the logic behind ``chimera init``).

Three sources, all read statically (nothing is imported or run):

* the main classes of the top-level packages (``pkg/`` or ``src/pkg/``), read with ``ast``:
  public classes re-exported by the package's ``__init__`` first, then the largest public
  classes; exceptions, private modules and test code are skipped → ``defines`` requirements;
* the install command a README names (``pip install ...``, ``uv add ...``) → a literal
  ``contains`` requirement, so the documentation cannot silently drop it;
* the test command (``make test`` when the Makefile has a ``test`` target, else
  ``python -m pytest -q`` when the project has pytest configuration or test files pytest
  collects by default — ``test_*.py`` / ``*_test.py`` at the root or under ``tests/`` or
  ``test/``; pytest is installed wherever Chimera is, so such files are enough) → ``command``.

Every inferred requirement holds on the tree it was inferred from, except possibly the test
command, which is as green as the test suite.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

MAX_PACKAGES = 3
CLASSES_PER_PACKAGE = 3
MAX_SOURCE_BYTES = 1_000_000
TEST_TIMEOUT_S = 900

_SKIP_DIRS = frozenset(
    {
        "bench",
        "benchmarks",
        "build",
        "dist",
        "doc",
        "docs",
        "example",
        "examples",
        "node_modules",
        "scripts",
        "site-packages",
        "test",
        "testing",
        "tests",
        "tools",
        "venv",
    }
)
_README_NAMES = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md")
_INSTALL_RE = re.compile(
    r"(?:python3? -m )?pip3? install [^\n`'\"]*[^\s`'\"]"
    r"|uv (?:pip install|add|tool install) [^\n`'\"]*[^\s`'\"]"
    r"|poetry add [^\n`'\"]*[^\s`'\"]"
    r"|pipx install [^\n`'\"]*[^\s`'\"]"
)
_EXCEPTION_SUFFIXES = ("Error", "Exception", "Warning")


@dataclass(frozen=True)
class StarterRequirement:
    """One inferred requirement: its id, title, kind key and the check's fields."""

    id: str
    title: str
    kind: str
    fields: dict[str, Any]
    risk: str = "low"


@dataclass
class Inference:
    """What :func:`infer_requirements` found, and the notes to show the user."""

    requirements: list[StarterRequirement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def infer_requirements(root: Path) -> Inference:
    """Inspect the repository at ``root`` and return the starter requirements."""
    inference = Inference()
    used_ids: set[str] = set()

    def add(req: StarterRequirement) -> None:
        rid, n = req.id, 2
        while rid in used_ids:
            rid, n = f"{req.id}-{n}", n + 1
        used_ids.add(rid)
        inference.requirements.append(
            StarterRequirement(rid, req.title, req.kind, req.fields, req.risk)
        )

    packages = find_packages(root)
    if not packages:
        inference.notes.append("no Python package found (pkg/__init__.py or src/pkg/)")
    for package in packages[:MAX_PACKAGES]:
        for cls in main_classes(root, package)[:CLASSES_PER_PACKAGE]:
            add(
                StarterRequirement(
                    id=f"{_kebab(package.name)}-defines-{_kebab(cls.name)}",
                    title=f"{package.name} defines the class {cls.name}",
                    kind="defines",
                    fields={"path": cls.path, "symbol": cls.name, "kind": "class"},
                )
            )

    readme = find_readme(root)
    install = install_command(readme) if readme is not None else None
    if readme is None:
        inference.notes.append("no README found")
    elif install is None:
        inference.notes.append(f"{readme.name} names no install command")
    else:
        add(
            StarterRequirement(
                id="readme-install-command",
                title="The README tells users how to install the project",
                kind="contains",
                fields={"path": readme.name, "pattern": install, "regex": False},
            )
        )

    test = test_command(root)
    if test is None:
        inference.notes.append(
            "no test command found (Makefile test target, pytest config, test_*.py files)"
        )
    else:
        add(
            StarterRequirement(
                id="tests-pass",
                title="The test suite passes",
                kind="command",
                fields={"run": test, "timeout": TEST_TIMEOUT_S},
                risk="medium",
            )
        )
    return inference


# --------------------------------------------------------------------------- packages


def find_packages(root: Path) -> list[Path]:
    """Top-level import packages under ``root`` and ``root/src``, sorted by name."""
    found: list[Path] = []
    for base in (root, root / "src"):
        if not base.is_dir():
            continue
        for child in sorted(base.iterdir()):
            name = child.name
            if (
                child.is_dir()
                and not child.is_symlink()
                and name.isidentifier()
                and not name.startswith(("_", "."))
                and name.lower() not in _SKIP_DIRS
                and (child / "__init__.py").is_file()
            ):
                found.append(child)
    return found


@dataclass(frozen=True)
class FoundClass:
    """A public class: its name, the file defining it (relative, POSIX) and its score."""

    name: str
    path: str
    exported: bool
    size: int


def main_classes(root: Path, package: Path) -> list[FoundClass]:
    """The package's public classes, main ones first (re-exported, then largest)."""
    exported = _exported_names(package / "__init__.py")
    classes: list[FoundClass] = []
    seen: set[str] = set()
    for module in _package_modules(package):
        tree = _parse(module)
        if tree is None:
            continue
        rel = module.relative_to(root).as_posix()
        for node in tree.body:
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            if node.name.endswith(_EXCEPTION_SUFFIXES) or node.name.startswith("Test"):
                continue
            if node.name in seen:
                continue
            seen.add(node.name)
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            classes.append(FoundClass(node.name, rel, node.name in exported, size))
    classes.sort(key=lambda c: (not c.exported, -c.size, c.name))
    return classes


def _package_modules(package: Path) -> list[Path]:
    """``__init__.py`` first, then the package's public modules, one level of subpackages."""
    modules = [package / "__init__.py"]
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).parts
        if len(rel) > 2 or (path.name == "__init__.py" and len(rel) == 1):
            continue
        if any(part.startswith(("_", ".")) and part != "__init__.py" for part in rel):
            continue
        if any(part.lower() in _SKIP_DIRS for part in rel[:-1]) or rel[-1].startswith("test"):
            continue
        modules.append(path)
    return modules


def _parse(path: Path) -> ast.Module | None:
    try:
        if path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        return ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None


def _exported_names(init: Path) -> set[str]:
    """Names the package's ``__init__`` re-exports: ``__all__`` and ``from .x import Y``."""
    tree = _parse(init)
    if tree is None:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            names.update(alias.asname or alias.name for alias in node.names)
        elif (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            names.update(
                e.value
                for e in node.value.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
    return names


def _kebab(name: str) -> str:
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name)
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


# --------------------------------------------------------------------------- README


def find_readme(root: Path) -> Path | None:
    for name in _README_NAMES:
        candidate = root / name
        if candidate.is_file():
            return candidate
    return None


def install_command(readme: Path) -> str | None:
    """The first install command the README names, as it is written there."""
    try:
        text = readme.read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return None
    match = _INSTALL_RE.search(text)
    return match.group(0).strip() if match else None


# --------------------------------------------------------------------------- tests


def test_command(root: Path) -> str | None:
    """``make test`` for a Makefile ``test`` target, else pytest when the project uses it."""
    makefile = root / "Makefile"
    if makefile.is_file():
        try:
            if re.search(r"(?m)^test\s*:", makefile.read_text(encoding="utf-8", errors="replace")):
                return "make test"
        except OSError:
            pass
    if _uses_pytest(root):
        return "python -m pytest -q"
    return None


def _uses_pytest(root: Path) -> bool:
    if (root / "pytest.ini").is_file() or (root / "conftest.py").is_file():
        return True
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            data = {}
        if "pytest" in data.get("tool", {}):
            return True
    for name, section in (("setup.cfg", "tool:pytest"), ("tox.ini", "pytest")):
        cfg = root / name
        if cfg.is_file():
            parser = configparser.ConfigParser()
            try:
                parser.read(cfg, encoding="utf-8")
            except (OSError, configparser.Error):
                continue
            if parser.has_section(section):
                return True
    # pytest's default python_files: a bare test file needs no configuration to be collected.
    if any(_test_files(root.glob)):
        return True
    for tests in (root / "tests", root / "test"):
        if tests.is_dir() and any(_test_files(tests.rglob)):
            return True
    return False


def _test_files(glob: Callable[[str], Iterator[Path]]) -> Iterator[Path]:
    """Files pytest collects by default (``test_*.py``, ``*_test.py``) found by ``glob``."""
    for pattern in ("test_*.py", "*_test.py"):
        yield from (p for p in glob(pattern) if p.is_file())


# --------------------------------------------------------------------------- rendering


HEADER = """\
# Starter spec written by `chimera init`: requirements inferred from this repository.
# Each one holds today; keep the ones that matter, add your own, and run `chimera check`
# (or `pytest --chimera-spec specs/`). The format is in Chimera's docs (Spec format);
# `chimera schema` prints a JSON Schema editors can validate this file with.
"""

COMMAND_NOTE = """\
# `tests-pass` runs the test suite: under `pytest --chimera-spec specs/` that is a second
# run of it, so you may prefer to drop it there and keep it for `chimera check`.
"""


def render_spec(requirements: list[StarterRequirement]) -> str:
    """The YAML text of a spec file holding ``requirements`` (check fields in flow style)."""
    items: list[dict[str, Any]] = []
    for req in requirements:
        item: dict[str, Any] = {"id": req.id, "title": req.title}
        if req.risk != "low":
            item["risk"] = req.risk
        item[req.kind] = req.fields
        items.append(item)
    body = yaml.safe_dump(
        {"requirements": items},
        sort_keys=False,
        default_flow_style=None,
        allow_unicode=True,
        width=10_000,
    )
    header = HEADER + (COMMAND_NOTE if any(r.kind == "command" for r in requirements) else "")
    return header + body
