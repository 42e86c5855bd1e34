"""The session: one read per file, one compile per pattern, caching, dependencies, errors."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import pytest
import regex

from chimera.spec.check_context import CheckContext
from chimera.spec.drift import DriftSession, check_drift
from chimera.spec.engine import EngineOptions, EngineStats
from chimera.spec.engine.patterns import required_literals
from chimera.spec.kinds import Absent, Command, Contains, Defines
from chimera.spec.kinds.defines import SymbolKind
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Check, CheckOutcome, Requirement, SourceLocation, Status

if TYPE_CHECKING:
    from tests.unit.engine.conftest import MakeSpec, RunAll


def tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


FILES = {
    "pkg/a.py": "import os\nclass A:\n    def run(self):\n        print('a')\n",
    "pkg/b.py": "# Copyright 2026\nfrom pkg.a import A\nVALUE = 1\n",
    "pkg/sub/c.py": "def helper():\n    return eval('1')\n",
    "README.md": "# Demo\n\npip install demo\n",
}


def many_checks() -> list[Check]:
    return [
        Absent(paths=["**/*.py"], pattern=r"print\("),
        Absent(paths=["pkg/**/*.py"], pattern=r"print\("),  # same pattern, other scope
        Absent(paths=["**/*.py"], pattern=r"\beval\("),
        Absent(paths=["**/*.py"], pattern="breakpoint()", regex=False),
        Contains(paths=["**/*.py"], pattern=r"^# Copyright \d{4}"),
        Contains(paths=["**/*.py"], pattern=r"^import", match=MatchMode.ALL),
        Contains(path="README.md", pattern=r"pip install \w+"),
        Contains(path="./README.md", pattern=r"pip install \w+"),
        Defines(path="pkg/a.py", symbol="A.run", kind=SymbolKind.METHOD),
        Defines(module="pkg.a", symbol="A"),
        Defines(path="pkg/b.py", symbol="VALUE", kind=SymbolKind.VARIABLE),
        Defines(path="pkg/sub/c.py", symbol="helper", kind=SymbolKind.FUNCTION),
    ]


def test_each_file_read_once_and_each_pattern_compiled_once(
    tmp_path: Path, run_all: RunAll
) -> None:
    tree(tmp_path, FILES)
    report, stats = run_all(tmp_path, many_checks())
    assert len(report) == 12
    assert max(stats.reads.values()) == 1
    assert {Path(p).name for p in stats.reads} == {"a.py", "b.py", "c.py", "README.md"}
    assert max(stats.compiles.values()) == 1
    assert stats.compiles[r"print\("] == 1
    assert stats.passes == 1
    assert stats.listings == 1
    assert sum(stats.parses.values()) == 3


def test_without_prepare_results_are_the_same_and_reads_stay_single(tmp_path: Path) -> None:
    tree(tmp_path, FILES)
    spec_checks = many_checks()
    from chimera.spec.model import Spec, SpecFile

    reqs = tuple(
        Requirement(f"r{i}", c, SourceLocation("s.yaml", i + 1, 1))
        for i, c in enumerate(spec_checks)
    )
    spec = Spec((SpecFile(Path("s.yaml"), reqs),))
    batched = {r.id: (r.status, r.message, r.evidence) for r in check_drift(spec, tmp_path)}
    # By default no text is kept between passes (memory holds one file at a time): each
    # pass reads what it needs again, with the same results.
    stats = EngineStats()
    lazy = DriftSession(spec, tmp_path, stats=stats)
    lazy_results = [lazy.result(r.id) for r in reversed(reqs)]  # no prepare, odd order
    assert {r.id: (r.status, r.message, r.evidence) for r in lazy_results} == batched
    assert max(stats.compiles.values()) == 1
    # With a text cache, later passes read nothing again.
    stats = EngineStats()
    options = EngineOptions(text_cache_bytes=1 << 20)
    lazy = DriftSession(spec, tmp_path, stats=stats, options=options)
    lazy_results = [lazy.result(r.id) for r in reversed(reqs)]
    assert {r.id: (r.status, r.message, r.evidence) for r in lazy_results} == batched
    assert max(stats.reads.values()) == 1  # the text cache serves later passes
    assert max(stats.compiles.values()) == 1


def test_result_is_cached(tmp_path: Path, make_spec: MakeSpec) -> None:
    tree(tmp_path, FILES)
    session = DriftSession(make_spec(Command(run="echo $$")), tmp_path)
    first = session.result("r0")
    assert session.result("r0") is first


def test_prepare_plans_only_the_selected_ids(tmp_path: Path, make_spec: MakeSpec) -> None:
    tree(tmp_path, FILES)
    stats = EngineStats()
    spec = make_spec(
        ("readme", Contains(path="README.md", pattern="pip")),
        ("code", Absent(paths=["pkg/**/*.py"], pattern="print")),
    )
    session = DriftSession(spec, tmp_path, stats=stats)
    session.prepare(["readme"])
    assert session.result("readme").passed
    assert [Path(p).name for p in stats.reads] == ["README.md"]
    with pytest.raises(KeyError):
        session.prepare(["nope"])


def test_report_order_and_only(tmp_path: Path, make_spec: MakeSpec) -> None:
    tree(tmp_path, FILES)
    spec = make_spec(
        ("one", Contains(path="README.md", pattern="Demo")),
        ("two", Absent(path="README.md", pattern="Demo")),
        ("three", Defines(path="pkg/a.py", symbol="A")),
    )
    report = check_drift(spec, tmp_path, only=["three", "one"])
    assert [r.id for r in report] == ["one", "three"]
    full = check_drift(spec, tmp_path)
    assert [r.id for r in full] == ["one", "two", "three"]
    assert [r.status for r in full] == [Status.PASSED, Status.FAILED, Status.PASSED]
    assert all(r.duration_s >= 0 for r in full)
    with pytest.raises(KeyError):
        check_drift(spec, tmp_path, only=["missing"])


def test_failing_dependency_is_named_but_dependent_still_evaluated(
    tmp_path: Path, make_spec: MakeSpec
) -> None:
    tree(tmp_path, FILES)
    loc = SourceLocation("s.yaml", 1, 1)
    spec = make_spec(
        Requirement("base", Absent(paths=["**/*.py"], pattern=r"print\("), loc),
        Requirement("ok", Contains(path="README.md", pattern="Demo"), loc),
        Requirement("top", Defines(path="pkg/a.py", symbol="A"), loc, depends_on=("base", "ok")),
        Requirement("top2", Defines(path="pkg/a.py", symbol="Nope"), loc, depends_on=("base",)),
    )
    report = check_drift(spec, tmp_path)
    top = report.by_id()["top"]
    assert top.status is Status.PASSED  # still evaluated on its own
    assert "depends on base, which failed" in top.message
    assert "ok" not in top.message.split("depends on", 1)[1]
    assert report.by_id()["top2"].status is Status.FAILED
    # Dependency outside the session's selection: not evaluated, not mentioned.
    alone = check_drift(spec, tmp_path, only=["top"])
    assert "depends on" not in alone.results[0].message
    # Evaluated later in the same session: order does not change the message.
    session = DriftSession(spec, tmp_path)
    session.prepare(["top", "base"])
    assert "depends on base" in session.result("top").message


class Exploding(Check):
    kind_name: ClassVar[str] = "exploding"

    def check(self, ctx: CheckContext) -> CheckOutcome:
        raise ValueError("kaboom\nsecond line of detail")


class BadPrepare(Check):
    kind_name: ClassVar[str] = "bad_prepare"

    def prepare(self, ctx: CheckContext) -> None:
        raise RuntimeError("prepare broke")

    def check(self, ctx: CheckContext) -> CheckOutcome:
        return CheckOutcome(Status.PASSED, "fine anyway")


def test_unexpected_exception_becomes_a_one_line_error(tmp_path: Path, make_spec: MakeSpec) -> None:
    report = check_drift(make_spec(Exploding(), BadPrepare()), tmp_path)
    boom, prep = report.results
    assert boom.status is Status.ERROR
    assert boom.message == "exploding check raised an unexpected ValueError: kaboom"
    assert "\n" not in boom.message
    assert prep.status is Status.PASSED


def test_root_must_be_a_directory(tmp_path: Path, make_spec: MakeSpec) -> None:
    from chimera.errors import UsageError

    with pytest.raises(UsageError):
        check_drift(make_spec(Command(run="true")), tmp_path / "missing")


# -- the literal prefilter -------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"print\(", {"print("}),
        (r"\bbreakpoint\(\)", {"breakpoint()"}),
        (r"import (os|sys)\b", {"import "}),
        (r"(?:foo|barbaz)\d+", {"foo", "barbaz"}),
        (r"^# Copyright \d{4} Acme", {"# Copyright "}),
        (r"x+yz(?=abcdef)", {"abcdef"}),
        (r"(?P<name>hello) world", {" world"}),
        (r"^[[:space:]]*import ipdb", {"import ipdb"}),  # POSIX classes
        (r"[^[:alnum:]_]foo[[:digit:]]+bar", {"foo", "bar"} - {"bar"}),
    ],
)
def test_required_literals(pattern: str, expected: set[str]) -> None:
    assert required_literals(pattern) == frozenset(expected)


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?i)print\(",  # ignores case
        r"(?i:print)\(",
        r"(?:print){e<=1}",  # fuzzy matching: `regex` only
        r"\[[:alpha:]]+foo",  # escaped bracket beside a POSIX class: not analysed
        r"\p{Lu}\w+",  # `regex` only syntax
        r"(foo)?bx?",  # nothing long enough is required
        r"a|bcd",
        r"\w+",
    ],
)
def test_no_prefilter_when_unsafe_or_useless(pattern: str) -> None:
    assert required_literals(pattern) is None


PATTERNS = [
    r"print\(",
    r"(?i)PRINT",
    r"def \w+\(self",
    r"^class \w+",
    r"(?:import|from) os",
    r"return (None|True)$",
    r"\d{2,}",
    r"x{2}",
    r"(?:secret){e<=1}",
    r"[[:upper:]]{3}",
    r"^[[:space:]]*def run",
    r"[[:alpha:]]ecret",
    r"self\.\w+ = ",
    r"(?<=def )run",
    r"print\(.*PRINT",
    r"(?:import|from) os.*(?:def|class) ",
    r"secret(?=.*xx)",
]


def test_prefilter_never_changes_results(tmp_path: Path, run_all: RunAll) -> None:
    """The batched engine agrees with a brute-force `regex` search on random files."""
    rng = random.Random(7)
    words = [
        "print(", "PRINT", "Print", "def run(self", "class Foo", "import os", "from os",
        "return None", "return True", "42", "xx", "secrxt", "secret", "ABC", "self.a = ",
        "\n", " ", "\n", "x", "def ", "run",
    ]  # fmt: skip
    files = {}
    for i in range(40):
        files[f"f{i}.txt"] = "".join(rng.choice(words) for _ in range(rng.randint(0, 60)))
    tree(tmp_path, files)
    checks: list[Check] = [Absent(paths=["*.txt"], pattern=p) for p in PATTERNS]
    report, stats = run_all(tmp_path, checks)
    assert stats.prefilter_skips > 0
    for pattern, result in zip(PATTERNS, report.results, strict=True):
        compiled = regex.compile(pattern, regex.MULTILINE)
        expected = sorted(
            (name, text[: m.start()].count("\n") + 1)
            for name, text in files.items()
            for m in compiled.finditer(text)
        )
        got = sorted((e.file or "", e.line or 0) for e in result.evidence)
        assert got == expected, pattern


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"print\(.*DEBUG", [{"print("}, {"DEBUG"}]),
        (r"^import (pdb|ipdb)$", [{"import "}, {"pdb", "ipdb"}]),
        (r"assert False, ['\"]unreachable", [{"assert False, "}, {"unreachable"}]),
        (r"(?:ab|cd)ef", [{"ef"}, {"ab", "cd"}]),
    ],
)
def test_required_literal_sets_are_a_conjunction(pattern: str, expected: list[set[str]]) -> None:
    from chimera.spec.engine.patterns import required_literal_sets

    assert required_literal_sets(pattern) == tuple(frozenset(e) for e in expected)


def test_conjunction_prefilter_skips_files_missing_one_part(
    tmp_path: Path, run_all: RunAll
) -> None:
    for i in range(40):  # past the prefilter's sampling phase
        text = "print('x')\n" if i % 2 else "DEBUG = 1\n"
        tree(tmp_path, {f"m{i:02}.py": text})
    tree(tmp_path, {"z.py": "print('DEBUG on')\n"})
    report, stats = run_all(tmp_path, [Absent(paths=["*.py"], pattern=r"print\(.*DEBUG")])
    (res,) = report.results
    assert [(e.file, e.line) for e in res.evidence] == [("z.py", 1)]
    assert stats.regex_runs == 1
