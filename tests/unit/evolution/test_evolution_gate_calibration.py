"""Every gate's false-action rate under no true effect, by simulation of the real gates.

10,000 seeded trials per cell at n = 5, 20 and 50: each rate must stay under alpha plus three
standard errors, every gate must refuse at n = 2, and the docs' table must be what this run
computes (``python scripts/learning_gates.py --write`` regenerates it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.evolution.calibration import DEFAULT_TRIALS, SIZES, Row, render_markdown, simulate

SNIPPET = Path(__file__).resolve().parents[3] / "docs" / "snippets" / "learning-gates.md"


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    assert DEFAULT_TRIALS >= 10_000
    return simulate()


def test_no_gate_acts_on_noise_more_often_than_its_alpha_allows(rows: list[Row]) -> None:
    for row in rows:
        for n in SIZES:
            assert row.false_rate[n] <= row.bar(DEFAULT_TRIALS), (row.gate.name, n)


def test_every_gate_refuses_at_two(rows: list[Row]) -> None:
    assert all(row.refuses_at_two for row in rows)


def test_the_gates_find_the_stated_effect_more_often_with_more_tasks(rows: list[Row]) -> None:
    for row in rows:
        assert row.power[50] > row.power[20] > row.false_rate[20], row.gate.name


def test_the_docs_table_is_current(rows: list[Row]) -> None:
    assert SNIPPET.read_text() == render_markdown(rows), (
        "docs/snippets/learning-gates.md is stale: python scripts/learning_gates.py --write"
    )
