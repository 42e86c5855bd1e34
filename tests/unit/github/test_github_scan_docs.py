"""The scan table rendered for the docs: one Markdown row per row of the table the scan uses,
and ``scripts/scan_table.py`` keeping a page's copy in sync."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from chimera.github.scan.table import TABLE, render_markdown

ROOT = Path(__file__).resolve().parents[3]
_PIPE = re.compile(r"(?<!\\)\|")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scan_table", ROOT / "scripts" / "scan_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rendered_table_has_one_row_per_table_row() -> None:
    lines = render_markdown().splitlines()
    assert lines[0] == "| Files | Why they run code | Verdict | Rule |"
    assert lines[1] == "|---|---|---|---|"
    body = lines[2:]
    assert len(body) == len(TABLE)
    for line, r in zip(body, TABLE, strict=True):
        cells = [c.strip() for c in _PIPE.split(line)[1:-1]]
        assert len(cells) == 4, line
        assert cells[0].replace("\\|", "|") == r.files
        assert cells[1].replace("\\|", "|") == r.runs
        assert cells[2] == r.verdict.value
        assert cells[3] == f"`{r.rule}`"


def test_the_rendered_table_states_the_issue_rows() -> None:
    text = render_markdown()
    verdicts: dict[str, set[str]] = {}
    for line in text.splitlines()[2:]:
        cells = [c.strip() for c in _PIPE.split(line)[1:-1]]
        verdicts.setdefault(cells[3].strip("`"), set()).add(cells[2])
    assert verdicts["action-manifest"] == {"block"} and verdicts["action-path"] == {"block"}
    for rule in (
        "pytest-addopts",
        "pytest-entry-point",
        "pytest-plugins-var",
        "forge-workflow",
        "renovate",
        "pre-commit-hooks",
        "editor-task",
        "git-hook",
        "container-build",
        "docs-build",
    ):
        assert verdicts[rule] == {"review"}, rule
    assert "`uses: ./tools/ci`" in text and "`.husky/`" in text


def test_the_script_checks_and_fills_a_page(tmp_path: Path) -> None:
    script = _script()
    page = tmp_path / "scan.md"
    page.write_text(f"# Scan\n\n{script.START}\nold\n{script.END}\n\nAfter.\n", encoding="utf-8")
    assert script.main(["--check", str(page)]) == 1
    assert script.main(["--write", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert render_markdown() in text and text.endswith(f"{script.END}\n\nAfter.\n")
    assert script.main(["--check", str(page)]) == 0
    page.write_text(text.replace("| review |", "| allow |", 1), encoding="utf-8")
    assert script.main(["--check", str(page)]) == 1
    page.write_text("no markers\n", encoding="utf-8")
    assert script.main(["--check", str(page)]) == 2


def test_splice_refuses_markers_out_of_order() -> None:
    script = _script()
    with pytest.raises(script.MarkersMissing):
        script.splice(f"{script.END}\n{script.START}\n", "x\n")
