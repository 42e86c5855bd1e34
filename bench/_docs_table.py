"""Where a benchmark's measured table goes: ``docs/snippets/<name>.md``, which the Performance
page (``docs/explanation/performance.md``) includes. A benchmark run writes its table there,
so the page shows the last measured figures and nothing copied by hand.

The table's *format* is checked in CI (:func:`problems`, ``tests/unit/docs``), never its
figures: a ``machine:`` line (architecture, CPUs, load, Python, date), a blank line, then a
Markdown table whose first columns are ``measure``, ``median ratio`` and ``spread (paired
runs)``; every row's ratio is a number and its spread ``low–high``.
"""

from __future__ import annotations

import os
import platform
import re
from datetime import UTC, datetime
from pathlib import Path

DOCS_SNIPPETS = Path(__file__).resolve().parents[1] / "docs" / "snippets"
HEAD = ["measure", "median ratio", "spread (paired runs)"]
_NUMBER = r"\d+(?:\.\d+)?(?:e[+-]?\d+)?"


def machine_line() -> str:
    """``machine: x86_64, 2 CPUs, load 0.2; Python 3.11.7; 2026-12-02``."""
    return (
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; "
        f"Python {platform.python_version()}; {datetime.now(UTC):%Y-%m-%d}"
    )


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def problems(text: str) -> list[str]:
    """What is wrong with a measured table's format (empty: nothing)."""
    lines = text.rstrip("\n").splitlines()
    found: list[str] = []
    machine = r"^machine: .+, \d+ CPUs, load [\d.]+; Python [\d.]+; \d{4}-\d\d-\d\d$"
    if not lines or not re.match(machine, lines[0]):
        found.append("line 1: not a 'machine: ARCH, N CPUs, load L; Python V; YYYY-MM-DD' line")
    table = [line for line in lines[1:] if line.startswith("|")]
    if len(table) < 3:
        return [*found, "no table with a header, a rule and at least one row"]
    head = _cells(table[0])
    if head[: len(HEAD)] != HEAD:
        found.append(f"header: the first columns are not {HEAD}")
    if not all(re.fullmatch(r":?-+:?", c) for c in _cells(table[1])):
        found.append("line 2 of the table is not a rule")
    for n, line in enumerate(table[2:], start=3):
        cells = _cells(line)
        if len(cells) != len(head):
            found.append(f"table row {n}: {len(cells)} cells, the header has {len(head)}")
            continue
        if not re.fullmatch(_NUMBER, cells[1]):
            found.append(f"table row {n}: median ratio {cells[1]!r} is not a number")
        if not re.fullmatch(rf"{_NUMBER}–{_NUMBER}", cells[2]):
            found.append(f"table row {n}: spread {cells[2]!r} is not 'low–high'")
    return found


def write(name: str, table: list[str], *, folder: Path = DOCS_SNIPPETS) -> Path:
    """Write ``docs/snippets/<name>.md``: the machine line and ``table`` (Markdown lines).

    Raises:
        ValueError: the result would not pass :func:`problems` (a benchmark's bug).
    """
    text = "\n".join([machine_line(), "", *table]) + "\n"
    wrong = problems(text)
    if wrong:
        raise ValueError(f"{name}: " + "; ".join(wrong))
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.md"
    target.write_text(text, encoding="utf-8")
    return target
