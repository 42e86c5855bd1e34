"""A plain pattern's combined-``Set`` forms are made without the parser, and are exactly the
parser-based translation's (differential over generated plain patterns)."""

from __future__ import annotations

import random

from chimera.spec.engine import patterns
from chimera.spec.engine.linear import translate_wide
from chimera.spec.engine.plain import plain_pattern

ALPHABET = [*"abc xyz-_/#=:;,'\"@!%&<>~`\t", "é", "€", "ß", "\u00a0", "\U0001f600"]


def _reference(source: str) -> tuple[str, str, bool] | None:
    parsed = patterns._parsed(source)
    if parsed is None:
        return None
    ascii_form, wide_form = translate_wide(parsed, boundaries=True), translate_wide(parsed)
    assert ascii_form is not None and wide_form is not None
    return ascii_form[0], wide_form[0], wide_form[1]


def test_plain_forms_equal_the_translation() -> None:
    rng = random.Random(2026)
    checked = 0
    for _ in range(3000):
        body = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 8)))
        source = ("^" if rng.random() < 0.3 else "") + body + ("$" if rng.random() < 0.3 else "")
        assert plain_pattern(source) is not None
        assert patterns._set_sources.__wrapped__(source, True) == _reference(source), source
        checked += 1
    assert checked == 3000
