"""consolidate: agreements, disagreements and unique findings with their roles, repeats dropped,
a bounded rendering that names what it left out, and the same text for the same answers."""

from __future__ import annotations

import pytest

from chimera.crews.consolidate import consolidate, split_points

TESTS = "- The parser is tested by test_parse.\n- verdict: APPROVE\n- Uses pathlib for paths."
SECURITY = (
    "- The parser is not tested by test_parse.\n- verdict: REJECT\n"
    "- Uses pathlib for paths.\n- Uses pathlib for paths.\n- Shell input is sanitized."
)


def test_consolidate_keeps_agreement_conflict_and_unique_with_their_roles() -> None:
    c = consolidate([("tests", TESTS), ("security", SECURITY)])
    assert c.agreed == (("Uses pathlib for paths.", ("tests", "security")),)
    assert [(a, ar, b, br) for a, ar, b, br in c.conflicts] == [
        (
            "The parser is tested by test_parse.",
            ("tests",),
            "The parser is not tested by test_parse.",
            ("security",),
        ),
        ("verdict: APPROVE", ("tests",), "verdict: REJECT", ("security",)),
    ]
    assert c.unique == (("Shell input is sanitized.", "security"),)
    assert c.repeats == 1  # security said "Uses pathlib" twice
    assert c.omitted == 0
    assert c.text.index("Disagreements") < c.text.index("Agreed") < c.text.index("Unique")
    assert "[security] Shell input is sanitized." in c.text


def test_consolidate_is_deterministic_and_never_concatenates() -> None:
    answers = [("a", TESTS), ("b", SECURITY), ("c", TESTS)]
    first = consolidate(answers)
    assert all(consolidate(answers).text == first.text for _ in range(5))
    # The same point from three roles appears once, not three times.
    assert first.text.count("Uses pathlib for paths.") == 1
    assert ("Uses pathlib for paths.", ("a", "b", "c")) in first.agreed


def test_consolidate_fits_its_token_budget_and_names_what_it_left_out() -> None:
    many = "\n".join(f"- finding number {i} about module m{i} is noteworthy" for i in range(200))
    c = consolidate([("scout", many), ("other", "- A single other point here.")], max_tokens=100)
    assert len(c.text) <= 100 * 4
    assert c.omitted > 0
    last = c.text.splitlines()[-1]
    assert f"[{c.omitted} more point(s) omitted to fit 100 tokens" in last
    assert "scout" in last


def test_consolidate_of_nothing_says_so() -> None:
    c = consolidate([("a", ""), ("b", "   ")])
    assert c.text == "(no findings)"
    assert (c.agreed, c.conflicts, c.unique) == ((), (), ())


def test_split_points_uses_bullets_else_sentences() -> None:
    assert split_points("1. First point.\n2) Second point") == ["First point.", "Second point"]
    assert split_points("It works. It is fast! Done?") == ["It works.", "It is fast!", "Done?"]


@pytest.mark.parametrize(("tokens", "similarity"), [(10, 0.5), (100, 0.0), (100, 1.5)])
def test_consolidate_rejects_bad_settings(tokens: int, similarity: float) -> None:
    with pytest.raises(ValueError):
        consolidate([("a", "x y z")], max_tokens=tokens, similarity=similarity)


def test_opposite_verdict_lines_are_a_disagreement() -> None:
    c = consolidate([("tests", "APPROVE: it is tested"), ("security", "REJECT: it shells out")])
    assert [(ar, br) for _, ar, _, br in c.conflicts] == [(("tests",), ("security",))]
