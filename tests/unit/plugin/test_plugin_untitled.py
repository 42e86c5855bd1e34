"""A requirement without ``title`` shows its verdict once in its failure report (the header
line), not again above the evidence (issue 38, row 9)."""

from __future__ import annotations

import pytest


def test_an_untitled_requirement_shows_its_message_once(pytester: pytest.Pytester) -> None:
    (pytester.path / "specs").mkdir()
    (pytester.path / "specs" / "s.yaml").write_text(
        "requirements:\n"
        "  - id: readme-says-hi\n"
        "    contains: {path: README.md, pattern: hello}\n"
        "  - id: titled\n"
        "    title: The README greets\n"
        "    contains: {path: README.md, pattern: greetings}\n"
    )
    (pytester.path / "README.md").write_text("nope\n")
    result = pytester.runpytest_subprocess("--chimera-spec", "specs", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    section = text.split("contains: readme-says-hi", 1)[1].split("contains: titled", 1)[0]
    assert section.count("/hello/ not found in README.md") == 1, section
    assert "README.md (no match)" in section  # the evidence is still there
    titled = text.split("contains: titled", 1)[1].split("short test summary", 1)[0]
    assert titled.splitlines()[1] == "The README greets"
    assert titled.count("/greetings/ not found in README.md") == 1, titled
