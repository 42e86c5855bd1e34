"""Saves under one key merge (xdist workers each hold part of the outcomes), under a lock,
and never into an entry that vouches for an outcome computed against another tree."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import filelock
import pytest

from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions, EngineStats, reports
from chimera.spec.engine.reports import ReportStore, TreeRecord, combine
from chimera.spec.kinds import Absent, Contains, Defines
from chimera.spec.kinds.defines import SymbolKind
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Requirement, SourceLocation, Spec, SpecFile
from chimera.spec.results import DriftReport

CACHE = Path(".chimera/cache")
OLD = 1_600_000_000  # an mtime far from now: stat data is trusted (not "racy")
LOC = SourceLocation("specs/t.yaml", 1, 1)
SPEC = Spec(
    (
        SpecFile(
            Path("specs/t.yaml"),
            (
                Requirement("r0", Absent(paths=["src/*.py"], pattern=r"print\("), LOC),
                Requirement(
                    "r1",
                    Contains(paths=["src/*.py"], pattern=r"^def \w+", match=MatchMode.ALL),
                    LOC,
                ),
                Requirement(
                    "r2", Defines(path="src/a.py", symbol="run", kind=SymbolKind.FUNCTION), LOC
                ),
                Requirement("r3", Contains(path="src/gone.py", pattern="x"), LOC),
            ),
        ),
    )
)
FIRST, SECOND = ["r0", "r1"], ["r2", "r3"]


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (OLD, OLD))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    write(tmp_path, "src/a.py", "def run():\n    return 1\n")
    write(tmp_path, "src/b.py", "def helper():\n    print('x')\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "init")
    return tmp_path


def run(root: Path, *, cache: bool = True) -> tuple[DriftReport, EngineStats]:
    stats = EngineStats()
    options = EngineOptions(result_cache=cache)
    return DriftSession(SPEC, root, options=options, stats=stats).report(), stats


def shape(report: DriftReport) -> list[tuple[str, str, str, tuple[object, ...]]]:
    return [(r.id, r.status.value, r.message, r.evidence) for r in report]


def stored(root: Path) -> list[Path]:
    return sorted((root / CACHE).glob("report-*.json"))


def session(root: Path) -> DriftSession:
    return DriftSession(SPEC, root, options=EngineOptions(result_cache=True))


def evaluated(drift: DriftSession, ids: list[str]) -> DriftSession:
    drift.prepare(ids)
    for rid in ids:
        drift.result(rid)
    return drift


def file_record(root: Path, rel: str, *, taken: float = 2e9) -> TreeRecord:
    real = str((root / rel).resolve())
    st = reports.stat_of(real)
    assert st is not None
    known = reports.digest((root / rel).read_bytes())
    return TreeRecord(taken=taken, files={real: [*st, known]})


def test_two_sessions_saving_parts_of_one_spec_leave_one_whole_entry(repo: Path) -> None:
    # Both load the (empty) cache before either saves, as two xdist workers do.
    one = evaluated(session(repo), FIRST)
    two = evaluated(session(repo), SECOND)
    one.save()
    two.save()
    assert len(stored(repo)) == 1
    report, stats = run(repo)
    assert (stats.reads, stats.listings, stats.passes) == ({}, 0, 0)  # every one a hit
    assert shape(report) == shape(run(repo, cache=False)[0])


def test_concurrent_savers_all_land(repo: Path) -> None:
    store = ReportStore(str(repo.resolve()), max_bytes=1 << 24)
    record = file_record(repo, "src/a.py")
    start = threading.Barrier(8)

    def save(i: int) -> None:
        start.wait()
        store.save("k" * 40, {f"r{i}": ["passed", "", []]}, record, options=EngineOptions())

    threads = [threading.Thread(target=save, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = store.load("k" * 40)
    assert found is not None
    assert sorted(found[0]) == [f"r{i}" for i in range(8)]


def test_conflicting_records_keep_only_the_newer(repo: Path) -> None:
    store = ReportStore(str(repo.resolve()), max_bytes=1 << 24)
    old = file_record(repo, "src/b.py")
    write(repo, "src/b.py", "def helper():\n    return 'x'\n")
    new = file_record(repo, "src/b.py")
    assert old.conflicts(new) and new.conflicts(old)
    store.save("k" * 40, {"r0": ["failed", "stale", []]}, old)
    store.save("k" * 40, {"r1": ["passed", "", []]}, new)
    found = store.load("k" * 40)
    assert found is not None
    assert list(found[0]) == ["r1"]
    assert found[1].files == new.files


def test_a_merge_keeps_the_earlier_start_and_both_records(repo: Path) -> None:
    a = file_record(repo, "src/a.py", taken=100.0)
    b = file_record(repo, "src/b.py", taken=50.0)
    outcomes, record = combine(({"r0": 1}, a), ({"r1": 2}, b))
    assert outcomes == {"r0": 1, "r1": 2}
    assert record.taken == 50.0  # the racy horizon of the earlier run
    assert record.files == {**a.files, **b.files}
    assert record.covers(a) and record.covers(b) and not a.covers(record)
    assert not a.conflicts(b)


def test_an_edit_between_two_workers_gives_no_stale_hit(repo: Path) -> None:
    """Worker one reads src/b.py, the file is edited, worker two reads the new bytes:
    whichever saves last, the next run serves nothing computed against the old bytes."""
    for order in (0, 1):
        write(repo, "src/b.py", "def helper():\n    print('x')\n")
        for entry in stored(repo):
            entry.unlink()
        one = evaluated(session(repo), FIRST)  # r0: a print( in src/b.py (red)
        write(repo, "src/b.py", "def helper():\n    return 'x'\n")
        two = evaluated(session(repo), SECOND)
        for saver in (one, two) if order == 0 else (two, one):
            saver.save()
        report, _ = run(repo)
        assert shape(report) == shape(run(repo, cache=False)[0])
        assert report.results[0].passed


def test_hits_validated_before_an_edit_are_not_stored_with_fresh_outcomes(repo: Path) -> None:
    """A session's hits and its fresh outcomes read the tree at different times: an edit
    between them must not let the fresh record vouch for the hits."""
    evaluated(session(repo), ["r0"]).save()  # stored: r0 red, read against print('x')
    drift = session(repo)
    drift.prepare(["r0"])
    assert not drift.result("r0").passed  # a hit
    assert drift.stats.reads == {}
    write(repo, "src/b.py", "def helper():\n    return 'x'\n")
    drift.prepare(["r1"])
    drift.result("r1")  # reads the new src/b.py
    drift.save()
    assert drift.tree_record() is None  # the hit is no longer vouched for
    report, _ = run(repo)
    assert report.results[0].passed
    assert shape(report) == shape(run(repo, cache=False)[0])


def test_a_held_lock_times_out_and_stores_nothing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reports, "LOCK_TIMEOUT_S", 0.05)
    (repo / CACHE).mkdir(parents=True)
    store = ReportStore(str(repo.resolve()), max_bytes=1 << 24)
    with filelock.FileLock(str(repo / CACHE / reports.LOCK_NAME)):
        done = threading.Event()

        def save() -> None:
            store.save("k" * 40, {"r0": ["passed", "", []]}, file_record(repo, "src/a.py"))
            done.set()

        thread = threading.Thread(target=save)
        thread.start()
        assert done.wait(5)
        thread.join()
    assert stored(repo) == []


def test_a_worker_vouched_by_the_result_cache_merges_with_one_that_read(repo: Path) -> None:
    """The flaky ``-n 2`` merge: two requirements share one check (same pattern, same
    files) and land on different workers. The first reads the files (its record holds their
    digests) and saves the result cache; the second finds the check's results there (its
    record holds stat data only). Both describe the same bytes, so the saves merge instead of
    the newer entry replacing the older one's outcomes."""
    twin = Absent(paths=["src/*.py"], pattern=r"print\(")
    spec = Spec(
        (
            SpecFile(
                Path("specs/t.yaml"), (Requirement("a", twin, LOC), Requirement("b", twin, LOC))
            ),
        )
    )

    def drift() -> DriftSession:
        return DriftSession(spec, repo, options=EngineOptions(result_cache=True))

    one = evaluated(drift(), ["a"])
    assert one.stats.reads  # read: the record holds digests
    one.save()
    two = evaluated(drift(), ["b"])
    assert two.stats.reads == {}  # vouched by the result cache: stat data only
    two.save()
    store = two._store
    assert store is not None
    entry = store.load(two._key)
    assert entry is not None
    assert sorted(entry[0]) == ["a", "b"]
    assert all(value[4] is not None for value in entry[1].files.values())  # digests kept
    again = evaluated(drift(), ["a", "b"])
    assert (again.stats.reads, again.stats.passes) == ({}, 0)


def test_a_digest_and_a_stat_only_record_of_one_file_are_compatible(repo: Path) -> None:
    read = file_record(repo, "src/a.py", taken=100.0)
    ((real, value),) = read.files.items()
    vouched = TreeRecord(taken=50.0, files={real: [*value[:4], None]})
    assert not read.conflicts(vouched) and not vouched.conflicts(read)
    for older, newer in ((read, vouched), (vouched, read)):
        outcomes, record = combine(({"r0": 1}, older), ({"r1": 2}, newer))
        assert outcomes == {"r0": 1, "r1": 2}
        assert record.files == read.files  # the digest is kept, whichever saved last
    assert read.covers(vouched)
    moved = TreeRecord(taken=50.0, files={real: [value[0] + 1, *value[1:4], None]})
    other = TreeRecord(taken=50.0, files={real: [*value[:4], "0" * 40]})
    assert read.conflicts(moved) and read.conflicts(other)


SAVER = """
import sys
from chimera.spec.engine import EngineOptions, reports
from chimera.spec.engine.reports import ReportStore, TreeRecord

root, worker, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
files = {}
for real in sys.argv[4:]:
    st = reports.stat_of(real)
    with open(real, "rb") as handle:
        known = reports.digest(handle.read())
    # Half the workers read the files, half were vouched for by the result cache.
    files[real] = [*st, known if worker % 2 else None]
store = ReportStore(root, max_bytes=1 << 24)
for i in range(rounds):
    record = TreeRecord(taken=1e9 + worker, files=dict(files))
    store.save("k" * 40, {f"w{worker}-{i}": ["passed", "", []]}, record, options=EngineOptions())
"""


@pytest.mark.slow
def test_stress_concurrent_workers_with_and_without_digests_lose_nothing(repo: Path) -> None:
    """Processes saving at once, as xdist workers do, half with digests and half vouched by
    stat: every outcome of every round lands in the one entry."""
    import sys

    root = str(repo.resolve())
    reals = [str((repo / rel).resolve()) for rel in ("src/a.py", "src/b.py")]
    workers, rounds = 6, 10
    procs = [
        subprocess.Popen([sys.executable, "-c", SAVER, root, str(w), str(rounds), *reals])
        for w in range(workers)
    ]
    assert [proc.wait(timeout=120) for proc in procs] == [0] * workers
    found = ReportStore(root, max_bytes=1 << 24).load("k" * 40)
    assert found is not None
    assert sorted(found[0]) == sorted(f"w{w}-{i}" for w in range(workers) for i in range(rounds))
    assert all(value[4] is not None for value in found[1].files.values())
