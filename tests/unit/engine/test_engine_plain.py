"""Plain patterns (a literal with an optional leading ``^`` and trailing ``$``) are searched
without ``regex``, with exactly ``regex``'s matches."""

from __future__ import annotations

import random

import pytest
import regex

from chimera.spec.engine import EngineOptions, EngineStats
from chimera.spec.engine.patterns import PATTERN_FLAGS, PatternCache, pattern_problem
from chimera.spec.engine.plain import plain_pattern, plain_search


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("word-00001$", ("word-00001", False, True)),
        ("^    debug: bool = False$", ("    debug: bool = False", True, True)),
        ("^import os", ("import os", True, False)),
        ("plain text, with # and spaces", ("plain text, with # and spaces", False, False)),
        ("héllo ünïcode", ("héllo ünïcode", False, False)),
        ("^$", None),
        ("^", None),
        ("$", None),
        ("a.b", None),
        (r"print\(", None),
        ("a$b", None),
        ("(?i)abc", None),
        ("a{2}", None),
        ("x|y", None),
        ("[ab]", None),
    ],
)
def test_which_patterns_are_plain(source: str, expected: object) -> None:
    assert plain_pattern(source) == expected


def _finditer(source: str, text: str) -> list[int]:
    return [m.start() for m in regex.compile(source, PATTERN_FLAGS).finditer(text)]


def test_plain_search_equals_regex_on_random_texts() -> None:
    rng = random.Random(17)
    alphabet = "aab\n é"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        body = "".join(rng.choice("ab é") for _ in range(rng.randrange(1, 4)))
        source = ("^" if rng.random() < 0.5 else "") + body + ("$" if rng.random() < 0.5 else "")
        plain = plain_pattern(source)
        assert plain is not None
        assert plain_search(text, plain, False) == _finditer(source, text), (source, text)
        first = plain_search(text, plain, True)
        assert first == _finditer(source, text)[:1], (source, text)


def test_a_plain_pattern_is_never_compiled() -> None:
    stats = EngineStats()
    cache = PatternCache(EngineOptions(), stats)
    cp = cache.get("word-00001$", True)
    assert cp.compiled is None and cp.plain is not None
    assert cp.literals == frozenset({"word-00001"})
    assert cp.search("x\nword-00001\nword-000012\n", first_only=False, timeout=1.0) == [2]
    assert stats.compiles == {}


def test_validation_accepts_plain_and_still_rejects_bad_regexes() -> None:
    assert pattern_problem("word-00001$") is None
    problem = pattern_problem("a(")
    assert problem is not None and "invalid pattern" in problem
