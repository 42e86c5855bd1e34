"""Every command that creates ``.chimera/`` writes its ignore file first; a tracked database
is explained in one line and does not break a run (issue 38, row 1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.cli import main

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        [*GIT, *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def ignores_everything(folder: Path) -> bool:
    lines = (folder / ".gitignore").read_text().splitlines()
    return "*" in lines


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


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "add", "Money is in cents."],
        ["memory", "list"],
        ["skills", "list"],
        ["playbook", "show"],
        ["check"],
    ],
    ids=lambda a: " ".join(a),
)
def test_a_command_that_creates_chimera_leaves_nothing_for_git_to_add(
    repo: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "specs").mkdir()
    (repo / "specs" / "s.yaml").write_text(
        "requirements:\n  - id: r\n    contains: {path: README.md, pattern: proj}\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "spec")
    if argv[:2] == ["memory", "list"]:
        # A checkout from before the fix: a database exists, no ignore file.
        assert main(["memory", "add", "seed"]) == 0
        (repo / ".chimera" / ".gitignore").unlink(missing_ok=True)
    assert main(argv) in (0, 1), capsys.readouterr().err
    if (repo / ".chimera").exists():
        assert ignores_everything(repo / ".chimera")
    # What a routine `git add -A` would pick up: nothing of Chimera's local state.
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert ".chimera" not in status, status


def test_memory_add_on_a_fresh_checkout_writes_the_ignore_file_first(repo: Path) -> None:
    assert main(["memory", "add", "Money is in cents."]) == 0
    assert (repo / ".chimera" / "memory.db").is_file()
    git(repo, "add", "-A")
    assert git(repo, "diff", "--cached", "--name-only") == ""
