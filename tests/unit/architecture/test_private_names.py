"""Private names stay private: no chimera module imports another module's ``_name``, and a
private module (``_base.py``) is imported only from inside the package that holds it.

A name another module needs is shared API: it gets a public name (and a docstring), or the
helper moves to where it is used. Tests may still reach private names.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_of(path: Path, root: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_pkg else parts), is_pkg


def private_imports(root: Path) -> list[str]:
    """``file:line: what`` for every private name or foreign private module imported."""
    problems: list[str] = []
    for path in sorted(
        [*(root / "chimera").rglob("*.py"), *(root / "pytest_chimera").rglob("*.py")]
    ):
        me, is_pkg = _module_of(path, root)
        where = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = me.split(".") if is_pkg else me.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                if module.split(".")[0] not in {"chimera", "pytest_chimera"}:
                    continue
                targets = [module]
                for alias in node.names:
                    sub = root / module.replace(".", "/") / alias.name
                    if sub.with_suffix(".py").exists() or sub.is_dir():
                        targets.append(f"{module}.{alias.name}")  # a submodule
                    elif _private(alias.name):
                        problems.append(f"{where}:{node.lineno}: imports {module}.{alias.name}")
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                parts = target.split(".")
                for i, part in enumerate(parts):
                    owner = ".".join(parts[:i])
                    if _private(part) and i and not (me == owner or me.startswith(owner + ".")):
                        problems.append(
                            f"{where}:{node.lineno}: imports the private module "
                            f"{'.'.join(parts[: i + 1])} from outside {owner}"
                        )
    return sorted(set(problems))


def test_no_private_name_crosses_a_module_boundary() -> None:
    assert private_imports(ROOT) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in {"pytest_chimera/__init__.py": "", **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def test_private_names_and_foreign_private_modules_are_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "chimera/__init__.py": "",
            "chimera/a/__init__.py": "",
            "chimera/a/_base.py": "X = 1\n_Y = 2\n",
            "chimera/a/one.py": "from chimera.a._base import X\nfrom . import _base\n",
            "chimera/a/two.py": "def f():\n    from ._base import _Y\n",
            "chimera/b.py": "from chimera.a import _base\nimport chimera.a._base\n",
            "chimera/c.py": "from chimera.a.one import __doc__ as doc\n",
        },
    )
    assert private_imports(root) == [
        "chimera/a/two.py:2: imports chimera.a._base._Y",
        "chimera/b.py:1: imports the private module chimera.a._base from outside chimera.a",
        "chimera/b.py:2: imports the private module chimera.a._base from outside chimera.a",
    ]
