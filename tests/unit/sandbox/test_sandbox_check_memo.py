"""Within one run, a ``command`` check on a tree already checked (the same bytes in every file
its copy would hold) is answered from the run's memo, never run again."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from chimera.runner import CommandRunner, LocalRunner
from chimera.sandbox import DisposableRunner
from chimera.sandbox.checkmemo import CheckMemo


class CountingLocal:
    """A Cloneable over the local runner that counts the commands it really runs."""

    def __init__(self) -> None:
        self.runs = 0

    def clone(self, workspace: Path, carried: Sequence[tuple[Path, Path]] = ()) -> CommandRunner:
        self.runs += 1
        return LocalRunner()


def _repo(root: Path) -> Path:
    root.mkdir()
    (root / "a.txt").write_text("one\n", encoding="utf-8")
    (root / "tool.sh").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return root


def test_a_tree_checked_before_is_not_run_again(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    inner = CountingLocal()
    memo = CheckMemo()

    def check() -> str:
        # A new runner per check_drift, as the Sandbox makes one: the memo is the run's.
        runner = DisposableRunner(inner, root, memo=memo)
        return runner.run("cat a.txt", cwd=root, timeout=30).output

    assert check() == "one\n"
    assert check() == "one\n"
    assert inner.runs == 1 and memo.hits == 1
    (root / "a.txt").write_text("two\n", encoding="utf-8")  # an attempt edits the tree
    assert check() == "two\n"
    assert inner.runs == 2
    (root / "a.txt").write_text("one\n", encoding="utf-8")  # ... and is reverted
    assert check() == "one\n"
    assert inner.runs == 2 and memo.hits == 2
    (root / "tool.sh").chmod(0o755)  # the executable bit is part of what a command sees
    check()
    assert inner.runs == 3
    (root / "new.txt").write_text("x\n", encoding="utf-8")  # an untracked file is seen too
    check()
    assert inner.runs == 4


def test_another_command_cwd_or_timeout_runs(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    (root / "sub").mkdir()
    (root / "sub" / "b.txt").write_text("b\n", encoding="utf-8")
    inner = CountingLocal()
    runner = DisposableRunner(inner, root, memo=CheckMemo())
    runner.run("ls", cwd=root, timeout=30)
    runner.run("ls", cwd=root / "sub", timeout=30)
    runner.run("ls -a", cwd=root, timeout=30)
    runner.run("ls", cwd=root, timeout=31)
    assert inner.runs == 4


def test_a_time_out_is_never_reused(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    inner = CountingLocal()
    runner = DisposableRunner(inner, root, memo=CheckMemo())
    assert runner.run("sleep 5", cwd=root, timeout=0.2).timed_out
    assert runner.run("sleep 5", cwd=root, timeout=0.2).timed_out
    assert inner.runs == 2


def test_without_a_memo_every_check_runs(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    inner = CountingLocal()
    runner = DisposableRunner(inner, root)
    runner.run("true", cwd=root, timeout=30)
    runner.run("true", cwd=root, timeout=30)
    assert inner.runs == 2
