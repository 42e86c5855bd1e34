"""A requirement id is the whole string: Python's ``$`` also matches before a final newline,
so ``"abc\\n"`` passed as an id and carried a line break into every surface that shows one
(the PR body's tables, job summaries, trusted memory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.errors import SpecError
from chimera.spec.loader import load_spec


@pytest.mark.parametrize("raw", ['"abc\\n"', '"abc\\r"', '"abc\\n\\n"', '"a b"', '"-x"'])
def test_an_id_with_a_line_break_or_a_space_is_refused(tmp_path: Path, raw: str) -> None:
    (tmp_path / "a.yaml").write_text(
        f"requirements:\n  - id: {raw}\n    contains: {{path: x.py, pattern: y}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SpecError, match="invalid id"):
        load_spec([tmp_path])


def test_the_id_shape_is_the_whole_string() -> None:
    from chimera.spec.reqfields import is_requirement_id

    assert is_requirement_id("total-defined") and is_requirement_id("v1.2_x")
    assert not is_requirement_id("abc\n") and not is_requirement_id("")
    assert not is_requirement_id(7) and not is_requirement_id("a:b")
