"""WorkspaceGuard after a ``kill -9``: git lock files and half-written snapshots left in the
store must not break the next process's diff, restore or snapshot."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.core.workspace import WorkspaceGuard
from chimera.errors import WorkspaceError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("# demo\n")
    (root / "app.py").write_text("x = 1\n")
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    return root


def leave_killed_leftovers(guard: WorkspaceGuard, snapshot_id: str) -> list[str]:
    """What SIGKILLed git calls and a SIGKILLed snapshot() leave behind."""
    names = [
        "current.index.lock",  # a killed `git add` in diff()
        f".{snapshot_id}.tree.index",  # a killed `git write-tree` in diff()...
        f".{snapshot_id}.tree.index.lock",  # ...and its lock
        ".18ecd1b9d7e35d2e-8a9d16.index.tmp",  # a killed snapshot()
        ".18ecd1b9d7e35d2e-8a9d16.index.tmp.lock",
        "git/HEAD.lock",
    ]
    for name in names:
        (guard.store / name).write_bytes(b"")
    (guard.store / ".git-init-0badc0de" / "objects").mkdir(parents=True)
    return sorted([*names, ".git-init-0badc0de"])


def test_stale_locks_break_diff_until_cleared(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = WorkspaceGuard(repo, store)
    snap = first.snapshot("card")
    (repo / "app.py").write_text("x = 2\n")
    (repo / "new.py").write_text("y = 1\n")
    leftovers = leave_killed_leftovers(first, snap.id)

    # The next process (a resumed run) opens the same store.
    guard = WorkspaceGuard(repo, store)
    loaded = WorkspaceGuard.load(store, snap.id)
    with pytest.raises(WorkspaceError, match=r"\.lock': File exists"):
        guard.diff(loaded)

    leftovers = [name for name in leftovers if (store / name).exists()]
    assert len(leftovers) >= 6
    assert sorted(guard.clear_stale_locks()) == leftovers
    assert guard.clear_stale_locks() == []  # idempotent
    assert loaded.index_path.is_file() and loaded.manifest_path.is_file()

    diff = guard.diff(loaded)
    assert {f.path for f in diff.files} == {"app.py", "new.py"}
    guard.restore(loaded)
    assert (repo / "app.py").read_text() == "x = 1\n"
    assert not (repo / "new.py").exists()
    assert guard.diff(guard.snapshot("after")).is_empty


def test_clear_stale_locks_on_a_store_not_created_yet(repo: Path, tmp_path: Path) -> None:
    assert WorkspaceGuard(repo, tmp_path / "nothing-yet").clear_stale_locks() == []
