"""The performance table: every row a ratio against its baseline, measured in the same run.

Rows (all on a committed git copy of the standard library, with ~650 requirements from
``spec_check.build_jobs`` plus three patterns without a usable literal):

* ``check/grep``: ``chimera check --no-cache`` (a fresh process) over GNU grep doing the same
  requirements one at a time (CPU of all child processes);
* ``check/floor``: the same run over a Python process that reads and decodes every selected
  file once (CPU, whole processes);
* ``warm/cold``: a second ``chimera check`` with the result cache and no file changed, over a
  ``--no-cache`` run (CPU); with ``--baseline-src``, also warm now over warm before;
* ``load C/pure``: loading a 2,000-requirement spec with libyaml over the pure parser (CPU,
  in this process);
* ``audit``: an append (ordinary event) over an append that ``fsync``s (a state transition),
  as every append did before (wall: the cost is waiting for the disk);
* ``json bounded/all``: ``chimera check --json`` output at 3,200 requirements over
  ``--all-evidence``.

Each row is measured ``--repeat`` times as pairs (baseline and Chimera back to back, so both
see the same load on a shared machine); the table shows the median ratio and the spread
(min–max) of the paired ratios. ``--baseline-src DIR`` also runs the process rows with an
older source tree (``PYTHONPATH=DIR``), for before/after.

Usage: ``python bench/speed.py [--repeat 5] [--tree DIR] [--baseline-src DIR] [--no-docs]``.
Not run by CI. It writes its table to ``docs/snippets/performance-check.md`` (the Performance
page), unless ``--no-docs``.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import _docs_table
import _tree
from spec_check import build_jobs

FLOOR = """
import sys, subprocess
sys.path.insert(0, {src!r})
from chimera.spec.engine.files import decode_text
names = subprocess.run(["git", "ls-files", "-z"], cwd={root!r}, capture_output=True).stdout
for rel in names.decode().split("\\0"):
    if rel.endswith(".py"):
        with open({root!r} + "/" + rel, "rb") as fh:
            decode_text(rel, fh.read())
"""


def child_cpu(cmd: Sequence[str], *, env: dict[str, str] | None = None, cwd: str = "/") -> float:
    """CPU seconds (user + system) of ``cmd`` and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_of(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def wall_of(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def paired(repeat: int, base: Callable[[], float], ours: Callable[[], float]) -> list[float]:
    ratios = []
    for _ in range(repeat):
        b = base()
        o = ours()
        ratios.append(o / b if b > 0 else float("inf"))
    return ratios


def row(name: str, ratios: list[float], note: str = "") -> str:
    med = statistics.median(ratios)
    return f"| {name} | {med:.3g} | {min(ratios):.3g}–{max(ratios):.3g} | {note} |"


def chimera_cmd(root: Path, spec: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "chimera", "check", "--root", str(root), str(spec), *extra]


def env_for(src: str | None) -> dict[str, str]:
    env = dict(os.environ)
    # Compiled bytecode is what users run; without it every run recompiles every module.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src:
        env["PYTHONPATH"] = src
    return env


def grep_jobs(root: Path) -> list[list[str]]:
    import random

    jobs = [job.grep for job in build_jobs(root, random.Random(2026))]
    for pattern in (r"^ {40,}[^[:space:]]", r"[A-Z]{30,}", r"^[[:space:]]+print\b"):
        jobs.append(["grep", "-rlE", "--include=*.py", "-e", pattern, str(root)])
    return jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=None, help="where to keep the stdlib copy")
    parser.add_argument("--baseline-src", default=None, help="an older source tree to compare")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/snippets/")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="chimera-speed-"))
    root = _tree.stdlib_tree((args.tree or work / "tree").resolve())
    spec = _tree.write_spec(_tree.stdlib_checks(root), work / "spec" / "bench.yaml")
    src = str(Path(__file__).resolve().parents[1])
    lines = [
        _docs_table.machine_line(),
        "",
        "| measure | median ratio | spread (paired runs) | note |",
        "|---|---|---|---|",
    ]
    jobs = grep_jobs(root)

    def grep_all() -> float:
        return sum(child_cpu(j) for j in jobs)

    def cold(src_dir: str | None = None) -> Callable[[], float]:
        # A tree older than the result cache has no --no-cache flag (nor a cache).
        has_cache = not src_dir or (Path(src_dir) / "chimera/spec/engine/cache.py").exists()
        extra = ("--no-cache",) if has_cache else ()
        return lambda: child_cpu(chimera_cmd(root, spec, *extra), env=env_for(src_dir))

    floor_code = FLOOR.format(src=src, root=str(root))
    rows: list[tuple[str, list[float], str]] = []
    rows.append(
        (
            "check / grep, one requirement at a time (CPU)",
            paired(args.repeat, grep_all, cold()),
            "goal <= 0.15",
        )
    )
    floor = lambda: child_cpu([sys.executable, "-c", floor_code])  # noqa: E731
    rows.append(
        (
            "check / read+decode floor (CPU, processes)",
            paired(args.repeat, floor, cold()),
            "goal <= 4",
        )
    )
    if args.baseline_src:
        rows.append(
            (
                "check now / check before (CPU)",
                paired(args.repeat, cold(args.baseline_src), cold()),
                f"before: {args.baseline_src}",
            )
        )
        rows.append(
            (
                "before: check / grep (CPU)",
                paired(args.repeat, grep_all, cold(args.baseline_src)),
                "",
            )
        )
        rows.append(
            ("before: check / floor (CPU)", paired(args.repeat, floor, cold(args.baseline_src)), "")
        )
    child_cpu(chimera_cmd(root, spec))  # fill the cache
    warm = lambda: child_cpu(chimera_cmd(root, spec))  # noqa: E731
    rows.append(("warm re-check / cold (CPU)", paired(args.repeat, cold(), warm), "goal <= 0.1"))
    if args.baseline_src:
        before_src: str = args.baseline_src

        def warm_before() -> float:
            return child_cpu(chimera_cmd(root, spec), env=env_for(before_src))

        warm_before()  # its own cache entries, where its format differs
        rows.append(
            (
                "warm now / warm before (CPU)",
                paired(args.repeat, warm_before, warm),
                f"before: {before_src}",
            )
        )

    # Spec load, 2,000 requirements: libyaml vs the pure parser.
    from chimera.spec import loader, yamlload

    big = _tree.write_spec((_tree.stdlib_checks(root) * 4)[:2000], work / "big" / "big.yaml")
    original = yamlload.parse_yaml

    def load(fast: bool) -> float:
        # load_spec's own reference is swapped (loader does not re-export it: attr-defined).
        loader.parse_yaml = functools.partial(original, fast=fast)  # type: ignore[attr-defined]
        try:
            return cpu_of(lambda: loader.load_spec([big]))
        finally:
            loader.parse_yaml = original  # type: ignore[attr-defined]

    rows.append(
        (
            "spec load 2,000 reqs, libyaml / pure (CPU)",
            paired(args.repeat, lambda: load(False), lambda: load(True)),
            "goal <= 0.2",
        )
    )

    # Audit: an ordinary append vs one that fsyncs (every append, before).
    from chimera.governance.audit import AuditLog

    log = AuditLog(work / "audit" / "audit.jsonl", "bench")
    n = 50

    def per_sync() -> float:
        return wall_of(lambda: [log.append("attempt", i=i) for i in range(n)]) / n

    def per_line() -> float:
        return wall_of(lambda: [log.append("tool_call", i=i) for i in range(n)]) / n

    audit = paired(args.repeat, per_sync, per_line)
    ms = statistics.median([per_line() for _ in range(3)]) * 1000
    rows.append(("audit append / fsync'd append (wall)", audit, f"{ms:.3f} ms per append"))

    # JSON size at 3,200 requirements.
    huge = _tree.write_spec((_tree.stdlib_checks(root) * 5)[:3200], work / "huge" / "huge.yaml")

    def size(*extra: str) -> int:
        cmd = chimera_cmd(root, huge, "--json", "--no-cache", *extra)
        return len(subprocess.run(cmd, capture_output=True, cwd="/").stdout)

    all_b, bounded = size("--all-evidence"), size()
    rows.append(
        (
            "JSON at 3,200 reqs, bounded / all",
            [bounded / all_b],
            f"{bounded / 1e6:.1f} MB vs {all_b / 1e6:.1f} MB",
        )
    )

    lines += [row(name, ratios, note) for name, ratios, note in rows]
    print("\n".join(lines))
    if not args.no_docs:  # the Performance page includes it (bench/_docs_table.py)
        print(f"wrote {_docs_table.write('performance-check', lines[2:])}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
