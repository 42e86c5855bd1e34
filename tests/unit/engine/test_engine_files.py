"""File selection: git's view of the tree, .gitignore outside git, symlinks, never-selected dirs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from chimera.spec.kinds import Absent, Contains
from chimera.spec.model import Status

if TYPE_CHECKING:
    from tests.unit.engine.conftest import Evaluate, RunAll

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@needs_git
def test_gitignore_respected_inside_a_git_repo(tmp_path: Path, evaluate: Evaluate) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path, ".gitignore", "build/\n*.log\n")
    write(tmp_path, "src/app.py", "x = 1\n")
    write(tmp_path, "build/gen.py", "eval(x)\n")
    write(tmp_path, "debug.log", "eval(x)\n")
    write(tmp_path, "notes/new.py", "y = 2\n")  # untracked, not ignored: counts
    res = evaluate(tmp_path, Absent(paths=["**/*.py", "*.log"], pattern=r"eval\("))
    assert res.status is Status.PASSED, res.message
    untracked = evaluate(tmp_path, Contains(paths=["notes/*.py"], pattern="y = 2"))
    assert untracked.status is Status.PASSED


@needs_git
def test_tracked_but_ignored_files_count(tmp_path: Path, evaluate: Evaluate) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path, "vendor/lib.py", "eval(x)\n")
    git(tmp_path, "add", "vendor/lib.py")
    git(tmp_path, "commit", "-q", "-m", "vendored")
    write(tmp_path, ".gitignore", "vendor/\n")
    res = evaluate(tmp_path, Absent(paths=["**/*.py"], pattern=r"eval\("))
    assert res.status is Status.FAILED
    assert res.evidence[0].file == "vendor/lib.py"


@needs_git
def test_git_root_in_subdirectory_lists_relative_paths(tmp_path: Path, evaluate: Evaluate) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path, "outer.py", "eval(1)\n")
    write(tmp_path, "proj/inner.py", "eval(2)\n")
    res = evaluate(tmp_path / "proj", Absent(paths=["*.py"], pattern=r"eval\("))
    assert res.status is Status.FAILED
    assert [e.file for e in res.evidence] == ["inner.py"]


def test_gitignore_respected_outside_a_repo(
    tmp_path: Path, evaluate: Evaluate, run_all: RunAll
) -> None:
    write(tmp_path, ".gitignore", "*.log\nbuild/\n!keep.log\n")
    write(tmp_path, "a.log", "secret\n")
    write(tmp_path, "keep.log", "fine\n")
    write(tmp_path, "build/out.txt", "secret\n")
    write(tmp_path, "sub/.gitignore", "local.txt\n")
    write(tmp_path, "sub/local.txt", "secret\n")
    write(tmp_path, "sub/kept.txt", "fine\n")
    res = evaluate(tmp_path, Absent(paths=["**/*.log", "**/*.txt"], pattern="secret"))
    assert res.status is Status.PASSED, res.message
    report, stats = run_all(tmp_path, [Contains(paths=["*.log", "*.txt"], pattern="fine")])
    assert report.ok
    assert set(Path(p).name for p in stats.reads) == {"keep.log", "kept.txt"}


def test_single_path_is_read_even_when_ignored(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, ".gitignore", "*.env\n")
    write(tmp_path, "local.env", "TOKEN=abc\n")
    res = evaluate(tmp_path, Absent(path="local.env", pattern="TOKEN="))
    assert res.status is Status.FAILED


@pytest.mark.parametrize("use_git", [False, pytest.param(True, marks=needs_git)])
def test_git_and_chimera_dirs_are_never_selected(
    tmp_path: Path, evaluate: Evaluate, use_git: bool
) -> None:
    if use_git:
        git(tmp_path, "init", "-q")
    write(tmp_path, ".chimera/state.json", "secret\n")
    write(tmp_path, "pkg/.git/config", "secret\n")
    write(tmp_path, "pkg/code.txt", "fine\n")
    res = evaluate(tmp_path, Absent(paths=["**"], pattern="secret"))
    assert res.status is Status.PASSED, res.message


def test_symlink_loops_do_not_hang_or_double_scan(tmp_path: Path, run_all: RunAll) -> None:
    write(tmp_path, "src/a.py", "print('x')\n")
    (tmp_path / "src/loop").symlink_to(tmp_path / "src")  # directory loop
    (tmp_path / "src/self").symlink_to(tmp_path)  # back to the root
    (tmp_path / "src/l1.py").symlink_to(tmp_path / "src/l2.py")  # file loop
    (tmp_path / "src/l2.py").symlink_to(tmp_path / "src/l1.py")
    (tmp_path / "src/alias.py").symlink_to(tmp_path / "src/a.py")  # same file twice
    report, stats = run_all(
        tmp_path,
        [
            Absent(paths=["**/*.py"], pattern=r"print\("),
            Contains(paths=["**/*.py"], pattern="x"),
        ],
    )
    absent, contains = report.results
    assert absent.status is Status.FAILED
    matched = [e for e in absent.evidence if e.line is not None]
    assert [e.file for e in matched] == ["src/a.py"]  # alias.py is the same file: once
    assert any("symlink loop" in e.note for e in absent.evidence)
    assert contains.status is Status.PASSED
    assert max(stats.reads.values()) == 1
    assert len(stats.reads) == 1
    # Links to directories are not files: skipped by globs, like git does.
    assert not any(e.file in ("src/loop", "src/self") for e in absent.evidence)


def test_directory_links_are_not_followed_and_never_help_a_pass(
    tmp_path: Path, evaluate: Evaluate
) -> None:
    # Not followed (as git does not), and — since an attack pass hid a match behind one —
    # named as unscannable, so `absent` cannot pass by skipping what a link holds.
    write(tmp_path, "docs/a.md", "fine\n")
    (tmp_path / "outside").mkdir()
    root = tmp_path / "docs"
    (root / "assets").symlink_to(tmp_path / "outside")  # a directory outside the root
    (root / "same").symlink_to(root)  # a directory inside it
    res = evaluate(root, Absent(paths=["**"], pattern="secret"))
    assert res.status is not Status.PASSED, res.message
    notes = " ".join(f"{e.file}: {e.note}" for e in res.evidence)
    assert "assets" in notes and "same" in notes and "symlink to a directory" in notes
    excluded = evaluate(root, Absent(paths=["**"], exclude=["assets", "same"], pattern="secret"))
    assert excluded.status is Status.PASSED, excluded.message
    named = evaluate(root, Contains(path="same", pattern="x"))
    assert named.status is Status.ERROR
    assert "is a directory" in named.message


def test_link_pointing_outside_the_root_is_refused(tmp_path: Path, run_all: RunAll) -> None:
    outside = write(tmp_path, "outside/secret.txt", "password\n")
    root = tmp_path / "repo"
    write(root, "ok.txt", "hello\n")
    (root / "leak.txt").symlink_to(outside)
    (root / "dirlink").symlink_to(tmp_path / "outside")
    report, stats = run_all(
        root,
        [
            Absent(paths=["*.txt"], pattern="password"),
            Contains(path="leak.txt", pattern="password"),
            Contains(path="dirlink/secret.txt", pattern="password"),
        ],
    )
    scope, single, through_dir = report.results
    assert scope.status is Status.ERROR
    assert "leak.txt (symlink points outside the root (refused))" in scope.message
    assert single.status is Status.ERROR
    assert through_dir.status is Status.ERROR
    assert str(outside) not in stats.reads
    assert all(str(root.resolve()) in real for real in stats.reads)


def test_link_to_a_file_inside_the_root_is_followed(tmp_path: Path, evaluate: Evaluate) -> None:
    write(tmp_path, "real/config.ini", "debug = true\n")
    (tmp_path / "config.ini").symlink_to(tmp_path / "real/config.ini")
    res = evaluate(tmp_path, Contains(path="config.ini", pattern="^debug"))
    assert res.status is Status.PASSED
    # The evidence names the file a person would edit, and the link that selected it.
    assert res.evidence[0].file == "real/config.ini"
    assert res.evidence[0].note == "via symlink config.ini"


def test_fifo_is_not_read(tmp_path: Path, evaluate: Evaluate) -> None:
    import os

    write(tmp_path, "a.txt", "x\n")
    os.mkfifo(tmp_path / "pipe.txt")
    res = evaluate(tmp_path, Contains(path="pipe.txt", pattern="x"))
    assert res.status is Status.ERROR
    assert "not a regular file" in res.message


@pytest.mark.parametrize("size", [0, 1, 4095, 3 * 1024 * 1024 + 7])
def test_read_bytes_reads_whole_files_and_refuses_larger_than_the_limit(
    tmp_path: Path, size: int
) -> None:
    from chimera.errors import FileTooLarge
    from chimera.spec.engine.files import read_bytes

    path = tmp_path / "f.bin"
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    path.write_bytes(data)
    assert read_bytes(str(path), size) == data
    if size:
        with pytest.raises(FileTooLarge):
            read_bytes(str(path), size - 1)


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs procfs")
def test_read_bytes_reads_past_a_size_that_understates_the_content() -> None:
    """A file whose size says less than it holds (procfs says 0) is read to its end, and
    the limit still applies to what was read."""
    from chimera.errors import FileTooLarge
    from chimera.spec.engine.files import read_bytes

    data = read_bytes("/proc/self/status", 1 << 20)
    assert b"Name:" in data and len(data) > 100
    with pytest.raises(FileTooLarge):
        read_bytes("/proc/self/status", 10)
