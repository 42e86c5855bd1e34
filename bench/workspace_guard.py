"""Benchmark: WorkspaceGuard snapshot + restore against ``git stash -u`` + ``git stash pop``.

A git repository of 20,000 files (400 folders) with 10 files changed in the working tree.
Both sides save that state and bring it back:

* git: ``git stash push -u`` then ``git stash pop``;
* guard: ``snapshot()``, then a simulated attempt (edits, creations, deletions, a rename;
  not timed), then ``restore()`` — checked to give back exactly the snapshotted tree.

Two guard figures: a *fresh* guard (its first snapshot, seeded from the repository's index,
as at the start of a run) and a *warm* guard (later snapshots of the same run). Medians of
several rounds, measured in the same run; the target is a ratio of at most 0.5.

Usage: ``python bench/workspace_guard.py [--files 20000] [--rounds 7]``
"""

from __future__ import annotations

import argparse
import difflib
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from chimera.core.workspace import WorkspaceGuard

GIT_ENV_ARGS = ["-c", "user.email=bench@example.invalid", "-c", "user.name=bench"]


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *GIT_ENV_ARGS, *args], cwd=root, capture_output=True, text=True, check=True
    )
    return proc.stdout


def make_repo(root: Path, files: int) -> list[Path]:
    git(root, "init", "-q")
    paths: list[Path] = []
    for i in range(files):
        folder = root / f"pkg{i % 50:02d}" / f"sub{i % 8}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"mod{i}.py"
        path.write_text(f"VALUE_{i} = {i}\n" * (5 + i % 60), encoding="utf-8")
        paths.append(path)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "tree")
    for path in paths[:10]:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("# changed in the working tree\n")
    return paths


def state(root: Path) -> str:
    return git(root, "status", "--porcelain", "-uall") + git(root, "diff", "--full-index")


def check(root: Path, expected: str, what: str) -> None:
    now = state(root)
    if now != expected:
        lines = difflib.unified_diff(expected.splitlines(), now.splitlines(), lineterm="")
        raise SystemExit(f"{what} changed the tree:\n" + "\n".join(list(lines)[:40]))


def attempt(root: Path, paths: list[Path], round_no: int) -> None:
    for path in paths[100:104]:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"# attempt {round_no}\n")
    for n in range(3):
        (root / f"pkg0{n}" / f"new_{round_no}_{n}.py").write_text("NEW = 1\n", encoding="utf-8")
    paths[200].unlink()
    paths[201].unlink()
    paths[300].rename(paths[300].with_name("renamed.py"))


class Clock:
    """Wall-clock and CPU seconds (this process and its children) of timed sections."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    @staticmethod
    def _cpu() -> float:
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    def __enter__(self) -> Clock:
        self._wall0, self._cpu0 = time.perf_counter(), self._cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._wall0
        self.cpu += self._cpu() - self._cpu0


def time_stash(root: Path) -> Clock:
    clock = Clock()
    with clock:
        git(root, "stash", "push", "-u", "-q")
        git(root, "stash", "pop", "-q")
    return clock


def time_guard(guard: WorkspaceGuard, root: Path, paths: list[Path], round_no: int) -> Clock:
    clock = Clock()
    with clock:
        snap = guard.snapshot("bench")
    attempt(root, paths, round_no)
    with clock:
        guard.restore(snap)
    guard.discard(snap)
    return clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="chimera-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        print(f"building a {args.files}-file repository with 10 changed files ...")
        paths = make_repo(root, args.files)
        expected = state(root)
        load_before = f"{os.getloadavg()[0]:.2f}"
        stash: list[Clock] = []
        fresh: list[Clock] = []
        warm: list[Clock] = []
        warm_guard = WorkspaceGuard(root, Path(tmp) / "warm-store")
        warm_guard.restore(warm_guard.snapshot("prime"))
        for round_no in range(args.rounds):
            stash.append(time_stash(root))
            check(root, expected, "git stash -u + pop")
            store = Path(tmp) / f"fresh-store-{round_no}"
            fresh.append(time_guard(WorkspaceGuard(root, store), root, paths, round_no))
            check(root, expected, "snapshot + restore")
            shutil.rmtree(store)
            warm.append(time_guard(warm_guard, root, paths, round_no))
            check(root, expected, "snapshot + restore")
        print(f"load average before: {load_before}, after: {os.getloadavg()[0]:.2f}")
        print(f"{'':32} {'wall ms':>9} {'ratio':>6} {'cpu ms':>9} {'ratio':>6}")
        base_wall = statistics.median(c.wall for c in stash)
        base_cpu = statistics.median(c.cpu for c in stash)
        for name, clocks in (
            ("git stash -u + pop", stash),
            ("guard snapshot+restore (fresh)", fresh),
            ("guard snapshot+restore (warm)", warm),
        ):
            wall = statistics.median(c.wall for c in clocks)
            cpu = statistics.median(c.cpu for c in clocks)
            print(
                f"{name:32} {wall * 1000:9.1f} {wall / base_wall:6.2f} "
                f"{cpu * 1000:9.1f} {cpu / base_cpu:6.2f}"
            )
        print("target: ratio <= 0.50 (medians; cpu = user+sys of this process and git)")


if __name__ == "__main__":
    main()
