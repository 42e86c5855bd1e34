"""``.chimera/`` is git-ignored by whichever command creates it first, and a tracked file in it
is explained in one line (issue 38, row 1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.localstate import IGNORE_TEXT, make_dirs, tracked_files, tracked_warning
from chimera.runner import stderr_line

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        [*GIT, *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "README.md").write_text("# proj\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    monkeypatch.chdir(root)
    monkeypatch.setenv("NO_COLOR", "1")
    return root


def test_make_dirs_writes_the_ignore_file_of_every_chimera_folder_on_its_path(
    tmp_path: Path,
) -> None:
    leaf = make_dirs(tmp_path / "a" / ".chimera" / "runs" / "r1")
    assert leaf.is_dir()
    assert (tmp_path / "a" / ".chimera" / ".gitignore").read_text() == IGNORE_TEXT
    # Folders that are not .chimera get none; an edited ignore file is kept.
    assert not (tmp_path / "a" / ".gitignore").exists()
    (tmp_path / "a" / ".chimera" / ".gitignore").write_text("*\n# mine\n")
    make_dirs(tmp_path / "a" / ".chimera" / "cache")
    assert (tmp_path / "a" / ".chimera" / ".gitignore").read_text() == "*\n# mine\n"


def test_a_tracked_database_is_named_with_the_command_that_untracks_it(repo: Path) -> None:
    assert tracked_warning(repo) is None
    (repo / ".chimera").mkdir()
    (repo / ".chimera" / "memory.db").write_bytes(b"db")
    git(repo, "add", "-f", ".chimera/memory.db")
    git(repo, "commit", "-qm", "oops")
    assert tracked_files(repo) == [".chimera/memory.db"]
    line = tracked_warning(repo)
    assert line is not None and "\n" not in line
    assert line.startswith("git tracks .chimera/memory.db, Chimera's local state")
    assert "git rm -r --cached .chimera" in line
    # The advice works: after it, git tracks nothing there and `git add -A` adds nothing.
    git(repo, "rm", "-r", "-q", "--cached", ".chimera")
    make_dirs(repo / ".chimera")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "untrack")
    assert tracked_warning(repo) is None


def test_outside_a_repository_nothing_is_tracked(tmp_path: Path) -> None:
    make_dirs(tmp_path / ".chimera")
    assert tracked_files(tmp_path) == []


def test_git_errors_are_kept_whole_on_one_line() -> None:
    stderr = (
        b"error: the following file has staged content different from both the\n"
        b"file and the HEAD:\n    .chimera/memory.db\n(use -f to force removal)\n"
    )
    assert stderr_line(stderr) == (
        "error: the following file has staged content different from both the file and "
        "the HEAD: .chimera/memory.db (use -f to force removal)"
    )
    assert stderr_line(b"", exit_code=128) == "exit 128"
