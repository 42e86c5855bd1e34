"""The whole-report cache: an unchanged tree and Spec is a lookup; any input change misses."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions, EngineStats, reports
from chimera.spec.engine.cache import code_stamp
from chimera.spec.kinds import Absent, Command, Contains, Defines
from chimera.spec.kinds.defines import SymbolKind
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Check, Requirement, SourceLocation, Spec, SpecFile
from chimera.spec.results import DriftReport

CACHE = Path(".chimera/cache")
OLD = 1_600_000_000  # an mtime far from now: stat data is trusted (not "racy")


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def write(root: Path, rel: str, text: str, *, old: bool = True) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if old:
        os.utime(path, (OLD, OLD))


def spec_of(*checks: Check) -> Spec:
    loc = SourceLocation("specs/t.yaml", 1, 1)
    reqs = tuple(Requirement(f"r{i}", c, loc) for i, c in enumerate(checks))
    return Spec((SpecFile(Path("specs/t.yaml"), reqs),))


CHECKS: tuple[Check, ...] = (
    Absent(paths=["src/*.py"], pattern=r"print\("),
    Contains(paths=["src/*.py"], pattern=r"^def \w+", match=MatchMode.ALL),
    Defines(path="src/a.py", symbol="run", kind=SymbolKind.FUNCTION),
    Contains(path="src/gone.py", pattern="x"),
)
SPEC = spec_of(*CHECKS)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    write(tmp_path, "src/a.py", "def run():\n    return 1\n")
    write(tmp_path, "src/b.py", "def helper():\n    print('x')\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "init")
    return tmp_path


def run(root: Path, spec: Spec = SPEC, *, cache: bool = True) -> tuple[DriftReport, EngineStats]:
    stats = EngineStats()
    options = EngineOptions(result_cache=cache)
    return DriftSession(spec, root, options=options, stats=stats).report(), stats


def shape(report: DriftReport) -> list[tuple[str, str, str, tuple[object, ...]]]:
    return [(r.id, r.status.value, r.message, r.evidence) for r in report]


def stored(root: Path) -> list[Path]:
    return sorted((root / CACHE).glob("report-*.json"))


def test_a_cached_report_equals_a_fresh_one_and_reads_nothing(repo: Path) -> None:
    first, first_stats = run(repo)
    assert first_stats.reads and len(stored(repo)) == 1
    cached, stats = run(repo)
    assert (stats.reads, stats.listings, stats.passes) == ({}, 0, 0)
    fresh, _ = run(repo, cache=False)
    assert shape(cached) == shape(fresh) == shape(first)
    assert [r.status.value for r in fresh] == ["failed", "passed", "passed", "failed"]


def test_a_changed_file_misses(repo: Path) -> None:
    run(repo)
    write(repo, "src/b.py", "def helper():\n    return 'x'\n")
    report, stats = run(repo)
    assert stats.reads
    assert shape(report) == shape(run(repo, cache=False)[0])
    assert report.results[0].passed


def test_same_size_and_mtime_but_new_bytes_misses(repo: Path) -> None:
    """Stat data only decides whether to re-hash: the content decides the hit."""
    run(repo)
    path = repo / "src/b.py"
    path.write_text("def helper():\n    xrint('x')\n", encoding="utf-8")
    os.utime(path, (OLD, OLD))
    report, stats = run(repo)
    assert stats.reads
    assert report.results[0].passed


def test_a_rewrite_with_the_same_bytes_hits(repo: Path) -> None:
    run(repo)
    write(repo, "src/b.py", "def helper():\n    print('x')\n", old=False)
    _, stats = run(repo)
    assert stats.reads == {}


def test_a_new_file_in_scope_misses(repo: Path) -> None:
    run(repo)
    write(repo, "src/c.py", "print('new')\n")
    report, _ = run(repo)
    assert any(e.file == "src/c.py" for e in report.results[0].evidence)


def test_a_file_appearing_where_none_was_misses(repo: Path) -> None:
    run(repo)
    write(repo, "src/gone.py", "x = 1\n")
    report, _ = run(repo)
    assert report.results[3].passed


def test_a_changed_spec_misses(repo: Path) -> None:
    run(repo)
    changed = spec_of(*CHECKS[:2], Defines(path="src/a.py", symbol="walk"), *CHECKS[3:])
    report, stats = run(repo, changed)
    assert stats.passes == 1  # the per-file cache may answer it; the engine was asked
    assert not report.results[2].passed
    assert len(stored(repo)) == 2


def test_another_version_misses(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run(repo)
    monkeypatch.setattr(reports, "CHIMERA_VERSION", "999.0")
    _, stats = run(repo)
    assert stats.passes == 1


def test_other_engine_settings_miss(repo: Path) -> None:
    run(repo)
    stats = EngineStats()
    options = EngineOptions(result_cache=True, snippet_chars=10)
    DriftSession(SPEC, repo, options=options, stats=stats).report()
    assert stats.passes == 1


def test_commands_are_never_stored(repo: Path) -> None:
    spec = spec_of(*CHECKS, Command(run="echo run >> count.txt"))
    run(repo, spec)
    run(repo, spec)
    assert (repo / "count.txt").read_text(encoding="utf-8").count("run") == 2
    doc = json.loads(stored(repo)[0].read_text(encoding="utf-8"))
    assert sorted(doc["outcomes"]) == ["r0", "r1", "r2", "r3"]


def test_a_committed_forged_report_is_refused(repo: Path) -> None:
    run(repo)
    (path,) = stored(repo)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["outcomes"]["r0"] = ["passed", "forged", []]
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert run(repo)[0].results[0].message == "forged"  # why the cache is opt-in
    git(repo, "add", "-f", str(path.relative_to(repo)))
    git(repo, "commit", "-qm", "forged report")
    report, _ = run(repo)
    assert not report.results[0].passed
    assert report.results[0].message != "forged"


def test_the_cache_is_bounded(repo: Path) -> None:
    for n in range(reports.MAX_ENTRIES + 3):
        run(repo, spec_of(Contains(paths=["src/*.py"], pattern=f"def{n}")))
    assert len(stored(repo)) == reports.MAX_ENTRIES


def test_a_report_over_its_share_of_the_bound_is_not_stored(repo: Path) -> None:
    options = EngineOptions(result_cache=True, cache_max_bytes=reports.MAX_ENTRIES * 100)
    DriftSession(SPEC, repo, options=options).report()
    assert stored(repo) == []
    DriftSession(SPEC, repo, options=EngineOptions(result_cache=True)).report()
    assert len(stored(repo)) == 1


def test_a_damaged_report_is_only_slower(repo: Path) -> None:
    first, _ = run(repo)
    stored(repo)[0].write_text("{not json", encoding="utf-8")
    report, _ = run(repo)
    assert shape(report) == shape(first)


def test_off_without_the_result_cache(repo: Path) -> None:
    run(repo, cache=False)
    assert stored(repo) == []


def test_a_file_replaced_after_the_cache_vouched_for_it_misses(repo: Path) -> None:
    """A file the result cache vouched for by stat, replaced before the report is saved with
    its old mtime restored (``cp -p``, ``rsync -t``, ``tar x``), must not be recorded with its
    new stat: the record would then vouch for bytes no check read."""
    run(repo)
    write(repo, "src/b.py", "def helper():\n    return 'y'\n")  # the report misses ...
    session = DriftSession(SPEC, repo, options=EngineOptions(result_cache=True))
    session.prepare()
    before = [session.result(f"r{i}") for i in range(len(CHECKS))]
    assert before[2].passed  # ... src/a.py's symbol index came from the result cache
    write(repo, "src/a.py", "def ruX():\n    return 1\n")  # same size, mtime restored
    session.save()
    report, _ = run(repo)
    assert not report.results[2].passed
    assert shape(report) == shape(run(repo, cache=False)[0])


def test_an_edit_of_chimeras_own_code_misses(repo: Path) -> None:
    """An editable install's edit keeps the version: a report the old code computed (its
    messages, its evidence) must not be served, nor replayed by ``chimera check``."""
    import chimera

    run(repo)
    assert run(repo)[1].reads == {}
    module = Path(chimera.__file__).resolve().parent / "spec" / "kinds" / "text.py"
    st = module.stat()
    try:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        code_stamp.cache_clear()  # taken once per process: this is the next process
        _, stats = run(repo)
    finally:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
        code_stamp.cache_clear()
    assert stats.passes == 1
