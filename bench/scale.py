"""The [speed] table: every row a ratio against a baseline measured in the same run, in pairs.

Builds its trees (not run by CI): the standard-library git copy of :mod:`speed` (1,790
``.py`` files), and larger trees made of copies of the standard library's ``.py`` files
(hard links, committed to git) — 10,000 and 50,000 files by default. Rows:

* ``cold/floor``: ``chimera check --no-cache`` with :mod:`speed`'s ~650-requirement spec over
  the lean read floor (:mod:`floor`: git's list, each ``.py`` file read and decoded once,
  nothing of Chimera imported), CPU of whole processes;
* ``fill/no-cache``: the first run with the caches on (none present) over ``--no-cache``;
* ``check/grep``: the cold check over GNU grep doing the same requirements one at a time;
* ``per file at N``: at the largest tree, with 100 requirements, the check's CPU per file over
  the floor's (both as marginal cost per file between the two largest trees, and whole);
* ``peak RSS``: of the check process at the largest tree (MiB);
* ``5,000 requirements``: CPU seconds of ``chimera check --no-cache`` with 5,000 distinct
  requirements (``defines``, ``absent``, ``contains``) on the 1,790 files;
* ``warm/cold``: a re-check of an unchanged tree (caches on) over ``--no-cache``;
* ``edit/cold``: at 10,000 files, one file edited between a cache-filling run and the re-check;
* ``plugin``: ``pytest --chimera-spec`` with 2,000 ``contains`` items over 2,000 plain tests;
* ``demo``: ``chimera demo`` (four attempts, scripted model, the sandbox or the scrubbed
  environment), wall seconds.

Each ratio row is ``--repeat`` pairs (at least 5), run back to back and alternating which side
runs first, so both see the same load; the table gives the median and the spread of the
paired ratios, and the load average before and after. ``--baseline-src DIR`` adds the same
rows run with an older source tree (``PYTHONPATH=DIR``). The table is written to
``docs/snippets/performance-speed.md`` (the Performance page includes it; its format is
:mod:`_docs_table`'s), and as a page of its own to ``--out`` when given.

Usage: ``python bench/scale.py [--repeat 5] [--sizes 10000 50000] [--work DIR]
[--baseline-src DIR] [--skip ROW ...] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import _tree
import yaml
from spec_check import DEBUG_PATTERNS, GLOBAL_PATTERNS, HEADER_PATTERNS, definitions, modules

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parent)
GIT = ["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=bench"]


# -- measuring ---------------------------------------------------------------------------


def env_for(src: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src:
        env["PYTHONPATH"] = src
    return env


@dataclass
class Run:
    cpu: float
    wall: float
    rss_mib: float


def measure(cmd: list[str], *, src: str | None = None, cwd: str = "/") -> Run:
    """CPU (user + system, the process and the children it waited for), wall time and peak
    resident memory of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env_for(src), cwd=cwd
    )
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    wall = time.perf_counter() - start
    return Run(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024)


def paired(
    repeat: int, base: Callable[[], float], ours: Callable[[], float]
) -> list[tuple[float, float]]:
    """``repeat`` (baseline, measured) pairs, alternating which side runs first."""
    out: list[tuple[float, float]] = []
    for i in range(repeat):
        if i % 2:
            o = ours()
            out.append((base(), o))
        else:
            b = base()
            out.append((b, ours()))
    return out


@dataclass
class Row:
    name: str
    goal: str
    pairs: list[tuple[float, float]] = field(default_factory=list)
    value: str = ""
    """Set for rows that are not a ratio (seconds, MiB): the median, then ``spread``."""
    spread: str = ""
    note: str = ""
    met: bool | None = None
    before: str = ""
    """The same measure with ``--baseline-src`` (median), when given."""

    def ratio(self) -> tuple[float, float, float]:
        ratios = sorted(m / b for b, m in self.pairs if b > 0)
        return statistics.median(ratios), ratios[0], ratios[-1]

    def cells(self) -> list[str]:
        if self.value:
            return [
                self.value,
                self.spread or f"{self.value}–{self.value}",
                self.before,
                self.goal,
                _met(self.met),
                self.note,
            ]
        med, lo, hi = self.ratio()
        base = statistics.median(b for b, _ in self.pairs)
        ours = statistics.median(m for _, m in self.pairs)
        note = f"{ours:.3g} / {base:.3g}" + (f"; {self.note}" if self.note else "")
        return [f"{med:.3g}", f"{lo:.3g}–{hi:.3g}", self.before, self.goal, _met(self.met), note]


def _met(met: bool | None) -> str:
    return "" if met is None else ("yes" if met else "**no**")


def chimera(root: Path, spec: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "chimera", "check", "--root", str(root), str(spec), *extra]


def floor(root: Path) -> list[str]:
    return [sys.executable, str(HERE / "floor.py"), str(root)]


# -- trees and specs ---------------------------------------------------------------------


def copies_tree(dest: Path, files: int) -> Path:
    """``files`` ``.py`` files: copies of the standard library's (hard links where the file
    system allows), in ``c0/``, ``c1/``..., committed to git (reused when present)."""
    if (dest / ".git").is_dir():
        return dest
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    sources = sorted(
        p
        for p in stdlib.rglob("*.py")
        if "site-packages" not in p.parts and "__pycache__" not in p.parts and p.is_file()
    )
    made = 0
    copy = 0
    while made < files:
        for src in sources:
            if made >= files:
                break
            target = dest / f"c{copy}" / src.relative_to(stdlib)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, target)
            except OSError:
                shutil.copyfile(src, target)
            made += 1
        copy += 1
    subprocess.run([*GIT, "init", "-q"], cwd=dest, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=dest, check=True)
    subprocess.run([*GIT, "commit", "-qm", "copies"], cwd=dest, check=True)
    return dest


def scale_spec(path: Path) -> Path:
    """100 requirements for a copies tree: 50 ``absent`` over every file or a package at
    any depth, 20 ``contains`` of one file, 10 ``match: all``, 20 ``defines``."""
    rng = random.Random(2026)
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    reqs: list[dict[str, object]] = []
    for pattern in GLOBAL_PATTERNS:
        reqs.append({"absent": {"paths": ["**/*.py"], "pattern": pattern}})
    packages = ["json", "email", "http", "xml", "logging", "asyncio", "unittest", "concurrent"]
    for i, pattern in enumerate(DEBUG_PATTERNS):
        pkg = packages[i % len(packages)]
        reqs.append({"absent": {"paths": [f"**/{pkg}/**/*.py"], "pattern": pattern}})
    mods = modules(stdlib)
    for name in rng.sample(mods, 20):
        reqs.append({"contains": {"path": f"c0/{name}", "pattern": rng.choice(HEADER_PATTERNS)}})
    for pkg in [*packages, "importlib", "urllib"]:
        pattern = r"^(\"\"\"|#|import|from)"
        reqs.append({"contains": {"paths": [f"c0/{pkg}/*.py"], "pattern": pattern, "match": "all"}})
    picked = 0
    for name in rng.sample(mods, 40):
        for symbol, kind in definitions(stdlib / name, 1, rng):
            if picked < 20:
                reqs.append({"defines": {"path": f"c0/{name}", "symbol": symbol, "kind": kind}})
                picked += 1
    entries = [{"id": f"s{i:03d}", **r} for i, r in enumerate(reqs[:100])]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"requirements": entries}, sort_keys=False), encoding="utf-8")
    return path


def many_spec(root: Path, path: Path, total: int = 5000) -> Path:
    """``total`` distinct requirements on the standard-library tree: ``defines`` of real
    symbols, ``contains`` of their definition lines in their module, ``absent`` of calls to
    them in other packages."""
    rng = random.Random(5000)
    found: list[tuple[str, str, str]] = []
    for py in sorted(root.rglob("*.py")):
        rel = py.relative_to(root).as_posix()
        if rel.startswith(("test/", "idlelib/idle_test/", "lib2to3/tests/")):
            continue
        try:
            tree = ast.parse(py.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_"):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                found.append((rel, node.name, kind))
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                        found.append((rel, f"{node.name}.{item.name}", "method"))
    rng.shuffle(found)
    tops = sorted({rel.split("/")[0] for rel, _, _ in found if "/" in rel})
    reqs: list[dict[str, object]] = []
    for rel, name, kind in found:
        if len(reqs) >= total:
            break
        n = len(reqs) % 3
        leaf = name.rsplit(".", 1)[-1]
        if n == 0:
            reqs.append({"defines": {"path": rel, "symbol": name, "kind": kind}})
        elif n == 1:
            word = "class" if kind == "class" else "def"
            reqs.append({"contains": {"path": rel, "pattern": rf"^\s*{word} {leaf}\b"}})
        else:
            scope = rng.choice(tops)
            reqs.append({"absent": {"paths": [f"{scope}/**/*.py"], "pattern": rf"\b{leaf}\(x\)"}})
    entries = [{"id": f"m{i:04d}", **r} for i, r in enumerate(reqs)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"requirements": entries}, sort_keys=False), encoding="utf-8")
    return path


# -- rows ---------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000])
    parser.add_argument("--work", type=Path, default=None, help="where trees are kept")
    parser.add_argument("--baseline-src", default=None, help="an older source tree")
    parser.add_argument("--skip", nargs="*", default=[], help="rows to leave out (by key)")
    parser.add_argument("--out", type=Path, default=None, help="also write the page here")
    parser.add_argument(
        "--no-docs", action="store_true", help="do not write docs/snippets/performance-speed.md"
    )
    args = parser.parse_args()
    repeat = max(5, args.repeat)
    work = (args.work or Path(tempfile.mkdtemp(prefix="chimera-scale-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    skip = set(args.skip)
    load_before = os.getloadavg()
    rows: list[Row] = []

    def cpu(cmd: list[str], src: str | None = None) -> Callable[[], float]:
        return lambda: measure(cmd, src=src).cpu

    old_src: str | None = args.baseline_src

    def before(
        row: Row, base: Callable[[], float], ours: Callable[[str], Callable[[], float]]
    ) -> None:
        """``row.before``: the median paired ratio with the baseline source tree."""
        if old_src is not None:
            pairs = paired(repeat, base, ours(old_src))
            row.before = f"{statistics.median(m / b for b, m in pairs if b > 0):.3g}"

    stdlib = _tree.stdlib_tree(work / "stdlib")
    spec = _tree.write_spec(_tree.stdlib_checks(stdlib), work / "spec" / "bench.yaml")
    cold = cpu(chimera(stdlib, spec, "--no-cache"))
    lean = cpu(floor(stdlib))

    if "floor" not in skip:
        row = Row("cold `--no-cache` check / lean read floor (CPU)", "≤ 8")
        row.pairs = paired(repeat, lean, cold)
        row.met = row.ratio()[0] <= 8
        before(row, lean, lambda src: cpu(chimera(stdlib, spec, "--no-cache"), src))
        rows.append(row)

    if "fill" not in skip:

        def fill(src: str | None = None) -> Callable[[], float]:
            def run() -> float:
                shutil.rmtree(stdlib / ".chimera", ignore_errors=True)
                return measure(chimera(stdlib, spec), src=src).cpu

            return run

        row = Row("cache-filling cold / `--no-cache` (CPU)", "≤ 1.1")
        row.pairs = paired(repeat, cold, fill())
        row.met = row.ratio()[0] <= 1.1
        if old_src is not None:
            old_cold = cpu(chimera(stdlib, spec, "--no-cache"), old_src)
            pairs = paired(repeat, old_cold, fill(old_src))
            row.before = f"{statistics.median(m / b for b, m in pairs):.3g}"
        rows.append(row)

    if "grep" not in skip:
        from speed import grep_jobs

        jobs = grep_jobs(stdlib)

        def grep_all() -> float:
            return sum(measure(j).cpu for j in jobs)

        row = Row("check CPU / GNU grep one requirement at a time", "≤ 0.2")
        row.pairs = paired(repeat, grep_all, cold)
        row.met = row.ratio()[0] <= 0.2
        before(row, grep_all, lambda src: cpu(chimera(stdlib, spec, "--no-cache"), src))
        rows.append(row)

    if "warm" not in skip:
        row = Row("warm re-check of an unchanged tree / cold (CPU)", "≤ 0.1")
        if old_src is not None:
            shutil.rmtree(stdlib / ".chimera", ignore_errors=True)
            measure(chimera(stdlib, spec), src=old_src)  # fill its caches
            old_cold = cpu(chimera(stdlib, spec, "--no-cache"), old_src)
            pairs = paired(repeat, old_cold, cpu(chimera(stdlib, spec), old_src))
            row.before = f"{statistics.median(m / b for b, m in pairs):.3g}"
        shutil.rmtree(stdlib / ".chimera", ignore_errors=True)
        measure(chimera(stdlib, spec))  # fill the caches
        row.pairs = paired(repeat, cold, cpu(chimera(stdlib, spec)))
        row.met = row.ratio()[0] <= 0.1
        rows.append(row)

    if "many" not in skip:
        many = many_spec(stdlib, work / "many" / "many.yaml")
        runs: list[float] = []
        old_runs: list[float] = []
        for _ in range(repeat):
            runs.append(measure(chimera(stdlib, many, "--no-cache")).cpu)
            if old_src is not None:
                old_runs.append(measure(chimera(stdlib, many, "--no-cache"), src=old_src).cpu)
        med = statistics.median(runs)
        count = many.read_text(encoding="utf-8").count("\n- id: ")
        row = Row(
            f"{count:,} requirements on 1,790 files, CPU seconds",
            "≤ 1.5 s",
            value=f"{med:.2f}",
            spread=f"{min(runs):.2f}–{max(runs):.2f}",
            note="CPU seconds, not a ratio",
            met=med <= 1.5,
        )
        if old_runs:
            row.before = f"{statistics.median(old_runs):.2f}"
        rows.append(row)

    sizes = sorted(args.sizes)
    if "scale" not in skip and sizes:
        sspec = scale_spec(work / "scale" / "scale.yaml")
        per: dict[int, tuple[list[tuple[float, float]], float]] = {}
        old_per: dict[int, tuple[list[tuple[float, float]], float]] = {}
        for n in sizes:
            root = copies_tree(work / f"copies-{n}", n)
            rss: list[float] = []

            def check_at(root: Path = root, rss: list[float] = rss) -> float:
                run = measure(chimera(root, sspec, "--no-cache"))
                rss.append(run.rss_mib)
                return run.cpu

            per[n] = (paired(repeat, cpu(floor(root)), check_at), statistics.median(rss))
            if old_src is not None:
                old_rss: list[float] = []

                def old_at(root: Path = root, rss: list[float] = old_rss) -> float:
                    run = measure(chimera(root, sspec, "--no-cache"), src=old_src)
                    rss.append(run.rss_mib)
                    return run.cpu

                old_per[n] = (paired(repeat, cpu(floor(root)), old_at), statistics.median(old_rss))
        big = sizes[-1]
        row = Row(f"{big:,} files, 100 requirements: CPU / floor (whole runs)", "")
        row.pairs = per[big][0]
        if big in old_per:
            row.before = f"{statistics.median(m / b for b, m in old_per[big][0]):.3g}"
        rows.append(row)
        if len(sizes) > 1:
            small = sizes[-2]
            slopes: list[tuple[float, float]] = []
            for (fb, cb), (fs, cs) in zip(per[big][0], per[small][0], strict=True):
                slopes.append(((fb - fs) / (big - small), (cb - cs) / (big - small)))
            row = Row(f"{big:,} files: CPU per file / floor per file (marginal)", "≤ 6")
            row.pairs = slopes
            med_floor = statistics.median(b for b, _ in slopes) * 1e6
            med_check = statistics.median(m for _, m in slopes) * 1e6
            row.note = f"{med_check:.0f} µs vs {med_floor:.0f} µs a file, {small:,}→{big:,}"
            row.met = row.ratio()[0] <= 6
            if big in old_per and small in old_per:
                old_slopes = [
                    ((fb - fs), (cb - cs))
                    for (fb, cb), (fs, cs) in zip(old_per[big][0], old_per[small][0], strict=True)
                ]
                row.before = f"{statistics.median(m / b for b, m in old_slopes if b > 0):.3g}"
            rows.append(row)
        mib = per[big][1]
        row = Row(f"peak RSS at {big:,} files, MiB", "≤ 150", value=f"{mib:.0f}", met=mib <= 150)
        row.note = "MiB, not a ratio (median of the runs)"
        if big in old_per:
            row.before = f"{old_per[big][1]:.0f}"
        rows.append(row)

    if "edit" not in skip and sizes:
        n = sizes[0]
        root = copies_tree(work / f"copies-{n}", n)
        sspec = scale_spec(work / "scale" / "scale.yaml")
        edited = root / "c0" / "json" / "__init__.py"
        original = edited.read_bytes()
        measure(chimera(root, sspec))  # fill the caches
        counter = [0]

        def recheck(root: Path = root) -> float:
            counter[0] += 1
            edited.write_bytes(original + f"\n# edit {counter[0]}\n".encode())
            return measure(chimera(root, sspec)).cpu

        def old_recheck(root: Path = root) -> float:
            counter[0] += 1
            edited.write_bytes(original + f"\n# edit {counter[0]}\n".encode())
            return measure(chimera(root, sspec), src=old_src).cpu

        try:
            row = Row(f"one file edited in a {n:,}-file tree: re-check / cold (CPU)", "≤ 0.1")
            if old_src is not None:
                shutil.rmtree(root / ".chimera", ignore_errors=True)
                measure(chimera(root, sspec), src=old_src)
                old_cold = cpu(chimera(root, sspec, "--no-cache"), old_src)
                pairs = paired(repeat, old_cold, old_recheck)
                row.before = f"{statistics.median(m / b for b, m in pairs):.3g}"
                shutil.rmtree(root / ".chimera", ignore_errors=True)
                measure(chimera(root, sspec))
            row.pairs = paired(repeat, cpu(chimera(root, sspec, "--no-cache")), recheck)
            row.met = row.ratio()[0] <= 0.1
            rows.append(row)
        finally:
            edited.write_bytes(original)

    if "plugin" not in skip:
        sys.path.insert(0, str(HERE))
        import plugin_overhead as po

        spec_dir = work / "plugin-spec"
        plain_dir = work / "plugin-plain"
        if not spec_dir.exists():
            po.make_spec_project(spec_dir, 2000, 100)
            po.make_plain_project(plain_dir, 2000)

        def plain() -> float:
            return po.run(plain_dir)[0]

        def spec_items() -> float:
            return po.run(spec_dir, *po.SPEC, ok=(0, 1))[0]

        row = Row("`pytest --chimera-spec` 2,000 items / 2,000 plain tests (CPU)", "≤ 1.0")
        row.pairs = paired(repeat, plain, spec_items)
        row.met = row.ratio()[0] <= 1.0
        if old_src is not None:
            pairs = paired(
                repeat, plain, lambda: po.run(spec_dir, *po.SPEC, src=old_src, ok=(0, 1))[0]
            )
            row.before = f"{statistics.median(m / b for b, m in pairs):.3g}"
        rows.append(row)

    if "demo" not in skip:
        walls: list[float] = []
        old_walls: list[float] = []
        demo = [sys.executable, "-m", "chimera", "demo", "--quiet", "--dir"]
        for _ in range(repeat):
            for src, into in ((None, walls), (old_src, old_walls)):
                if into is old_walls and old_src is None:
                    continue
                home = Path(tempfile.mkdtemp(prefix="chimera-demo-", dir=work)) / "project"
                into.append(measure([*demo, str(home)], src=src).wall)
        med = statistics.median(walls)
        rows.append(
            Row(
                "demo run (4 attempts), wall seconds",
                "≤ 2.5",
                value=f"{med:.2f}",
                spread=f"{min(walls):.2f}–{max(walls):.2f}",
                note="wall seconds, not a ratio",
                met=med <= 2.5,
                before=f"{statistics.median(old_walls):.2f}" if old_walls else "",
            )
        )

    load_after = os.getloadavg()
    text = render(rows, load_before, load_after, repeat)
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    if (HERE.parent / "docs").is_dir() and not args.no_docs:
        from _docs_table import write

        print(f"wrote {write('performance-speed', table(rows))}")
    return 0


HEADER = "| measure | median ratio | spread (paired runs) | before | goal | met | note |"


def table(rows: list[Row]) -> list[str]:
    """The Markdown table (the docs snippet's format: ``bench/_docs_table.py``)."""
    lines = [HEADER, "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append("| " + " | ".join([row.name, *row.cells()]) + " |")
    return lines


def render(
    rows: list[Row], before: tuple[float, float, float], after: tuple[float, float, float], n: int
) -> str:
    lines = [
        "# Performance: the [speed] table",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python bench/scale.py` on "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average {before[0]:.1f} / {before[1]:.1f} / {before[2]:.1f} before, "
        f"{after[0]:.1f} / {after[1]:.1f} / {after[2]:.1f} after (1, 5, 15 min). Each ratio "
        f"is the median of {n} pairs run back to back, alternating which side runs first; "
        "the spread is the min–max of the paired ratios; the last column gives the medians "
        "(ours / baseline, seconds). *before* is the same measure run with the source tree "
        "given as `--baseline-src` (the tree before this work), in the same run.",
        "",
        *table(rows),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
