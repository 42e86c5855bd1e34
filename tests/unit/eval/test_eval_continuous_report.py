"""The continuous benchmark's table lines up with its header, and its SVG is labelled and
ticked on both axes (issue 38, row 9)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from chimera.eval.continuous import ArmReport, ContinuousReport
from chimera.eval.harness import TaskRun
from chimera.stats import mcnemar_exact, paired_bootstrap

ON = [False, True, False, True, False, True, True, True, True, True, True, True]
OFF = [True, True, True, False, False, False, False, False, False, False, False, False]


def report(model: str = "scripted") -> ContinuousReport:
    def runs(passes: list[bool]) -> list[TaskRun]:
        return [
            TaskRun(f"t{i:02d}-task", "fam", ok, "solved" if ok else "failed", 1, 1234, None, 1.0)
            for i, ok in enumerate(passes, 1)
        ]

    on, off = ArmReport("memory on", runs(ON)), ArmReport("memory off", runs(OFF))
    diff = paired_bootstrap([float(p) for p in OFF], [float(p) for p in ON], seed=0)
    return ContinuousReport("inflection", model, on, off, diff, mcnemar_exact(OFF, ON))


def starts(line: str) -> list[int]:
    """Where each column starts: after a run of two or more spaces."""
    return [0] + [m.end() for m in re.finditer(r" {2,}", line)]


def test_the_table_columns_line_up_with_the_header() -> None:
    lines = report().render().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("arm "))
    head, rows = lines[header], lines[header + 1 : header + 3]
    assert [c.strip() for c in re.split(r" {2,}", head)] == [
        "arm",
        "pass rate",
        "1st half",
        "2nd half",
        "streak",
        "tokens",
        "cost",
    ]
    cells = [re.split(r" {2,}", row) for row in rows]
    assert all(len(c) == 7 for c in cells), rows
    # Each text column starts where its heading starts; numbers end where their heading ends.
    for row in rows:
        for name in ("pass rate", "1st half", "2nd half", "cost"):
            col = head.index(name)
            assert row[col - 2 : col] == "  " and row[col] != " ", (name, row)
        for name in ("streak", "tokens"):
            end = head.index(name) + len(name)
            assert row[end - 1] != " " and row[end : end + 2] == "  ", (name, row)
    # A 100% half (the widest interval text) does not push the columns apart.
    assert "100.0% [" in rows[0]


def test_the_svg_labels_and_ticks_both_axes() -> None:
    svg = report().svg()
    root = ET.fromstring(svg)
    texts = [el.text or "" for el in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "task in the chain (1 to 12, in order)" in texts
    assert "cumulative pass rate (tasks passed so far / tasks run)" in texts
    assert [t for t in texts if t.endswith("%")] == ["0%", "25%", "50%", "75%", "100%"]
    assert [str(i) for i in range(1, 13)] == [t for t in texts if t.isdigit()]
    assert "memory on" in texts and "memory off" in texts
    title = root.find("{http://www.w3.org/2000/svg}title")
    assert title is not None and title.text == (
        "cumulative pass rate along inflection (scripted: bookkeeping only)"
    )
