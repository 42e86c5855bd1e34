"""The pytest plugin's cost against plain pytest, and what ``-n 2`` buys: whole processes, paired.

Rows (each measured ``--repeat`` times as a pair run back to back in fresh processes, so both
sides see the same load on a shared machine; the table shows the median paired ratio, its
spread (min–max) and the median seconds of each side):

* ``spec / plain (CPU)``: ``pytest --chimera-spec specs`` with N ``contains`` requirements
  over a tree of 100 files, over N trivial tests (``def test_i(): pass``). CPU is user +
  system of the pytest process and its children: every fixed cost (imports, spec load) is
  in, as a user sees it.
* ``caches warm``: the same with the caches on (the default) and no file changed since the
  previous run: the Spec's parse and the outcomes are read back.
* ``now / before (CPU)``: with ``--baseline-src DIR`` (an older checkout), the spec run with
  this source over the same run with ``PYTHONPATH=DIR``.
* ``-n 2 / serial (wall)``: the same spec items with two xdist workers over a serial run (the
  point of workers is elapsed time), and the same for the plain tests (xdist's own cost).
* ``-n 2 / serial, checks dominate (wall)``: ``--heavy``: one ``absent`` requirement per
  ``.py`` file of a committed git copy of the standard library (each searching its own file
  for three patterns without a usable literal), so the check work is split between workers
  instead of repeated by each; and ``--commands N``: N ``command`` requirements that each
  wait ``--command-seconds`` (a check whose time is not CPU, like a test suite waiting on
  I/O).

Except in the ``caches warm`` row the result cache is off (``--chimera-no-cache``) so every
run does the work; pytest-randomly
and the cache provider are off on both sides.

Usage: python bench/plugin_overhead.py [--items 2000] [--files 100] [--repeat 5]
       [--baseline-src DIR] [--heavy] [--commands 0] [--command-seconds 0.05] [--no-docs]

It writes its table to ``docs/snippets/performance-plugin.md`` (the Performance page), unless
``--no-docs``.
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
from collections.abc import Callable
from pathlib import Path

import _docs_table

SPEC = ("--chimera-spec", "specs", "--chimera-no-cache")


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


def make_heavy_project(root: Path) -> int:
    """The standard library as a git tree, one ``absent`` requirement per ``.py`` file."""
    sys.path.insert(0, str(Path(__file__).parent))
    from _tree import NO_LITERAL_PATTERNS, stdlib_tree

    stdlib_tree(root)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "*.py"], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    pattern = "|".join(NO_LITERAL_PATTERNS).replace("'", "''")
    lines = ["requirements:"]
    files = [f for f in listed.split("\0") if f and "'" not in f]
    for i, rel in enumerate(files):
        lines.append(f"  - id: file-{i:04d}")
        lines.append(f"    absent: {{paths: ['{rel}'], pattern: '{pattern}'}}")
    (root / "specs").mkdir()
    (root / "specs" / "perfile.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # The tree holds the standard library's own tests: collect the Spec only.
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = specs\n", encoding="utf-8")
    return len(files)


def make_command_project(root: Path, n: int, seconds: float) -> None:
    (root / "specs").mkdir(parents=True)
    lines = ["requirements:"]
    for i in range(n):
        lines.append(f"  - id: cmd-{i:04d}")
        lines.append(f"    command: {{run: 'sleep {seconds:g}'}}")
    (root / "specs" / "commands.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def run(
    cwd: Path, *args: str, src: str | None = None, ok: tuple[int, ...] = (0,)
) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one pytest process with its children (xdist workers
    included: the controller waits for them)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    # Compiled bytecode is what users run; without it every run recompiles every module.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src is not None:
        env["PYTHONPATH"] = src
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok:
        raise SystemExit(f"pytest failed in {cwd}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


Sample = tuple[float, float]
"""(baseline seconds, measured seconds) of one pair."""


def show(name: str, pairs: list[Sample], note: str) -> str:
    ratios = [m / b for b, m in pairs]
    med = statistics.median(ratios)
    base = statistics.median(b for b, _ in pairs)
    measured = statistics.median(m for _, m in pairs)
    return (
        f"| {name} | {med:.3g} | {min(ratios):.3g}–{max(ratios):.3g} "
        f"| {measured:.2f} s / {base:.2f} s | {note} |"
    )


def paired(
    repeat: int, baseline: Callable[[], float], measured: Callable[[], float]
) -> list[Sample]:
    """``repeat`` pairs, alternating which side runs first (a warm page cache or a load
    spike then favours neither side)."""
    out: list[Sample] = []
    for i in range(repeat):
        if i % 2:
            m = measured()
            out.append((baseline(), m))
        else:
            b = baseline()
            out.append((b, measured()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline-src", help="an older source tree, for now/before rows")
    parser.add_argument("--heavy", action="store_true", help="add the standard-library row")
    parser.add_argument("--commands", type=int, default=0, help="add the command row (N items)")
    parser.add_argument("--command-seconds", type=float, default=0.05)
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/snippets/")
    args = parser.parse_args()
    rows: list[tuple[str, list[Sample], str]] = []
    with tempfile.TemporaryDirectory(prefix="chimera-bench-") as tmp:
        spec_root, plain_root = Path(tmp) / "spec", Path(tmp) / "plain"
        make_spec_project(spec_root, args.items, args.files)
        make_plain_project(plain_root, args.items)
        n = args.items
        rows.append(
            (
                f"pytest --chimera-spec / plain pytest, {n} items (CPU)",
                paired(args.repeat, lambda: run(plain_root)[0], lambda: run(spec_root, *SPEC)[0]),
                f"{n} contains items on {args.files} files vs {n} `def test(): pass`",
            )
        )
        run(spec_root, "--chimera-spec", "specs")  # fills the parse, result and report caches
        rows.append(
            (
                f"pytest --chimera-spec / plain pytest, {n} items, caches warm (CPU)",
                paired(
                    args.repeat,
                    lambda: run(plain_root)[0],
                    lambda: run(spec_root, "--chimera-spec", "specs")[0],
                ),
                "the default: a re-run with no file changed",
            )
        )
        if args.baseline_src:
            src = str(Path(args.baseline_src).resolve())
            rows.append(
                (
                    "pytest --chimera-spec now / before (CPU)",
                    paired(
                        args.repeat,
                        lambda: run(spec_root, *SPEC, src=src)[0],
                        lambda: run(spec_root, *SPEC)[0],
                    ),
                    f"before: PYTHONPATH={Path(src).name}",
                )
            )
            rows.append(
                (
                    "pytest -n 2 --chimera-spec now / before (CPU, all processes)",
                    paired(
                        args.repeat,
                        lambda: run(spec_root, *SPEC, "-n", "2", src=src)[0],
                        lambda: run(spec_root, *SPEC, "-n", "2")[0],
                    ),
                    "",
                )
            )
        rows.append(
            (
                f"pytest -n 2 / serial, {n} spec items (wall)",
                paired(
                    args.repeat,
                    lambda: run(spec_root, *SPEC)[1],
                    lambda: run(spec_root, *SPEC, "-n", "2")[1],
                ),
                "below 1: workers help",
            )
        )
        rows.append(
            (
                f"pytest -n 2 / serial, {n} plain tests (wall)",
                paired(
                    args.repeat, lambda: run(plain_root)[1], lambda: run(plain_root, "-n", "2")[1]
                ),
                "xdist's own cost per item, for reference",
            )
        )
        if args.heavy:
            heavy = Path(tmp) / "stdlib"
            count = make_heavy_project(heavy)
            red = (0, 1)  # some standard-library files do hold these patterns
            rows.append(
                (
                    f"pytest -n 2 / serial, {count} per-file absent items on the stdlib (wall)",
                    paired(
                        args.repeat,
                        lambda: run(heavy, *SPEC, ok=red)[1],
                        lambda: run(heavy, *SPEC, "-n", "2", ok=red)[1],
                    ),
                    "check work split between workers",
                )
            )
        if args.commands:
            cmds = Path(tmp) / "commands"
            make_command_project(cmds, args.commands, args.command_seconds)
            rows.append(
                (
                    f"pytest -n 2 / serial, {args.commands} command items "
                    f"(`sleep {args.command_seconds:g}`, wall)",
                    paired(
                        args.repeat,
                        lambda: run(cmds, *SPEC)[1],
                        lambda: run(cmds, *SPEC, "-n", "2")[1],
                    ),
                    "checks that wait",
                )
            )
    table = [
        "| measure | median ratio | spread (paired runs) | median: measured / baseline | note |",
        "|---|---|---|---|---|",
        *(show(*row) for row in rows),
    ]
    print("\n".join(table))
    if not args.no_docs:  # the Performance page includes it (bench/_docs_table.py)
        print(f"wrote {_docs_table.write('performance-plugin', table)}")


if __name__ == "__main__":
    main()
