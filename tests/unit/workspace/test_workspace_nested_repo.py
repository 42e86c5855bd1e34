"""A nested git repository created by agent code (a test that ran ``git init``) never crashes
a run: git cannot record one without a commit, so it is left out, reported and reverted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.core.workspace import WorkspaceGuard


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    _git(root, "add", "a.txt")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "a")
    return root


def test_nested_repo_without_commit_is_reported_not_fatal(repo: Path) -> None:
    guard = WorkspaceGuard(repo, repo / ".chimera" / "snap")
    base = guard.snapshot("base")
    _git(repo, "init", "-q", "nested")
    _git(repo, "init", "-q", "deep/er")
    (repo / "nested" / "payload.txt").write_text("x\n", encoding="utf-8")
    (repo / "b.txt").write_text("b\n", encoding="utf-8")

    diff = guard.diff(base)

    assert [f.path for f in diff.files] == ["b.txt"]
    assert diff.nested_repos == ("deep/er", "nested")
    later = guard.snapshot("later")
    assert later.nested_repos == ("deep/er", "nested")
    assert WorkspaceGuard.load(later.store, later.id).nested_repos == later.nested_repos

    guard.restore(base)
    assert sorted(p.name for p in repo.iterdir()) == [".chimera", ".git", "a.txt"]


def test_nested_repo_present_at_the_snapshot_is_kept_by_restore(repo: Path) -> None:
    _git(repo, "init", "-q", "vendor/tool")
    guard = WorkspaceGuard(repo, repo / ".chimera" / "snap")
    base = guard.snapshot("base")
    (repo / "new.txt").write_text("n\n", encoding="utf-8")
    guard.restore(base)
    assert (repo / "vendor" / "tool" / ".git").is_dir()
    assert not (repo / "new.txt").exists()


def test_repository_hooks_and_fsmonitor_never_run(repo: Path) -> None:
    """The snapshot store has its own git directory; the project's own config cannot make
    Chimera's git run a program either (command-line settings outrank config files)."""
    marker = repo.parent / "ran"
    hook = repo / ".git" / "hooks" / "fsmon"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    hook.chmod(0o755)
    _git(repo, "config", "core.fsmonitor", str(hook))
    _git(repo, "config", "core.hooksPath", str(hook.parent))
    (repo / ".gitattributes").write_text("*.txt filter=evil\n", encoding="utf-8")
    _git(repo, "config", "filter.evil.clean", f"sh -c 'touch {marker}; cat'")
    guard = WorkspaceGuard(repo, repo / ".chimera" / "snap")
    base = guard.snapshot("base")
    (repo / "a.txt").write_text("changed\n", encoding="utf-8")
    assert not guard.diff(base).is_empty
    guard.restore(base)
    assert not marker.exists()
    # The trap is real: the project's own git runs it.
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    subprocess.run(["git", "add", "a.txt"], cwd=repo, capture_output=True, check=False)
    assert marker.exists()
