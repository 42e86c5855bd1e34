"""The pytest plugin's cost per item against a plain test, whole processes, paired.

Builds two throwaway projects: one with N ``contains`` requirements over a tree of 100
files (``pytest --chimera-spec specs``), one with N trivial tests (``def test_i(): pass``).
Each pair runs back to back in fresh processes (so both see the same load on a shared
machine); the ratio of their CPU times (user + system of the pytest process and its
children) is the plugin's cost per item relative to a plain test — fixed costs included,
as a user sees them. A second row compares ``-n 2`` with a serial run of the spec (wall
time: the point of workers is elapsed time). The result cache is off (``--chimera-no-cache``)
so every run does the work.

Medians and the spread (min–max) of the paired ratios are printed.

Usage: python bench/plugin_overhead.py [--items 2000] [--files 100] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_spec_project(root: Path, n: int, files: int) -> None:
    (root / "specs").mkdir(parents=True)
    (root / "src").mkdir()
    for f in range(files):
        words = "\n".join(f"word-{i:05d}" for i in range(f, n, files))
        (root / "src" / f"f{f:03d}.txt").write_text(words + "\n", encoding="utf-8")
    lines = ["requirements:"]
    for i in range(n):
        lines.append(f"  - id: req-{i:05d}")
        lines.append(f"    contains: {{paths: ['src/*.txt'], pattern: 'word-{i:05d}$'}}")
    (root / "specs" / "bench.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def make_plain_project(root: Path, n: int) -> None:
    (root / "tests").mkdir(parents=True)
    body = "\n".join(f"def test_{i:05d}():\n    pass\n" for i in range(n))
    (root / "tests" / "test_plain.py").write_text(body, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")


def run(cwd: Path, *args: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one pytest process with its children."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # Compiled bytecode is what users run; without it every run recompiles every module.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"pytest failed in {cwd}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def show(name: str, ratios: list[float], note: str) -> None:
    med = statistics.median(ratios)
    print(f"| {name} | {med:.3g} | {min(ratios):.3g}–{max(ratios):.3g} | {note} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="chimera-bench-") as tmp:
        spec_root, plain_root = Path(tmp) / "spec", Path(tmp) / "plain"
        make_spec_project(spec_root, args.items, args.files)
        make_plain_project(plain_root, args.items)
        spec_args = ("--chimera-spec", "specs", "--chimera-no-cache")
        per_item: list[float] = []
        workers: list[float] = []
        plain_workers: list[float] = []
        for _ in range(args.repeat):
            plain_cpu, plain_wall = run(plain_root)
            spec_cpu, serial_wall = run(spec_root, *spec_args)
            per_item.append(spec_cpu / plain_cpu)
            _, parallel_wall = run(spec_root, *spec_args, "-n", "2")
            workers.append(parallel_wall / serial_wall)
            _, plain_parallel_wall = run(plain_root, "-n", "2")
            plain_workers.append(plain_parallel_wall / plain_wall)
    print("| measure | median ratio | spread (paired runs) | note |")
    print("|---|---|---|---|")
    show(
        f"pytest --chimera-spec / plain pytest, {args.items} items (CPU)",
        per_item,
        f"{args.items} contains items on {args.files} files vs {args.items} `def test(): pass`",
    )
    show("pytest -n 2 / serial, spec items (wall)", workers, "below 1: workers help")
    show(
        "pytest -n 2 / serial, plain tests (wall)",
        plain_workers,
        "xdist's own cost per item, for reference",
    )


if __name__ == "__main__":
    main()
