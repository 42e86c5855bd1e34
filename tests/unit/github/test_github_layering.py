"""The GitHub side reads the run report and the run state as typed models, never as dicts, and
never reaches back into the CLI (the walk of an event goes cli → github.jobs → engine).

Both rules are checked on the AST of every module under ``chimera/github``; each checker is
first shown to catch the pattern it forbids.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

GITHUB = Path(__file__).resolve().parents[3] / "chimera" / "github"
# Names under which a run report, a run state or their parts travel.
_DICTISH = re.compile(r"\b(state|states|report|run_state|card|cards|denied|denied_actions)\b")


def dict_reads(source: str) -> list[str]:
    """``X.get(...)`` calls, and ``X["key"]`` subscripts, on a report or state value."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
        ):
            receiver = ast.unparse(node.func.value)
            if _DICTISH.search(receiver):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
            and _DICTISH.search(ast.unparse(node.value))
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def cli_imports(source: str) -> list[str]:
    """Every import of ``chimera.cli`` — top-level, function-local or under TYPE_CHECKING."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        if any(n == "chimera.cli" or n.startswith("chimera.cli.") for n in names):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def modules() -> list[Path]:
    found = sorted(GITHUB.rglob("*.py"))
    assert len(found) > 10 and GITHUB / "jobs" / "agent.py" in found
    return found


@pytest.mark.parametrize(
    "source",
    [
        "x = state.get('status')",
        "x = self.state.get('run_id', 1)",
        "x = report.final_results.get(rid)",
        "x = [c.get('notes') for c in state['cards']]",
        "x = card['notes'][-1]",
        "x = (state.get('cards') or [])",
    ],
)
def test_the_dict_read_checker_catches_each_form(source: str) -> None:
    assert dict_reads(source)


@pytest.mark.parametrize(
    "source",
    [
        "import chimera.cli",
        "import chimera.cli.audit as a",
        "from chimera import cli",
        "from chimera.cli.audit import render_audit_summary",
        "def f():\n    from chimera.cli import main\n",
        "if TYPE_CHECKING:\n    from chimera.cli._base import err\n",
    ],
)
def test_the_cli_import_checker_catches_each_form(source: str) -> None:
    assert cli_imports(source)


def test_nothing_on_the_github_side_reads_a_report_or_state_dict() -> None:
    offenders = {
        str(path.relative_to(GITHUB)): reads
        for path in modules()
        if (reads := dict_reads(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_nothing_on_the_github_side_imports_the_cli() -> None:
    offenders = {
        str(path.relative_to(GITHUB)): found
        for path in modules()
        if (found := cli_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
