"""The Performance page's measured tables: written by the benchmarks (bench/_docs_table.py),
checked here for their format, never their figures."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "explanation" / "performance.md"


@pytest.fixture(scope="module")
def tables() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_docs_table", ROOT / "bench" / "_docs_table.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_table_the_page_includes_is_a_benchmarks_table(tables: ModuleType) -> None:
    included = re.findall(r'^--8<-- "snippets/([\w-]+)\.md"$', PAGE.read_text("utf-8"), re.M)
    assert included == ["performance-check", "performance-speed", "performance-plugin"]
    for name in included:
        text = (ROOT / "docs" / "snippets" / f"{name}.md").read_text("utf-8")
        assert tables.problems(text) == [], name
    assert "performance-check" in (ROOT / "bench" / "speed.py").read_text("utf-8")
    assert "performance-plugin" in (ROOT / "bench" / "plugin_overhead.py").read_text("utf-8")
    assert "performance-speed" in (ROOT / "bench" / "scale.py").read_text("utf-8")


def test_a_benchmark_writes_a_table_the_check_accepts(tables: ModuleType, tmp_path: Path) -> None:
    table = [
        "| measure | median ratio | spread (paired runs) | note |",
        "|---|---|---|---|",
        "| check / grep (CPU) | 0.355 | 0.35–0.39 | goal <= 0.15 |",
    ]
    written = tables.write("t", table, folder=tmp_path)
    assert tables.problems(written.read_text("utf-8")) == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "| measure | median ratio | spread (paired runs) |\n|---|---|---|\n| a | 1 | 1–2 |\n",
            "line 1",
        ),
        (
            "machine: x86_64, 2 CPUs, load 0.2; Python 3.11.7; 2026-12-02\n\n"
            "| measure | median ratio | spread (paired runs) |\n|---|---|---|\n"
            "| a | fast | 1–2 |\n",
            "median ratio 'fast' is not a number",
        ),
        (
            "machine: x86_64, 2 CPUs, load 0.2; Python 3.11.7; 2026-12-02\n\n"
            "| measure | ratio | spread |\n|---|---|---|\n| a | 1 | 1–2 |\n",
            "header",
        ),
        ("machine: x86_64, 2 CPUs, load 0.2; Python 3.11.7; 2026-12-02\n", "no table"),
    ],
)
def test_a_malformed_table_is_reported(tables: ModuleType, text: str, problem: str) -> None:
    assert any(problem in p for p in tables.problems(text))
