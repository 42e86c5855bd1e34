"""The linear second engine (RE2) against ``regex`` itself: generated patterns on generated
texts must give the same match offsets, and whole engine runs with and without it the same
statuses and evidence."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import regex

from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions
from chimera.spec.engine.linear import WORD, AsciiImages
from chimera.spec.engine.options import EngineStats
from chimera.spec.engine.patterns import PATTERN_FLAGS, PatternCache
from chimera.spec.kinds import Absent, Contains
from chimera.spec.model import Check, Requirement, SourceLocation, Spec, SpecFile

pytest.importorskip("re2")

ATOMS = [
    "a", "b", "x", "_", " ", ":", r"\(", r"\n", r"\t", ".", r"\d", r"\w", r"\s", r"\D", r"\W",
    r"\S", "[a-c]", r"[^a\s]", r"[\w:]", r"[^\d]", "[0-9]", r"\x1c", r"\v", "é",
]  # fmt: skip
ANCHORS = ["^", "$", r"\b", r"\B", r"\A", r"\Z"]
QUANTIFIERS = ["*", "+", "?", "{2}", "{1,3}", "{2,}", "*?", "+?", "??", "{1,2}?"]
ALPHABET = "aabbxx__  ::((\n\n\t019AZ\x0b\x0c\r\x1c-"


def _pattern(rng: random.Random, depth: int = 0) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.12:
            parts.append(rng.choice(ANCHORS))
            continue
        if roll < 0.22 and depth < 2:
            alts = [_pattern(rng, depth + 1) for _ in range(rng.randint(1, 3))]
            atom = (
                "(?:" + "|".join(alts) + ")" if rng.random() < 0.5 else "(" + "|".join(alts) + ")"
            )
        else:
            atom = rng.choice(ATOMS)
        if rng.random() < 0.4:
            atom += rng.choice(QUANTIFIERS)
        parts.append(atom)
    return "".join(parts)


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 60)))


def _reference(source: str, text: str, first_only: bool) -> list[int]:
    found = [m.start() for m in regex.compile(source, PATTERN_FLAGS).finditer(text)]
    return found[:1] if first_only else found


def test_translated_subset() -> None:
    cache = PatternCache(EngineOptions(), EngineStats())
    for source in [r"^\s+print\b", r"[A-Z]{30,}", r"(?:ab|c)+?\Z", r"[^\d\s]\W"]:
        assert cache.get(source, True).linear is not None, source
    for source in [
        r"(?i)abc",  # case folding: regex's, not RE2's
        r"(a)\1",  # backreference
        r"a(?=b)",  # lookaround
        r"a++",  # possessive
        r"(?>a)",  # atomic
        r"[[:alpha:]]x",  # POSIX class (regex only)
        r"ab{e<=1}",  # fuzzy (regex only)
        r"\p{L}x",  # Unicode property (regex only)
        r"(?s)a.b",  # flags
        r"éx",  # non-ASCII literal: never in an ASCII text, left to regex
        r"^print\(",  # a line-start prefix: the jump search is faster
    ]:
        assert cache.get(source, True).linear is None, source


@pytest.mark.parametrize("seed", range(8))
def test_generated_patterns_give_regex_offsets(seed: int) -> None:
    rng = random.Random(seed)
    cache = PatternCache(EngineOptions(), EngineStats())
    texts = [_text(rng) for _ in range(40)]
    translated = every = 0
    for _ in range(150):
        source = _pattern(rng)
        cp = cache.get(source, True)
        if cp.linear is None:
            continue
        translated += 1
        every += cp.linear_all
        for text in texts:
            data = text.encode("ascii")
            for first_only in (True, False):
                got = cp.search(text, first_only=first_only, timeout=5, ascii_bytes=data)
                assert got == _reference(source, text, first_only), (source, text, first_only)
    # The generator exercises both uses of the second engine.
    assert translated > 60 and every > 30, (translated, every)


UNICODE_ALPHABET = ALPHABET + "éßǅ€§\u00a0\u2003\u2028\x85١٢𝟘İσ\ud800"
"""Non-ASCII characters of every class: letters (title case too), symbols, Unicode spaces and
line separators, digits of other scripts, a lone surrogate."""


@pytest.mark.parametrize("seed", range(8))
def test_generated_patterns_give_regex_offsets_on_ascii_images(seed: int) -> None:
    """A non-ASCII text's ASCII image (stand-ins of each character's class) gives RE2
    exactly ``regex``'s matches on the text."""
    rng = random.Random(2000 + seed)
    cache = PatternCache(EngineOptions(), EngineStats())
    texts = [
        "".join(rng.choice(UNICODE_ALPHABET) for _ in range(rng.randint(1, 60))) + "é"
        for _ in range(40)
    ]
    imaged = 0
    for _ in range(150):
        source = _pattern(rng)
        cp = cache.get(source, True)
        if cp.linear is None:
            continue
        assert cp.stand_ins is not None
        for text in texts:
            image = AsciiImages(text).image(cp.stand_ins)
            if image is None:
                continue
            imaged += 1
            assert len(image) == len(text)
            for first_only in (True, False):
                got = cp.search(text, first_only=first_only, timeout=5, ascii_bytes=image)
                assert got == _reference(source, text, first_only), (source, text, first_only)
    assert imaged > 1000, imaged


def test_a_pattern_naming_every_stand_in_of_a_class_keeps_regex() -> None:
    cache = PatternCache(EngineOptions(), EngineStats())
    cp = cache.get(r"[A-Za-z_]+\(", True)  # names every ASCII word character but digits
    assert cp.stand_ins is not None and cp.stand_ins[WORD] is None
    assert AsciiImages("é(").image(cp.stand_ins) is None  # a letter: no stand-in
    assert AsciiImages("€(").image(cp.stand_ins) == b"\x01("  # a symbol: one exists


def _spec(checks: list[Check]) -> Spec:
    reqs = tuple(
        Requirement(f"r{i}", c, SourceLocation("specs/t.yaml", i + 1, 5))
        for i, c in enumerate(checks)
    )
    return Spec((SpecFile(Path("specs/t.yaml"), reqs),))


@pytest.mark.parametrize("seed", range(3))
def test_engine_runs_agree_with_and_without_the_linear_engine(tmp_path: Path, seed: int) -> None:
    rng = random.Random(100 + seed)
    for i in range(12):
        text = "\n".join(_text(rng) for _ in range(rng.randint(1, 8)))
        if i % 4 == 0:
            text += "\nnaïve é€ straße ١٢\u00a0\n"  # searched through ASCII images
        (tmp_path / f"f{i}.txt").write_text(text, encoding="utf-8", newline="")
    checks: list[Check] = []
    for _ in range(40):
        source = _pattern(rng)
        kind = Absent if rng.random() < 0.5 else Contains
        checks.append(kind(paths=["*.txt"], pattern=source))
    spec = _spec(checks)
    linear = DriftSession(spec, tmp_path, options=EngineOptions()).report()
    plain = DriftSession(spec, tmp_path, options=EngineOptions(linear_engine=False)).report()
    for a, b in zip(linear.results, plain.results, strict=True):
        assert (a.status, a.message, a.evidence) == (b.status, b.message, b.evidence), a.id


@pytest.mark.parametrize(
    "source",
    [r"^ {4,}\S", r"^print\(", r"^ab", r"\Aab", r"^\nab", r"^ {2}x|^ {2}y", r"^aa+b", r"^(?:ab)+c"],
)
def test_line_start_jump_search_gives_regex_offsets(source: str) -> None:
    """Patterns behind ``^``/``\\A`` jump between line starts holding their prefix; the
    prefix's other occurrences (mid-line) never reach ``regex``, and nothing is lost."""
    cp = PatternCache(EngineOptions(), EngineStats()).get(source, True)
    rng = random.Random(source)
    words = ["ab", "a", "b", "c", "\n", "  ", " ", "x", "print(", "\r\n", "é", "y"]
    for _ in range(300):
        text = "".join(rng.choice(words) for _ in range(rng.randint(0, 40)))
        for first_only in (True, False):
            got = cp.search(text, first_only=first_only, timeout=5)
            assert got == _reference(source, text, first_only), (text, first_only)
    # The jump search is what this exercises (the others are its neighbours: a plain
    # pattern, an alternation and a group, which have no prefix).
    jumps = source not in (r"^ab", r"^ {2}x|^ {2}y", r"^(?:ab)+c")
    assert (cp.prefix is not None) is jumps
