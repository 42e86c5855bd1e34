"""The combined matcher (one RE2 ``Set`` per group of patterns over a file's UTF-8 bytes)
against ``regex`` itself, on generated patterns and texts: on ASCII texts its answer is exact;
on other texts it never misses a pattern that matches, and is exact where it says so. The
cheap validation (a pattern RE2 reads as ``regex`` does is valid without ``regex.compile``)
is checked against ``regex.compile`` on the same generated patterns."""

from __future__ import annotations

import random
from typing import Any

import pytest
import regex

from chimera.spec.engine.combined import CombinedMatcher
from chimera.spec.engine.options import EngineOptions, EngineStats
from chimera.spec.engine.patterns import PATTERN_FLAGS, PatternCache, _set_sources, pattern_problem
from tests.unit.engine.test_engine_linear import ALPHABET, UNICODE_ALPHABET, _pattern

re2: Any = pytest.importorskip("re2")


def _matches(source: str, text: str) -> bool:
    return regex.compile(source, PATTERN_FLAGS).search(text) is not None


@pytest.mark.parametrize("seed", range(6))
def test_the_set_answers_as_regex_does(seed: int) -> None:
    rng = random.Random(7000 + seed)
    cache = PatternCache(EngineOptions(), EngineStats())
    sources = list(dict.fromkeys(_pattern(rng) for _ in range(60)))
    patterns = [cache.get(s, True) for s in sources]
    patterns += [cache.get(w, False) for w in ("ab", "é€", "x_", "\n\n")]
    matcher = CombinedMatcher(patterns, re2)
    translated = sum(cp.set_ascii is not None for cp in patterns)
    assert translated > 30, translated
    checked = 0
    for _ in range(60):
        alphabet = ALPHABET if rng.random() < 0.5 else UNICODE_ALPHABET.replace("\ud800", "")
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        data = text.encode("utf-8")
        hits = matcher.hits(text, data, data.isascii())
        for cp in patterns:
            source = cp.source if cp.is_regex else regex.escape(cp.source)
            truth = _matches(source, text)
            if cp.key in hits.sure:
                assert truth, (cp.source, text)
            elif truth:
                assert cp.key in hits.maybe, (cp.source, text)  # never a miss
            if data.isascii() and cp.set_ascii is not None:
                assert (cp.key in hits.sure) is truth, (cp.source, text)
                assert cp.key not in hits.maybe
                checked += 1
            if cp.wide_exact and cp.set_wide is not None:
                assert (cp.key in hits.sure) is truth, (cp.source, text)
    assert checked > 500, checked


@pytest.mark.parametrize("seed", range(4))
def test_patterns_valid_without_compiling_do_compile(seed: int) -> None:
    rng = random.Random(9100 + seed)
    cheap = 0
    for _ in range(400):
        source = _pattern(rng)
        if rng.random() < 0.2:
            source += rng.choice(["(", ")", "[", "{2,1}", "**", "\\", "(?<=a+)", "[z-a]"])
        if _set_sources(source, True) is not None:
            cheap += 1
            assert pattern_problem(source) is None
            regex.compile(source, PATTERN_FLAGS)  # must not raise
        else:
            try:
                regex.compile(source, PATTERN_FLAGS)
            except regex.error:
                assert pattern_problem(source) is not None, source
            else:
                assert pattern_problem(source) is None, source
    assert cheap > 150, cheap
