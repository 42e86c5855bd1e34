"""WorkspaceGuard on real git repositories (and a plain folder) in temporary directories."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from chimera.core.workspace import WorkspaceGuard
from chimera.errors import WorkspaceError

State = dict[str, tuple[str, bool, bytes]]


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def tree_state(root: Path) -> State:
    """Every entry except .git/ and the top .chimera/: kind, executable bit, bytes/target."""
    state: State = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [
            d for d in dirnames if d != ".git" and not (here == root and d == ".chimera")
        ]
        for name in dirnames:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                state[rel] = ("link", False, str(path.readlink()).encode())
            else:
                state[rel] = ("dir", False, b"")
        for name in filenames:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                state[rel] = ("link", False, str(path.readlink()).encode())
            else:
                mode = path.lstat().st_mode
                state[rel] = ("file", bool(mode & stat.S_IXUSR), path.read_bytes())
    return state


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    files = {
        "README.md": "# Project\n",
        "src/app.py": "def f():\n    return 1\n",
        "src/pkg/mod.py": "A = 1\nB = 2\nC = 3\n",
        "src/pkg/old_name.py": "".join(f"LINE_{i} = {i}\n" for i in range(30)),
        "bin/tool.sh": "#!/bin/sh\necho tool\n",
        ".gitignore": "*.log\nbuild/\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "bin" / "tool.sh").chmod(0o755)
    (root / "data").mkdir()
    (root / "data" / "image.bin").write_bytes(bytes(range(256)) * 4)
    (root / "link.py").symlink_to("src/app.py")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    # Uncommitted state the snapshot must keep: a local edit, untracked and ignored files,
    # empty folders.
    (root / "src" / "app.py").write_text("def f():\n    return 2\n")
    (root / "notes.txt").write_text("untracked\n")
    (root / "debug.log").write_text("ignored\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\x7fELF\x00\x00")
    (root / "empty").mkdir()
    (root / "deep" / "er" / "est").mkdir(parents=True)
    return root


@pytest.fixture
def guard(repo: Path) -> WorkspaceGuard:
    return WorkspaceGuard(repo, repo / ".chimera" / "runs" / "r1" / "snapshots")


def scramble(root: Path) -> None:
    """An attempt that does every kind of damage."""
    (root / "README.md").write_text("# Rewritten\n")
    with (root / "src" / "pkg" / "mod.py").open("r+b") as handle:  # in place, same size
        handle.write(b"X")
    (root / "src" / "app.py").unlink()
    (root / "src" / "pkg" / "old_name.py").rename(root / "src" / "pkg" / "new_name.py")
    (root / "data" / "image.bin").write_bytes(b"\x00\xff" * 100)
    (root / "bin" / "tool.sh").chmod(0o644)
    (root / "README.md").chmod(0o755)
    (root / "new" / "nested" / "dirs").mkdir(parents=True)
    (root / "new" / "nested" / "dirs" / "file.py").write_text("NEW = 1\n")
    (root / "created.txt").write_text("created\n")
    (root / "notes.txt").unlink()
    (root / "debug.log").write_text("changed ignored file\n")
    (root / "build" / "new.o").write_bytes(b"\x00")
    (root / "empty").rmdir()
    (root / "deep" / "er" / "est" / "filled.txt").write_text("x")
    (root / "newly_empty").mkdir()
    (root / "link.py").unlink()
    (root / "link.py").symlink_to("README.md")
    (root / "bin" / "tool.sh").unlink()
    (root / "bin" / "tool.sh").mkdir()  # a file became a folder
    (root / "bin" / "tool.sh" / "inner").write_text("x")
    (root / "src" / "pkg2").write_text("a file where no folder was\n")


def test_restore_undoes_every_kind_of_change(repo: Path, guard: WorkspaceGuard) -> None:
    before = tree_state(repo)
    snap = guard.snapshot("attempt-1")
    assert snap.seed == "repo-index"
    scramble(repo)
    assert tree_state(repo) != before
    guard.restore(snap)
    assert tree_state(repo) == before
    guard.restore(snap)  # idempotent: a crash mid-restore is finished by running it again
    assert tree_state(repo) == before


def test_restore_twice_in_a_run(repo: Path, guard: WorkspaceGuard) -> None:
    before = tree_state(repo)
    first = guard.snapshot("attempt-1")
    scramble(repo)
    guard.restore(first)
    second = guard.snapshot("attempt-2")
    assert second.seed == "snapshot"
    (repo / "README.md").write_text("attempt two\n")
    (repo / "folder_then_file").write_text("x")
    guard.restore(second)
    assert tree_state(repo) == before


def test_directory_replaced_by_file_and_back(repo: Path, guard: WorkspaceGuard) -> None:
    before = tree_state(repo)
    snap = guard.snapshot()
    subprocess.run(["rm", "-rf", str(repo / "src" / "pkg")], check=True)
    (repo / "src" / "pkg").write_text("now a file\n")
    (repo / "deep").rename(repo / "deep_moved")
    guard.restore(snap)
    assert tree_state(repo) == before


def test_diff_is_the_real_unified_diff(repo: Path, guard: WorkspaceGuard) -> None:
    snap = guard.snapshot()
    assert guard.diff(snap).is_empty
    (repo / "src" / "pkg" / "mod.py").write_text("A = 1\nB = 20\nC = 3\n")
    (repo / "added.py").write_text("one\ntwo\nthree\n")
    (repo / "README.md").unlink()
    (repo / "src" / "pkg" / "old_name.py").rename(repo / "src" / "pkg" / "new_name.py")
    (repo / "data" / "image.bin").write_bytes(b"\x00\x01" * 64)
    (repo / "debug.log").write_text("ignored files count too\n")
    diff = guard.diff(snap)
    by_path = {f.path: f for f in diff.files}
    assert by_path["src/pkg/mod.py"].status == "modified"
    assert (by_path["src/pkg/mod.py"].added, by_path["src/pkg/mod.py"].removed) == (1, 1)
    assert by_path["added.py"].status == "added"
    assert by_path["added.py"].added == 3
    assert by_path["README.md"].status == "removed"
    assert by_path["src/pkg/new_name.py"].status == "renamed"
    assert by_path["src/pkg/new_name.py"].source == "src/pkg/old_name.py"
    assert by_path["data/image.bin"].binary
    assert "debug.log" not in by_path  # ignored by the project: not part of a PR
    assert diff.omitted == ("debug.log",)
    assert diff.files_changed == 5
    assert diff.added == 1 + 3
    assert diff.removed == 1 + 1
    assert "rename from src/pkg/old_name.py" in diff.text
    assert "Binary files a/data/image.bin and b/data/image.bin differ" in diff.text
    assert "-B = 2\n+B = 20\n" in diff.text
    assert diff.summary() == "5 files changed, +4 -2"
    everything = guard.diff(snap, include_ignored=True)
    assert everything.files_changed == 6
    assert "debug.log" in {f.path for f in everything.files}
    assert everything.omitted == ()
    assert not diff.is_empty
    # Taking a diff changes nothing on disk, and the snapshot still restores.
    assert (repo / "added.py").exists()
    guard.restore(snap)
    assert guard.diff(snap).is_empty


def test_mode_change_shows_in_the_diff(repo: Path, guard: WorkspaceGuard) -> None:
    snap = guard.snapshot()
    (repo / "README.md").chmod(0o755)
    diff = guard.diff(snap)
    assert "old mode 100644\nnew mode 100755" in diff.text
    assert not diff.is_empty


def test_load_after_a_crash_and_restore_with_a_new_guard(repo: Path, guard: WorkspaceGuard) -> None:
    before = tree_state(repo)
    snap = guard.snapshot("attempt-3")
    scramble(repo)
    store = guard.store
    del guard  # the process died here
    loaded = WorkspaceGuard.load(store, snap.id)
    assert loaded == snap
    WorkspaceGuard(loaded.root, store).restore(loaded)
    assert tree_state(repo) == before


def test_discard_and_unknown_snapshots(repo: Path, guard: WorkspaceGuard) -> None:
    snap = guard.snapshot()
    guard.discard(snap)
    with pytest.raises(WorkspaceError, match=f"no snapshot '{snap.id}'"):
        WorkspaceGuard.load(guard.store, snap.id)
    with pytest.raises(WorkspaceError, match="missing"):
        guard.restore(snap)
    (guard.store / "broken.json").write_text("{not json")
    with pytest.raises(WorkspaceError, match="unreadable"):
        WorkspaceGuard.load(guard.store, "broken")


def test_a_snapshot_of_another_tree_is_refused(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    snap = WorkspaceGuard(other, tmp_path / "store-a").snapshot()
    with pytest.raises(WorkspaceError, match="not this workspace"):
        WorkspaceGuard(repo, tmp_path / "store-b").restore(snap)


def test_run_folder_is_never_recorded_or_reverted(repo: Path, guard: WorkspaceGuard) -> None:
    audit = repo / ".chimera" / "runs" / "r1" / "audit.jsonl"
    audit.parent.mkdir(parents=True, exist_ok=True)
    audit.write_text('{"seq": 1}\n')
    snap = guard.snapshot()
    with audit.open("a") as handle:
        handle.write('{"seq": 2}\n')
    (repo / "README.md").write_text("changed\n")
    assert [f.path for f in guard.diff(snap).files] == ["README.md"]
    guard.restore(snap)
    assert audit.read_text() == '{"seq": 1}\n{"seq": 2}\n'
    assert (guard.store / f"{snap.id}.json").exists()


def test_store_inside_the_tree_but_outside_chimera_is_excluded(repo: Path) -> None:
    guard = WorkspaceGuard(repo, repo / "snapshots-here")
    before = tree_state(repo)
    snap = guard.snapshot()
    (repo / "README.md").write_text("changed\n")
    guard.restore(snap)
    after = tree_state(repo)
    assert {k: v for k, v in after.items() if not k.startswith("snapshots-here")} == before


def test_bytes_copied_grow_with_the_changed_files_not_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    git(root, "init", "-q")
    for i in range(300):
        (root / f"f{i:03d}.txt").write_text(f"{i}\n" * 3000)  # ~1.2 MB in all
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "big")
    (root / "f001.txt").write_text("changed\n")
    (root / "fresh.txt").write_text("new file\n")
    guard = WorkspaceGuard(root, tmp_path / "store")
    guard.snapshot()
    objects = guard.store / "git" / "objects"
    stored = [p for p in objects.rglob("*") if p.is_file() and p.parent.name != "info"]
    assert len(stored) == 2, stored  # the two blobs git did not already have
    assert sum(p.stat().st_size for p in stored) < 1000
    (root / "f002.txt").write_text("changed too\n")
    guard.snapshot()
    stored = [p for p in objects.rglob("*") if p.is_file() and p.parent.name != "info"]
    assert len(stored) == 3


def test_plain_folder_without_git(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "c.txt").write_text("c\n")
    (root / "bin.dat").write_bytes(b"\x00\x01")
    (root / ".gitignore").write_text("*.dat\n")
    before = tree_state(root)
    guard = WorkspaceGuard(root, tmp_path / "store")
    snap = guard.snapshot()
    assert snap.seed == "none"
    (root / "a" / "b" / "c.txt").write_text("changed\n")
    (root / "bin.dat").unlink()
    (root / "z.txt").write_text("z\n")
    diff = guard.diff(snap)
    assert sorted(f.path for f in diff.files) == ["a/b/c.txt", "z.txt"]
    assert diff.omitted == ("bin.dat",)  # *.dat is ignored, restored all the same
    assert guard.diff(snap, include_ignored=True).files_changed == 3
    guard.restore(snap)
    assert tree_state(root) == before


def test_subfolder_of_a_repository(repo: Path, tmp_path: Path) -> None:
    root = repo / "src"
    before = tree_state(root)
    guard = WorkspaceGuard(root, tmp_path / "store")
    snap = guard.snapshot()
    assert snap.seed == "none"
    (root / "app.py").write_text("broken\n")
    guard.restore(snap)
    assert tree_state(root) == before


def test_content_conversions_do_not_alter_restored_bytes(tmp_path: Path) -> None:
    root = tmp_path / "crlf"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".gitattributes").write_text("*.txt text eol=crlf\n")
    (root / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "crlf")
    (root / "lf.txt").write_bytes(b"raw\nlf\n")
    before = tree_state(root)
    guard = WorkspaceGuard(root, tmp_path / "store")
    snap = guard.snapshot()
    assert snap.seed == "none"  # the repository index stores converted blobs
    (root / "win.txt").write_bytes(b"changed\n")
    (root / "lf.txt").write_bytes(b"changed\r\n")
    guard.restore(snap)
    assert tree_state(root) == before
    assert (root / "win.txt").read_bytes() == b"one\r\ntwo\r\n"


def test_assume_unchanged_entries_are_not_trusted(repo: Path, tmp_path: Path) -> None:
    git(repo, "update-index", "--assume-unchanged", "README.md")
    (repo / "README.md").write_text("# Edited while git looks away\n")
    before = tree_state(repo)
    guard = WorkspaceGuard(repo, tmp_path / "store")
    snap = guard.snapshot()
    assert snap.seed == "none"
    (repo / "README.md").write_text("attempt\n")
    guard.restore(snap)
    assert tree_state(repo) == before


def test_git_is_required(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    with pytest.raises(WorkspaceError, match="needs the git executable"):
        WorkspaceGuard(repo, tmp_path / "store")


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="not a directory"):
        WorkspaceGuard(tmp_path / "missing", tmp_path / "store")


def test_git_failures_are_one_line_workspace_errors(repo: Path, tmp_path: Path) -> None:
    # A broken snapshot store (a HEAD git cannot read) makes git add fail. (A nested
    # repository without a commit no longer does: see test_workspace_nested_repo.py.)
    guard = WorkspaceGuard(repo, tmp_path / "store")
    guard.snapshot()
    (tmp_path / "store" / "git" / "HEAD").write_text("garbage\n", encoding="utf-8")
    with pytest.raises(WorkspaceError) as info:
        guard.snapshot()
    message = str(info.value)
    assert message.startswith("git add failed in ")
    assert "\n" not in message


def test_autocrlf_in_the_repository_config_disables_seeding(repo: Path, tmp_path: Path) -> None:
    git(repo, "config", "core.autocrlf", "input")
    snap = WorkspaceGuard(repo, tmp_path / "store").snapshot()
    assert snap.seed == "none"


def test_unwritable_folders_made_by_an_attempt_are_removed(
    repo: Path, guard: WorkspaceGuard
) -> None:
    before = tree_state(repo)
    snap = guard.snapshot()
    locked = repo / "locked" / "inner"
    locked.mkdir(parents=True)
    (locked / "f.txt").write_text("x")
    locked.chmod(0o500)
    (repo / "locked").chmod(0o500)
    guard.restore(snap)
    assert tree_state(repo) == before


def test_running_tests_alone_leaves_an_empty_diff(repo: Path, guard: WorkspaceGuard) -> None:
    (repo / ".gitignore").write_text("*.log\nbuild/\n__pycache__/\n.pytest_cache/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore caches")
    (repo / ".git" / "info" / "exclude").write_text("local-only.txt\n")
    guard = WorkspaceGuard(repo, repo / ".chimera" / "runs" / "r2" / "snapshots")
    before = tree_state(repo)
    snap = guard.snapshot()
    (repo / "src" / "__pycache__").mkdir()
    (repo / "src" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\x00pyc")
    (repo / ".pytest_cache").mkdir()
    (repo / ".pytest_cache" / "README.md").write_text("cache\n")
    (repo / "local-only.txt").write_text("excluded by .git/info/exclude\n")
    diff = guard.diff(snap)
    assert diff.is_empty
    assert set(diff.omitted) == {
        "src/__pycache__/app.cpython-311.pyc",
        ".pytest_cache/README.md",
        "local-only.txt",
    }
    guard.restore(snap)
    assert tree_state(repo) == before


def test_tracked_files_matching_ignore_rules_still_count(repo: Path, guard: WorkspaceGuard) -> None:
    (repo / "keep.log").write_text("tracked on purpose\n")
    git(repo, "add", "-f", "keep.log")
    git(repo, "commit", "-q", "-m", "force-added log")
    snap = guard.snapshot()
    (repo / "keep.log").write_text("edited\n")
    diff = guard.diff(snap)
    assert [f.path for f in diff.files] == ["keep.log"]
    assert diff.omitted == ()


def test_tracked_run_folder_is_still_excluded(repo: Path, tmp_path: Path) -> None:
    (repo / ".chimera").mkdir()
    (repo / ".chimera" / "notes.md").write_text("committed by mistake\n")
    git(repo, "add", "-f", ".chimera/notes.md")
    git(repo, "commit", "-q", "-m", "track .chimera")
    guard = WorkspaceGuard(repo, tmp_path / "store")
    snap = guard.snapshot()
    assert snap.seed == "repo-index"
    (repo / ".chimera" / "notes.md").write_text("the run's own state\n")
    (repo / "README.md").write_text("changed\n")
    assert [f.path for f in guard.diff(snap).files] == ["README.md"]
    guard.restore(snap)
    assert (repo / ".chimera" / "notes.md").read_text() == "the run's own state\n"
    assert (repo / "README.md").read_text() == "# Project\n"
