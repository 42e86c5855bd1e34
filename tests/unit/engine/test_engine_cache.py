"""The result cache: warm runs read nothing, changes are seen, forged entries are refused."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions, EngineStats
from chimera.spec.kinds import Absent, Contains, Defines
from chimera.spec.kinds.defines import SymbolKind
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Check, Requirement, SourceLocation, Spec, SpecFile, Status

CACHE = Path(".chimera/cache/results.json")
OLD = 1_600_000_000  # an mtime far from now: stat data is trusted (not "racy")


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


def spec_of(*checks: Check) -> Spec:
    loc = SourceLocation("specs/t.yaml", 1, 1)
    reqs = tuple(Requirement(f"r{i}", c, loc) for i, c in enumerate(checks))
    return Spec((SpecFile(Path("specs/t.yaml"), reqs),))


SPEC = spec_of(
    Absent(paths=["src/*.py"], pattern=r"print\("),
    Contains(paths=["src/*.py"], pattern=r"^def \w+", match=MatchMode.ALL),
    Defines(path="src/a.py", symbol="run", kind=SymbolKind.FUNCTION),
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    write(tmp_path, "src/a.py", "def run():\n    return 1\n")
    write(tmp_path, "src/b.py", "def helper():\n    print('x')\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "init")
    return tmp_path


def check(root: Path, *, cache: bool = True) -> tuple[list[tuple[Status, str]], EngineStats]:
    stats = EngineStats()
    options = EngineOptions(result_cache=cache)
    report = DriftSession(SPEC, root, options=options, stats=stats).report()
    return [(r.status, r.message) for r in report], stats


def test_a_warm_run_reads_no_file_and_agrees(repo: Path) -> None:
    cold, cold_stats = check(repo)
    assert len(cold_stats.reads) == 2
    assert (repo / CACHE).is_file()
    warm, warm_stats = check(repo)
    assert warm == cold
    assert warm_stats.reads == {}
    assert warm_stats.parses == {}
    assert cold[0][0] is Status.FAILED  # b.py prints


def test_a_changed_file_is_read_again(repo: Path) -> None:
    check(repo)
    write(repo, "src/b.py", "def helper():\n    return 'x'\n")
    results, stats = check(repo)
    assert [Path(p).name for p in stats.reads] == ["b.py"]
    assert results[0][0] is Status.PASSED


def test_a_racy_stat_is_not_trusted(repo: Path) -> None:
    """Same size and mtime, other content, written right after the cache recorded it."""
    path = repo / "src" / "b.py"
    path.write_text("def helper():\n    print('x')\n", encoding="utf-8")
    check(repo)
    st = path.stat()
    path.write_text("def helper():\n    printx'x')\n", encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    results, stats = check(repo)
    assert results[0][0] is Status.PASSED
    assert [Path(p).name for p in stats.reads] == ["b.py"]


def _drop_reports(root: Path) -> None:
    """Remove the whole-report cache, so the next run exercises this per-file cache."""
    for report in (root / CACHE.parent).glob("report-*.json"):
        report.unlink()


def _forge(root: Path) -> None:
    """Rewrite every stored search as 'no match'."""
    _drop_reports(root)
    doc = json.loads((root / CACHE).read_text(encoding="utf-8"))
    for _used, _plans, hits, _index in doc["entries"].values():
        hits.clear()  # a search without a stored hit found nothing, for every plan it ran in
    (root / CACHE).write_text(json.dumps(doc), encoding="utf-8")


def test_an_untracked_forged_entry_is_believed(repo: Path) -> None:
    """Why the cache is opt-in: whoever writes it decides the verdict (this is the threat
    the next test closes for committed entries)."""
    check(repo)
    _forge(repo)
    results, _ = check(repo)
    assert results[0][0] is Status.PASSED


def test_a_committed_forged_entry_turns_the_cache_off(repo: Path) -> None:
    check(repo)
    _forge(repo)
    git(repo, "add", "-f", str(CACHE))
    git(repo, "commit", "-qm", "forged cache")
    stats = EngineStats()
    session = DriftSession(SPEC, repo, options=EngineOptions(result_cache=True), stats=stats)
    report = session.report()
    assert report.results[0].status is Status.FAILED
    assert session.engine.result_cache is None
    assert session.engine.cache_refusal is not None
    assert ".chimera" in session.engine.cache_refusal
    assert len(stats.reads) == 2


def test_a_committed_cache_directory_in_another_case_turns_the_cache_off(repo: Path) -> None:
    """On a case-insensitive file system (macOS, Windows) a committed ``.Chimera/cache/`` is
    the directory read as ``.chimera/cache/``; ``git ls-files .chimera`` alone missed it."""
    from chimera.spec.engine.cache import cache_refusal

    forged = repo / ".Chimera" / "cache" / "results.json"
    forged.parent.mkdir(parents=True)
    forged.write_text("{}", encoding="utf-8")
    git(repo, "add", "-f", ".Chimera")
    git(repo, "commit", "-qm", "forged cache in another case")
    assert ".Chimera/cache/results.json" in (cache_refusal(str(repo)) or "")
    session = DriftSession(SPEC, repo, options=EngineOptions(result_cache=True))
    assert session.engine.result_cache is None
    assert session.engine.cache_refusal is not None


def test_a_file_replaced_between_its_read_and_remember_is_not_keyed_by_the_new_stat(
    repo: Path,
) -> None:
    """Bytes hashed, then replaced with the old mtime kept (``cp -p``), must not be stored
    under the replacement's stat data: the next run would believe the old bytes' results."""
    from chimera.spec.engine.cache import ResultCache, content_key
    from chimera.spec.engine.reports import digest

    path = repo / "src" / "a.py"
    real = str(path.resolve())
    cache = ResultCache(str(repo.resolve()), max_bytes=1 << 20)
    assert cache.known(real, "py") is None  # before the read
    old_key = content_key(digest(path.read_bytes()), "py")  # the read
    path.write_text("x = 'a new body'\n", encoding="utf-8")  # replaced ...
    os.utime(path, (OLD, OLD))  # ... with its old mtime kept
    cache.remember(real, "py", old_key)
    cache.store(old_key, cache.plan_of(frozenset({"check"})), {})
    cache.save()
    again = ResultCache(str(repo.resolve()), max_bytes=1 << 20)
    assert again.known(real, "py") is None


def test_the_cache_is_off_by_default(repo: Path) -> None:
    """Autonomous runs and the Action's steps use the default options: no cache."""
    check(repo, cache=False)
    assert not (repo / ".chimera").exists()


def test_the_cache_is_bounded(repo: Path) -> None:
    for i in range(40):
        write(repo, f"src/m{i}.py", f"def f{i}():\n    print({i})\n" * 20)
    options = EngineOptions(result_cache=True, cache_max_bytes=4000)
    DriftSession(SPEC, repo, options=options).report()
    size = (repo / CACHE).stat().st_size
    assert 0 < size <= 4000
    # Still correct with a partial cache.
    report = DriftSession(SPEC, repo, options=options).report()
    assert report.results[0].status is Status.FAILED


def test_a_damaged_cache_is_only_slower(repo: Path) -> None:
    cold, _ = check(repo)
    _drop_reports(repo)
    (repo / CACHE).write_text("{not json", encoding="utf-8")
    again, stats = check(repo)
    assert again == cold
    assert len(stats.reads) == 2


@pytest.mark.parametrize("how", ["archive", "git-refuses"])
def test_a_tree_git_cannot_list_never_uses_the_cache(
    repo: Path, tmp_path_factory: pytest.TempPathFactory, how: str
) -> None:
    """A forged cache file that came with the tree (an extracted archive, or a clone git
    refuses as "dubious ownership") is never read: the cache needs git to vouch for the tree."""
    check(repo)
    _forge(repo)
    if how == "archive":
        tree = tmp_path_factory.mktemp("extracted")  # outside any repository
        for path in repo.rglob("*"):
            rel = path.relative_to(repo)
            if path.is_file() and rel.parts[0] != ".git":
                (tree / rel).parent.mkdir(parents=True, exist_ok=True)
                (tree / rel).write_bytes(path.read_bytes())
    else:
        tree = repo
        (repo / ".git" / "HEAD").write_text("not a ref\n")  # git now refuses this tree
    session = DriftSession(SPEC, tree, options=EngineOptions(result_cache=True))
    assert session.report().results[0].status is not Status.PASSED
    assert session.engine.result_cache is None
    assert session.engine.cache_refusal is not None


# ------------------------------------------------------- the root must be tracked content


def _unpack(src: Path, dest: Path) -> None:
    """Copy ``src``'s working files (its forged cache too, not its .git): an extracted archive."""
    for path in src.rglob("*"):
        rel = path.relative_to(src)
        if path.is_file() and rel.parts[0] != ".git":
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(path.read_bytes())


@pytest.fixture
def outer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with one committed file and an ignored ``vendor/``."""
    root = tmp_path_factory.mktemp("outer")
    write(root, "README.md", "outer\n")
    write(root, ".gitignore", "vendor/\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "outer")
    return root


@pytest.mark.parametrize("folder", ["third-party", "vendor/lib", "new/deeper/lib"])
def test_an_archive_in_an_untracked_or_ignored_folder_brings_no_believed_cache(
    repo: Path, outer: Path, folder: str
) -> None:
    """``tar xf third-party.tgz; chimera check --root third-party/``: the archive's own
    forged results.json is refused, whether the folder is untracked, ignored or below an
    untracked folder."""
    check(repo)
    _forge(repo)
    tree = outer / folder
    _unpack(repo, tree)
    session = DriftSession(SPEC, tree, options=EngineOptions(result_cache=True))
    # red either way: FAILED (b.py prints), or ERROR where git's listing skips ignored files
    assert session.report().results[0].status in (Status.FAILED, Status.ERROR)
    assert session.engine.result_cache is None
    assert "tracks nothing" in (session.engine.cache_refusal or "")


def test_the_forged_archive_is_believed_once_its_folder_is_tracked(repo: Path, outer: Path) -> None:
    """The control of the test above: the forgery is live, the refusal is what stops it."""
    check(repo)
    _forge(repo)
    tree = outer / "third-party"
    _unpack(repo, tree)
    git(outer, "add", "third-party/src")
    results, stats = check(tree)
    assert results[0][0] is Status.PASSED
    assert stats.reads != {}  # re-hashed (new stat data), then the forged results believed


@pytest.mark.parametrize("where", ["top", "subdirs-only", "nested-project"])
def test_a_tracked_root_uses_the_cache(outer: Path, where: str) -> None:
    """The repository's top, a folder whose only tracked files are in subdirectories, and a
    nested project folder with files of its own: a warm run reads nothing."""
    root = {"top": outer, "subdirs-only": outer / "pkgs", "nested-project": outer / "proj"}[where]
    write(root, "src/a.py", "def run():\n    return 1\n")
    write(root, "src/b.py", "def helper():\n    print('x')\n")
    if where == "nested-project":
        write(root, "pyproject.toml", "[project]\nname = 'p'\n")
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "project")
    cold, cold_stats = check(root)
    assert len(cold_stats.reads) == 2
    _drop_reports(root)  # the per-file result cache, not the whole-report one, answers
    warm, warm_stats = check(root)
    assert warm == cold
    assert warm_stats.reads == {}


def test_a_repository_that_tracks_nothing_is_refused(tmp_path: Path) -> None:
    from chimera.spec.engine.cache import cache_refusal

    write(tmp_path, "src/a.py", "def run():\n    return 1\n")
    git(tmp_path, "init", "-q")
    assert "tracks nothing" in (cache_refusal(str(tmp_path)) or "")
    git(tmp_path, "add", "-A")  # staged is enough: git's index vouches, not a commit
    assert cache_refusal(str(tmp_path)) is None
