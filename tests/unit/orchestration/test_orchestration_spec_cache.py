"""SpecCache parses a set of spec files again exactly when their bytes (or the set) change."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.errors import SpecError
from chimera.orchestration.spec_cache import SpecCache

ONE = "requirements:\n  - id: a\n    absent: {path: a.txt, pattern: x}\n"
TWO = ONE + "  - id: b\n    absent: {path: b.txt, pattern: x}\n"


def test_a_spec_is_parsed_again_only_when_its_files_change(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "app.yaml").write_text(ONE)
    cache = SpecCache()
    first = cache([specs])
    assert cache([specs]) is first
    assert cache.parses == 1

    (specs / "app.yaml").write_text(TWO)  # an edit
    assert [r.id for r in cache([specs]).requirements] == ["a", "b"]
    (specs / "more.yaml").write_text(
        "requirements:\n  - id: c\n    absent: {path: c, pattern: x}\n"
    )
    assert [r.id for r in cache([specs]).requirements] == ["a", "b", "c"]  # an added file
    (specs / "more.yaml").unlink()
    assert [r.id for r in cache([specs]).requirements] == ["a", "b"]  # a removed one
    assert cache.parses == 4


def test_an_invalid_spec_raises_every_time_and_is_never_cached(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "app.yaml").write_text("requirements:\n  - id: a\n    nonsense: 1\n")
    cache = SpecCache()
    for _ in range(2):
        with pytest.raises(SpecError):
            cache([specs])
    assert cache.parses == 0
