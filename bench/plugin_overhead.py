"""pytest's overhead per spec item, on top of check_drift.

Builds a throwaway project with N trivial requirements (literal ``contains`` checks on one
small file, all green), then times, in this process and the same run:

* baseline: ``load_spec`` + ``check_drift`` — what ``chimera check`` does;
* plugin: ``pytest --chimera-spec specs/`` over the same spec (collection, one item per
  requirement, lazy DriftSession, reporting).

Fixed costs (interpreter, pytest start-up, git listing) are removed by timing two sizes and
taking the slope: overhead/item = (Δ pytest − Δ baseline) / Δ N. Each measurement is the
best of ``--repeat`` runs. Target: a few milliseconds per item at most.

Usage: python bench/plugin_overhead.py [--items 500] [--small 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from chimera.spec.drift import check_drift
from chimera.spec.loader import load_spec


def make_project(root: Path, n: int) -> None:
    (root / "specs").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n", encoding="utf-8")
    words = "\n".join(f"word-{i:05d}" for i in range(n))
    (root / "data.txt").write_text(words + "\n", encoding="utf-8")
    lines = ["requirements:"]
    for i in range(n):
        lines.append(f"  - id: req-{i:05d}")
        lines.append(f"    contains: {{path: data.txt, pattern: 'word-{i:05d}', regex: false}}")
    (root / "specs" / "bench.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # A git repository, as in real use (paths scopes list files through git).
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def best_of(repeat: int, fn: Callable[[], None]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def time_baseline(root: Path, repeat: int) -> float:
    def run() -> None:
        report = check_drift(load_spec([root / "specs"]), root)
        assert report.ok, [r.render() for r in report.red]

    return best_of(repeat, run)


def time_pytest(root: Path, n: int, repeat: int) -> float:
    def run() -> None:
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            code = pytest.main(
                ["-q", "-p", "no:cacheprovider", "--chimera-spec", "specs", "-c", "pytest.ini"]
            )
        assert code == 0, sink.getvalue()[-2000:]
        assert f"{n} passed" in sink.getvalue(), sink.getvalue()[-2000:]

    cwd = Path.cwd()
    os.chdir(root)
    try:
        return best_of(repeat, run)
    finally:
        os.chdir(cwd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    rows: dict[int, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="chimera-bench-") as tmp:
        for n in (args.small, args.items):
            root = Path(tmp) / f"n{n}"
            make_project(root, n)
            rows[n] = (time_baseline(root, args.repeat), time_pytest(root, n, args.repeat))

    print(f"{'items':>6}  {'check_drift':>12}  {'pytest':>10}  {'ratio':>6}")
    for n, (base, plug) in rows.items():
        print(f"{n:>6}  {base * 1000:>10.1f}ms  {plug * 1000:>8.1f}ms  {plug / base:>6.1f}")
    (b_small, p_small), (b_big, p_big) = rows[args.small], rows[args.items]
    delta_n = args.items - args.small
    drift_per_item = (b_big - b_small) / delta_n * 1000
    pytest_per_item = (p_big - p_small) / delta_n * 1000
    overhead = pytest_per_item - drift_per_item
    print(f"check_drift per item:          {drift_per_item:.3f} ms")
    print(f"pytest --chimera-spec per item: {pytest_per_item:.3f} ms")
    print(f"pytest overhead per item:       {overhead:.3f} ms (target: a few ms at most)")


if __name__ == "__main__":
    main()
