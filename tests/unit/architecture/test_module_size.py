"""One idea per module; past about 400 lines, the module's docstring says why.

Length alone is no reason to split a module (a class cut across files is worse, see
``test_composition.py``), but a long module has to say what keeps it whole, in a sentence that
names its size (``past 400 lines because ...``, ``about 540 lines on purpose: ...``), so a reader
knows it is long on purpose and why.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("chimera", "pytest_chimera", "scripts")

LIMIT = 440
"""Lines past which a module says why: "about 400", with a tenth's slack."""

SAYS_WHY = re.compile(r"\b(?:past|over|about)\s+~?\d{3,}\s+lines\b", re.IGNORECASE)


def long_modules_without_reason(root: Path, folders: tuple[str, ...] = SCANNED) -> list[str]:
    """``path: N lines`` for each module longer than :data:`LIMIT` whose docstring does not
    name its size."""
    found: list[str] = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.count("\n") + (0 if text.endswith("\n") else 1)
            if lines <= LIMIT:
                continue
            doc = ast.get_docstring(ast.parse(text, filename=str(path))) or ""
            if not SAYS_WHY.search(doc):
                found.append(f"{path.relative_to(root).as_posix()}: {lines} lines")
    return found


def test_every_long_module_says_why_it_is_long() -> None:
    assert long_modules_without_reason(ROOT) == []


def test_the_check_sees_a_long_module_without_a_reason(tmp_path: Path) -> None:
    pkg = tmp_path / "chimera"
    pkg.mkdir()
    body = "x = 1\n" * LIMIT
    (pkg / "silent.py").write_text('"""A module."""\n' + body)
    (pkg / "short.py").write_text('"""A module."""\n' + "x = 1\n" * (LIMIT - 1))
    (pkg / "reasoned.py").write_text(
        '"""A module.\n\nPast ~400 lines because its table is one piece of data."""\n' + body
    )
    (pkg / "counted.py").write_text(
        '"""A module.\n\nAbout 450 lines on purpose: one schema and its class."""\n' + body
    )
    found = long_modules_without_reason(tmp_path, ("chimera",))
    assert found == [f"chimera/silent.py: {LIMIT + 1} lines"]
