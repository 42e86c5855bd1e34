"""The fast path against a simple reference evaluator, on generated trees.

Random files (UTF-8 with non-ASCII text, CRLF, a BOM, Latin-1 Python files with a coding
line, binary and undecodable files) and patterns chosen to stress the fast path (literals
from repeats, the jump search behind ``^``, Unicode ``\\d``/``\\w``/``\\s``/``\\b``, case
folding, lookarounds) are checked by the engine — with either literal prefilter, cold and
warm from the result cache — and by a reference that reads each file and runs ``regex``'s
``finditer`` on it. Statuses and evidence must be identical.
"""

from __future__ import annotations

import random
import subprocess
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest
import regex

from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions, combined, linear, patterns, session
from chimera.spec.engine import prefilter as prefilter_module
from chimera.spec.kinds import Absent, Contains
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Check, Evidence, Requirement, SourceLocation, Spec, SpecFile, Status

WORDS = [
    "print(", "print", "    ", "        ", " " * 12, "\t", "\n", "\n", "\r\n", "x", "xx", "y",
    "def run(self", "class Foo:", "import os", "# note", "FOO", "BARBAZQUX", "straße",
    "STRASSE", "Straße", "é", "€", "ß", "ǅ", "İ", "σς", "١٢٣", "42", "\u00a0", "\u2003",
    "naïve", "café", "foo", "foobar", "_foo", "é€x",
]  # fmt: skip

PATTERNS = [
    r"^ {4,}\S",
    r"^ {8}x",
    r"^ {4}[^\n]*\n",
    r"^\s+print\b",
    r"^#",
    r"[A-Z]{3,}",
    r"\d+",
    r"\d{2}",
    r"\w+é",
    r"(?i)straße",
    r"(?i)^\s*class",
    r"\bfoo\b",
    r"(?<=\s)foo",
    r"x{2}y",
    r"ß{2,}",
    r"é€",
    r"^\s*$",
    r"café|naïve",
    r"print\(.*x",
    r"[[:upper:]]{4}",
    r"^(?:import|class) ",
    r"def \w+\(self.*foo",  # three necessary literals: two answered by the prefilter's set
    r"import os.*(?:naïve|café)",
    # RE2 on the ASCII images of non-ASCII files: every class of stand-in, and patterns that
    # name a class's every ASCII character explicitly.
    r"[^a-z ]{2,}",
    r"\W+x",
    r"\S+\s\S+",
    r"[a-zA-Z_]\w*\(",
    r"\d\D\d",
]
SNIPPET = EngineOptions().snippet_chars
LITERALS = ["é€x", "print(", "    x", "ǅ"]


def _py_text(rng: random.Random) -> str:
    return "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 80)))


def make_tree(root: Path, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(30):
        kind = rng.random()
        name = f"d{i % 3}/f{i}.{'py' if i % 2 else 'txt'}"
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = _py_text(rng)
        if kind < 0.08:
            path.write_bytes(b"abc\0def")  # binary
        elif kind < 0.14:
            path.write_bytes(b"ok\n\xff\xfe bad\n")  # not UTF-8
        elif kind < 0.24 and name.endswith(".py"):
            latin = "# -*- coding: latin-1 -*-\n" + text.encode("latin-1", "replace").decode(
                "latin-1"
            )
            path.write_bytes(latin.encode("latin-1"))
        elif kind < 0.30:
            path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))  # BOM
        else:
            path.write_bytes(text.encode("utf-8"))


def _decode(rel: str, data: bytes) -> str | None:
    """The reference decoding (DESIGN.md): None when the file is not text."""
    if b"\0" in data:
        return None
    encoding = "utf-8-sig"
    if rel.endswith(".py"):
        lines = iter(data.splitlines(keepends=True)[:2])
        try:
            encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
        except SyntaxError:
            return None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def _locations(text: str, pattern: str, is_regex: bool) -> Iterator[tuple[int, int, str]]:
    compiled = regex.compile(pattern if is_regex else regex.escape(pattern), regex.MULTILINE)
    for m in compiled.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        line = text[start : end if end >= 0 else len(text)].rstrip()
        if len(line) > SNIPPET:
            line = line[: SNIPPET - 1] + "…"
        yield text.count("\n", 0, m.start()) + 1, m.start() - start + 1, line


def reference(root: Path, check: Absent | Contains) -> tuple[Status, set[tuple[object, ...]]]:
    """Status and evidence of ``check`` by brute force."""
    files = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts and ".chimera" not in p.parts
    )
    if check.paths == ["d1/**"]:
        files = [rel for rel in files if rel.startswith("d1/")]
    matches: set[tuple[object, ...]] = set()
    first: list[tuple[object, ...]] = []
    bad: set[tuple[object, ...]] = set()
    for rel in files:
        text = _decode(rel, (root / rel).read_bytes())
        if text is None:
            bad.add((rel,))
            continue
        found = [(rel, *loc) for loc in _locations(text, check.pattern, check.regex)]
        matches.update(found)
        first.extend(found[:1])
    if isinstance(check, Absent):
        if matches:
            return Status.FAILED, matches | bad
        return (Status.ERROR, bad) if bad else (Status.PASSED, set())
    if check.match is MatchMode.ALL:
        # One rule for every kind: a readable file without a match makes it failed, with
        # the unreadable files listed too; without one, an unreadable file makes it error.
        readable = [rel for rel in files if (rel,) not in bad]
        matched = {loc[0] for loc in first}
        without = {(rel, "no match") for rel in readable if rel not in matched}
        if without:
            return Status.FAILED, without | bad
        return (Status.ERROR, bad) if bad else (Status.PASSED, set(first))
    if first:
        return Status.PASSED, {first[0]}
    return (Status.ERROR, bad) if bad else (Status.FAILED, set())


def engine_view(
    status: Status, evidence: tuple[Evidence, ...], every: bool = False
) -> set[tuple[object, ...]]:
    out: set[tuple[object, ...]] = set()
    if status is Status.PASSED:
        # `absent` reports "no match in N files" without a location; `contains` its match.
        return {(e.file, e.line, e.col, e.snippet) for e in evidence if e.line}
    for e in evidence:
        if e.line:
            out.add((e.file, e.line, e.col, e.snippet))
        elif e.file and e.note == "no match" and every:
            out.add((e.file, "no match"))
        elif e.file and e.note != "no match":
            out.add((e.file,))
    return out


def checks() -> list[Absent | Contains]:
    out: list[Absent | Contains] = []
    for p in PATTERNS:
        out += [Absent(paths=["**/*"], pattern=p), Contains(paths=["**/*"], pattern=p)]
        out.append(Contains(paths=["d1/**"], pattern=p, match=MatchMode.ALL))
    for lit in LITERALS:
        out += [
            Absent(paths=["**/*"], pattern=lit, regex=False),
            Contains(paths=["**/*"], pattern=lit, regex=False),
        ]
    return out


def spec_of(items: list[Absent | Contains]) -> Spec:
    loc = SourceLocation("specs/t.yaml", 1, 1)
    reqs = tuple(Requirement(f"r{i}", c, loc) for i, c in enumerate(items))
    return Spec((SpecFile(Path("specs/t.yaml"), reqs),))


@pytest.fixture(params=["automaton", "re2"])
def prefilter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "automaton":
        # The plain install's engine: no RE2 anywhere (no combined Set, no per-pattern RE2),
        # the Aho-Corasick literal prefilter and ``regex``.
        monkeypatch.setattr(session, "load_re2", lambda: None)
        monkeypatch.setattr(combined, "make_prefilter", prefilter_module.Prefilter)
        monkeypatch.setattr(linear, "compile_linear", lambda parsed: None)
        monkeypatch.setattr(patterns, "compile_linear", lambda parsed: None)
    else:
        pytest.importorskip("re2")
    return str(request.param)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fast_path_matches_the_reference(tmp_path: Path, seed: int, prefilter: str) -> None:
    make_tree(tmp_path, seed)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    # The cache is used only where git tracks something (staged is enough).
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    items: list[Check] = list(checks())
    spec = spec_of(checks())
    expected = [reference(tmp_path, c) for c in checks()]
    options = EngineOptions(result_cache=True)
    for run in ("cold", "warm"):
        report = DriftSession(spec, tmp_path, options=options).report()
        for check, result, (status, evidence) in zip(items, report, expected, strict=True):
            every = isinstance(check, Contains) and check.match is MatchMode.ALL
            got = engine_view(result.status, result.evidence, every)
            where = f"{run} {prefilter} {check.describe()}"
            assert result.status is status, where
            assert got == evidence, where
    assert (tmp_path / ".chimera" / "cache" / "results.json").is_file()


def test_reference_is_not_vacuous(tmp_path: Path) -> None:
    """The generated trees exercise every outcome (a differential test that cannot fail is
    no test)."""
    statuses: set[Status] = set()
    for seed in (1, 2, 3):
        root = tmp_path / str(seed)
        make_tree(root, seed)
        statuses.update(reference(root, c)[0] for c in checks())
    assert statuses == {Status.PASSED, Status.FAILED, Status.ERROR}
