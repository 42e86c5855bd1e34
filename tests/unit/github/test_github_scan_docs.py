"""The scan table rendered for the docs: one Markdown row per row of the table the scan uses,
and the committed reference page holding exactly that table."""

from __future__ import annotations

import re
from pathlib import Path

from chimera.github.scan.table import TABLE, render_markdown

ROOT = Path(__file__).resolve().parents[3]
_PIPE = re.compile(r"(?<!\\)\|")


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


def test_the_committed_docs_page_holds_the_table_the_scan_uses() -> None:
    """``docs/reference/patch-scan.md`` is generated (``scripts/docs_reference.py``); a row
    changed in the code and not in the page fails here."""
    page = (ROOT / "docs" / "reference" / "patch-scan.md").read_text("utf-8")
    assert render_markdown() in page
    table = [ln for ln in page.splitlines() if ln.startswith("|")]
    assert table == render_markdown().splitlines()
