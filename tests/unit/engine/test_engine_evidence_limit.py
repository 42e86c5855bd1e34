"""The evidence limit: the first items kept, the rest counted, verdicts and messages unchanged.

With ``EngineOptions.evidence_limit`` an ``absent`` counts every match and locates only the
first ones of its scope (the pass locates about those; a file the scan needs and the pass
did not locate is read again). Every requirement must report the same status and message as
without the limit, its kept evidence must be the first items of the full evidence, and kept
plus ``omitted`` must be the full count — on generated trees with symlinks (a scope's order
then differs from the order files are read in), scopes sharing a pattern, an ``absent`` and a
``match: all`` on the same pattern, requirements evaluated without a batched pass, and the
result cache cold, warm and after an edit.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions, EngineStats, combined, linear, patterns, session
from chimera.spec.engine import prefilter as prefilter_module
from chimera.spec.kinds import Absent, Contains, Defines
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Check
from chimera.spec.results import DriftReport
from tests.unit.engine.test_engine_differential import make_tree, spec_of

LINES = ["x = 1", "print(x)", "print(y)  # note", "    print(z)", "def f():", "", "café print("]


def _tree(root: Path, seed: int) -> None:
    rng = random.Random(seed)
    make_tree(root / "gen", seed)
    for i in range(40):
        path = root / f"p{i % 4}" / f"m{i:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [rng.choice(LINES) for _ in range(rng.randint(0, 12))]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # Links whose names sort apart from their targets: the scope's order (by name) is not
    # the order the pass reads files in (by real path).
    (root / "a-link.py").symlink_to(root / "p3" / "m39.py")
    (root / "p0" / "zz-link.py").symlink_to(root / "p1" / "m01.py")
    (root / "p2" / "bad.py").write_bytes(b"print(\0)")


def _checks() -> list[Check]:
    out: list[Check] = []
    patterns = [r"print\(", r"^\s+print", "x", r"\bprint\(y\)", "café", "nowhere"]
    # Counted without offsets: a plain pattern anchored at a line, a line-start prefix, a
    # pattern without a literal, one that can match empty.
    patterns += ["^print", r"^    print\(", r"\w+\(", r"^\s*$", r"(?i)PRINT"]
    for pattern in patterns:
        out += [
            Absent(paths=["**/*.py"], pattern=pattern),
            Absent(paths=["p1/*.py", "p3/*.py"], pattern=pattern),
            Contains(paths=["p0/*.py"], pattern=pattern, match=MatchMode.ALL),
            Contains(paths=["**/*.py"], pattern=pattern),
        ]
    out += [
        Absent(paths=["gen/**"], pattern=r"\w+"),
        Absent(path="p2/m02.py", pattern="print", regex=False),
        Absent(paths=["**/*.py"], pattern="print(", regex=False),
        Defines(path="p0/m00.py", symbol="f"),
    ]
    return out


def _report(
    root: Path, checks: list[Check], limit: int | None, *, cache: bool, prepared: bool = True
) -> tuple[DriftReport, EngineStats]:
    stats = EngineStats()
    options = EngineOptions(result_cache=cache, evidence_limit=limit)
    drift = DriftSession(spec_of(checks), root, options=options, stats=stats)  # type: ignore[arg-type]
    if prepared:
        return drift.report(), stats
    # One requirement at a time, without a batched pass: each asks the engine on its own.
    results = tuple(drift.result(f"r{i}") for i in range(len(checks)))
    return DriftReport(results), stats


def _same_but_capped(full: DriftReport, capped: DriftReport, limit: int, where: str) -> None:
    for a, b in zip(full, capped, strict=True):
        at = f"{where} {a.requirement.check.describe()}"
        assert (b.status, b.message) == (a.status, a.message), at
        assert b.evidence == a.evidence[:limit], at
        assert len(b.evidence) + b.evidence_omitted == len(a.evidence) + a.evidence_omitted, at
        assert b.evidence_omitted == 0 or len(b.evidence) == limit, at
        for shown in (1, 5, limit):
            if shown <= limit:
                assert b.render(max_evidence=shown) == a.render(max_evidence=shown), at
        assert b.to_json(max_evidence=limit) == {
            **a.to_json(max_evidence=limit),
            "duration_s": b.to_json()["duration_s"],
        }, at


@pytest.fixture(params=["automaton", "re2"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "automaton":
        monkeypatch.setattr(session, "load_re2", lambda: None)
        monkeypatch.setattr(combined, "make_prefilter", prefilter_module.Prefilter)
        monkeypatch.setattr(linear, "compile_linear", lambda parsed: None)
        monkeypatch.setattr(patterns, "compile_linear", lambda parsed: None)
    else:
        pytest.importorskip("re2")
    return str(request.param)


@pytest.mark.parametrize("seed", [1, 2])
def test_capped_evidence_is_the_first_of_the_full_evidence(
    tmp_path: Path, seed: int, engine: str
) -> None:
    _tree(tmp_path, seed)
    checks = _checks()
    full, full_stats = _report(tmp_path, checks, None, cache=False)
    assert any(r.evidence_omitted == 0 and len(r.evidence) > 7 for r in full)  # not vacuous
    for limit in (1, 3, 7):
        for prepared in (True, False):
            capped, stats = _report(tmp_path, checks, limit, cache=False, prepared=prepared)
            _same_but_capped(full, capped, limit, f"{engine} limit {limit} {prepared=}")
            if prepared:
                # The point: matches beyond what is shown are counted, not located.
                assert stats.located < full_stats.located


def test_the_result_cache_cold_warm_and_edited(tmp_path: Path) -> None:
    _tree(tmp_path, 3)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    checks = _checks()
    edited = tmp_path / "p0" / "m04.py"
    for step in ("cold", "warm", "edited", "limits swapped"):
        if step == "edited":
            edited.write_text("print(1)\n" * 30 + "    print(2)\n", encoding="utf-8")
        full, _ = _report(tmp_path, checks, None, cache=False)
        # A cache filled under one limit serves another (or none): entries say what they hold.
        order = (2, None, 5) if step != "limits swapped" else (None, 5, 2)
        for limit in order:
            got, _ = _report(tmp_path, checks, limit, cache=True)
            if limit is None:
                assert [(r.status, r.message, r.evidence) for r in got] == [
                    (r.status, r.message, r.evidence) for r in full
                ], step
            else:
                _same_but_capped(full, got, limit, f"{step} limit {limit}")


def test_a_scope_read_out_of_order_locates_what_it_shows(tmp_path: Path) -> None:
    """The only file of a scope that the pass reads last but the scope lists first (a link
    named ``a-...``) is located when the scan asks, by reading it again."""
    root = tmp_path
    (root / "src").mkdir()
    for i in range(6):
        (root / "src" / f"f{i}.py").write_text("print(1)\nprint(2)\n", encoding="utf-8")
    (root / "zz").mkdir()
    (root / "zz" / "last.py").write_text("print(0)\n", encoding="utf-8")
    (root / "src" / "a-first.py").symlink_to(root / "zz" / "last.py")
    check = Absent(paths=["src/*.py"], pattern=r"print\(")
    full, _ = _report(root, [check], None, cache=False)
    capped, stats = _report(root, [check], 1, cache=False)
    _same_but_capped(full, capped, 1, "out of order")
    assert capped.results[0].evidence[0].note == "via symlink src/a-first.py"
    assert capped.results[0].evidence_omitted == 12
    assert stats.located < 13


def test_a_later_pass_keeps_what_an_earlier_one_counted(tmp_path: Path) -> None:
    """An ``absent`` planned in one pass and scanned after a later pass searched the same
    pattern for less (the first match of each file, for a ``match: all``) still counts every
    match: the later pass adds to what the earlier one found, never replaces it."""
    _tree(tmp_path, 4)
    counted = Absent(paths=["**/*.py"], pattern=r"print\(")
    every_file = Contains(paths=["p0/*.py"], pattern=r"print\(", match=MatchMode.ALL)
    other = Contains(path="p1/m01.py", pattern="zzz")
    full, _ = _report(tmp_path, [counted], None, cache=False)
    for limit in (None, 2):
        drift = DriftSession(
            spec_of([counted, every_file, other]),
            tmp_path,
            options=EngineOptions(evidence_limit=limit),
        )
        drift.prepare(["r0"])
        drift.result("r2")  # the pass that searches r0's pattern
        drift.result("r1")  # a second pass, the same pattern for its first match per file
        got = DriftReport((drift.result("r0"),))
        assert drift.stats.passes == 2
        _same_but_capped(full, got, limit or 10**6, f"limit {limit}")


def test_a_stored_hit_without_its_count_is_searched_again(tmp_path: Path) -> None:
    """A cache entry whose counted hit lost its count (a damaged or older entry) answers no
    counted need: the file is read again, and the count is right."""
    _tree(tmp_path, 5)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    checks: list[Check] = [Absent(paths=["**/*.py"], pattern=r"print\(")]
    full, _ = _report(tmp_path, checks, None, cache=False)
    _report(tmp_path, checks, 1, cache=True)
    stored = tmp_path / ".chimera" / "cache" / "results.json"
    doc = json.loads(stored.read_text(encoding="utf-8"))
    cut = 0
    for entry in doc["entries"].values():
        for hit in entry[2].values():
            if len(hit) > 2 and hit[2] > 0 and hit[0] != 0b1111:
                del hit[2]
                cut += 1
    assert cut
    stored.write_text(json.dumps(doc), encoding="utf-8")
    # The report cache would answer first: only the result cache is under test here.
    for report in (tmp_path / ".chimera" / "cache").glob("report-*.json"):
        report.unlink()
    got, stats = _report(tmp_path, checks, 1, cache=True)
    _same_but_capped(full, got, 1, "count cut")
    assert len(stats.reads) >= cut
