"""publish's git: a review re-run's change goes on top of the PR's head as one commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from chimera.github.trust.gitops import PublishGit


def git(root: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_on_top_keeps_the_tree_and_takes_the_pr_head_as_parent(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "calc.py").write_text("base\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    (root / "calc.py").write_text("round one\n")
    git(root, "commit", "-qam", "round one")
    head = git(root, "rev-parse", "HEAD")
    # publish's commit: base + the cumulative patch, on the base.
    git(root, "checkout", "-q", "-B", "work", base)
    (root / "calc.py").write_text("round two\n")
    git(root, "commit", "-qam", "cumulative")
    cumulative = git(root, "rev-parse", "HEAD")
    ops = PublishGit(root)
    new = ops.on_top("origin", cumulative, head, "chimera: round two")
    assert git(root, "rev-parse", f"{new}^") == head
    assert git(root, "rev-parse", f"{new}^{{tree}}") == git(
        root, "rev-parse", f"{cumulative}^{{tree}}"
    )
    assert (
        git(root, "rev-parse", "HEAD") == new
        and git(root, "log", "-1", "--format=%an") == "Chimera"
    )
    # A re-run that changed nothing since the head: no empty commit, the head stays.
    git(root, "checkout", "-q", "-B", "same", base)
    (root / "calc.py").write_text("round one\n")
    git(root, "commit", "-qam", "cumulative, as before")
    same = git(root, "rev-parse", "HEAD")
    assert ops.on_top("origin", same, head, "again") == head
    assert git(root, "rev-parse", "HEAD") == head
