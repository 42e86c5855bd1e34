"""Benchmark: check_drift over the installed CPython standard library vs GNU grep.

Generates several hundred realistic requirements programmatically —

* ``absent`` of debug leftovers (``breakpoint()``, ``pdb.set_trace``, ``print(...)``
  debugging, ``FIXME``/``XXX`` markers...) per stdlib package and over the whole library;
* ``contains`` of header lines (license / copyright, ``__all__``, module docstrings) in
  single modules, and over packages with ``match: all``;
* ``defines`` of real classes, methods and functions, found by parsing stdlib modules
  (untimed) —

then times :func:`chimera.spec.drift.check_drift` against GNU grep doing the same
requirements one by one (``grep -rlE`` for a scope, ``grep -cE`` for one file or a
definition), both in this run, with the page cache warmed first. Prints both times and the
ratio (target: at most 0.5). Read-only: nothing is written into the standard library.

Usage: ``python bench/spec_check.py [--repeat N] [--stdlib DIR]``. Not run by CI.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import random
import resource
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions, EngineStats
from chimera.spec.engine.files import Target, load_text, read_bytes
from chimera.spec.kinds import Absent, Contains, Defines
from chimera.spec.kinds.defines import SymbolKind
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Check, Requirement, SourceLocation, Spec, SpecFile

# Patterns valid, and meaning the same, in Python's `regex` and POSIX ERE (GNU grep -E).
DEBUG_PATTERNS = [
    r"breakpoint\(\)",
    r"pdb\.set_trace\(",
    r"import pdb",
    r"print\(.*DEBUG",
    r"print\(f?['\"]debug",
    r"FIXME",
    r"XXX:",
    r"console\.log\(",
    r"^[[:space:]]*import ipdb",
    r"sys\.stdout\.write\(.debug",
]
GLOBAL_PATTERNS = [
    r"breakpoint\(\)",
    r"pdb\.set_trace\(\)",
    r"from pdb import",
    r"TODO\(remove\)",
    r"^print\(",
    r"os\.system\(",
    r"\beval\(input",
    r"pickle\.loads\(request",
    r"yaml\.load\([^)]*\)$",
    r"subprocess\.call\(.*shell=True",
    r"DEBUG = True",
    r"assert False, ['\"]unreachable",
    r"password *= *['\"][a-z]",
    r"api_key *= *['\"]",
    r"^import (pdb|ipdb)$",
    r"HACK:",
    r"time\.sleep\([0-9]{3,}\)",
    r"exec\(compile\(",
    r"__import__\(['\"]os['\"]\)",
    r"except: *pass",
    r"while True: *pass",
    r"raise NotImplemented\b",
    r"\bxrange\(",
    r"\bunicode\(",
    r"print [a-z\"']",
    r"has_key\(",
    r"\.iteritems\(\)",
    r"^from __future__ import print_function",
    r"urllib2",
    r"basestring",
    r"copyright \(c\) 19[0-9]{2}",
    r"Licensed under the Apache License",
    r"GNU General Public License",
    r"SPDX-License-Identifier",
    r"Python Software Foundation",
    r"def test_[a-z_]+\(self\):",
    r"@unittest\.skip\(",
    r"warnings\.warn\(.*DeprecationWarning",
    r"# type: ignore",
    r"# noqa",
]
HEADER_PATTERNS = [
    r"^__all__ = ",
    r"^\"\"\"",
    r"^import ",
    r"Copyright \(C\)",
    r"^#",
]


@dataclass(frozen=True)
class Job:
    """One requirement and the grep command that checks the same thing."""

    check: Check
    grep: list[str]


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"]).resolve()


def packages(root: Path) -> list[str]:
    out = []
    for entry in sorted(root.iterdir()):
        is_package = entry.is_dir() and (entry / "__init__.py").is_file()
        if is_package and not entry.is_symlink() and entry.name not in ("site-packages", "test"):
            out.append(entry.name)
    return out


def modules(root: Path) -> list[str]:
    return sorted(
        p.name
        for p in root.glob("*.py")
        if p.is_file() and not p.is_symlink() and p.stat().st_size > 2000
    )


def definitions(path: Path, limit: int, rng: random.Random) -> list[tuple[str, str]]:
    """Real (symbol, kind) pairs defined in ``path`` (found with ast, untimed)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return []
    found: list[tuple[str, str]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            found.append((node.name, "class"))
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.append((f"{node.name}.{item.name}", "method"))
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            found.append((node.name, "function"))
    rng.shuffle(found)
    return found[:limit]


def grep_scope(pattern: str, root: Path, sub: str | None, fixed: bool = False) -> list[str]:
    target = str(root / sub) if sub else str(root)
    return [
        "grep",
        "-rl" + ("F" if fixed else "E"),
        "--include=*.py",
        "--exclude-dir=site-packages",
        "-e",
        pattern,
        target,
    ]


def build_jobs(root: Path, rng: random.Random) -> list[Job]:
    jobs: list[Job] = []
    pkgs = packages(root)
    # absent of debug leftovers, per package
    for pkg in pkgs:
        for pattern in DEBUG_PATTERNS:
            jobs.append(
                Job(
                    Absent(paths=[f"{pkg}/**/*.py"], pattern=pattern),
                    grep_scope(pattern, root, pkg),
                )
            )
    # absent over the whole library
    for pattern in GLOBAL_PATTERNS:
        jobs.append(
            Job(
                Absent(paths=["**/*.py"], exclude=["site-packages/"], pattern=pattern),
                grep_scope(pattern, root, None),
            )
        )
    # a literal (regex: false) sweep
    for literal in ["import pdb; pdb.set_trace()", "print('here')", "# XXX remove"]:
        jobs.append(
            Job(
                Absent(paths=["**/*.py"], exclude=["site-packages/"], pattern=literal, regex=False),
                grep_scope(literal, root, None, fixed=True),
            )
        )
    # contains of headers in single modules
    mods = modules(root)
    for name in rng.sample(mods, min(60, len(mods))):
        pattern = rng.choice(HEADER_PATTERNS)
        jobs.append(
            Job(
                Contains(path=name, pattern=pattern),
                ["grep", "-cE", "-e", pattern, str(root / name)],
            )
        )
    # contains with match: all over packages (every module starts with a docstring/comment)
    for pkg in pkgs[:20]:
        pattern = r"^(\"\"\"|#|import|from)"
        jobs.append(
            Job(
                Contains(paths=[f"{pkg}/*.py"], pattern=pattern, match=MatchMode.ALL),
                ["grep", "-rLE", "--include=*.py", "-e", pattern, str(root / pkg)],
            )
        )
    # defines of real classes / methods / functions
    for name in rng.sample(mods, min(45, len(mods))):
        for symbol, kind in definitions(root / name, 5, rng):
            leaf = symbol.rsplit(".", 1)[-1]
            grep_pattern = rf"^[[:space:]]*(async[[:space:]]+)?(def|class)[[:space:]]+{leaf}\b"
            jobs.append(
                Job(
                    Defines(path=name, symbol=symbol, kind=SymbolKind(kind)),
                    ["grep", "-cE", "-e", grep_pattern, str(root / name)],
                )
            )
    return jobs


def warm(root: Path) -> int:
    """Read every candidate file once (untimed) so both sides start with a warm cache."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "site-packages"]
        for name in filenames:
            if name.endswith(".py"):
                with contextlib.suppress(OSError):
                    total += len(Path(dirpath, name).read_bytes())
    return total


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float
    """user + system seconds of the process (engine) or of the grep children."""


def time_grep(jobs: list[Job]) -> Timing:
    env = dict(os.environ)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for job in jobs:
        subprocess.run(job.grep, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def time_engine(spec: Spec, root: Path) -> tuple[Timing, EngineStats, dict[str, int]]:
    stats = EngineStats()
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    session = DriftSession(spec, root, options=EngineOptions(listing="walk"), stats=stats)
    report = session.report()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu), stats, report.counts()


def time_floor(root: Path, stats: EngineStats) -> Timing:
    """Reading and decoding every file the engine read, once: the cost floor of a pass."""
    options = EngineOptions()
    scratch = EngineStats()
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    for real in stats.reads:
        load_text(Target(real, real), options, scratch, read_bytes)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    return Timing(wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per side (best is kept)")
    parser.add_argument("--stdlib", type=Path, default=None, help="tree to check")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    if shutil.which("grep") is None:
        print("GNU grep is required for the baseline", file=sys.stderr)
        return 2
    root = (args.stdlib or stdlib_root()).resolve()
    rng = random.Random(args.seed)
    jobs = build_jobs(root, rng)
    loc = SourceLocation("bench.yaml", 1, 1)
    reqs = tuple(Requirement(f"r{i}", job.check, loc) for i, job in enumerate(jobs))
    spec = Spec((SpecFile(Path("bench.yaml"), reqs),))
    kinds: dict[str, int] = {}
    for r in reqs:
        kinds[r.kind] = kinds.get(r.kind, 0) + 1
    grep_version = subprocess.run(["grep", "--version"], capture_output=True, text=True)
    print(f"tree: {root}")
    print(f"requirements: {len(reqs)} {kinds}")
    print(
        f"baseline: {grep_version.stdout.splitlines()[0]}, LC_ALL={os.environ.get('LC_ALL', '')!r}"
    )
    size = warm(root)
    print(f"warmed {size / 1e6:.1f} MB of .py files")
    grep_times: list[Timing] = []
    engine_times: list[Timing] = []
    stats = EngineStats()
    counts: dict[str, int] = {}
    for _ in range(args.repeat):
        grep_times.append(time_grep(jobs))
        timing, stats, counts = time_engine(spec, root)
        engine_times.append(timing)

    def runs(ts: list[Timing]) -> str:
        return ", ".join(f"{t.wall:.2f}/{t.cpu:.2f}" for t in ts)

    gw, ew = min(t.wall for t in grep_times), min(t.wall for t in engine_times)
    gc, ec = min(t.cpu for t in grep_times), min(t.cpu for t in engine_times)
    print(f"grep, one requirement at a time: wall {gw:.3f}s cpu {gc:.3f}s")
    print(f"    runs (wall/cpu): {runs(grep_times)}")
    print(f"check_drift, one session:        wall {ew:.3f}s cpu {ec:.3f}s")
    print(f"    runs (wall/cpu): {runs(engine_times)}")
    print(f"ratio check_drift / grep: wall {ew / gw:.3f}, cpu {ec / gc:.3f}  (target <= 0.5)")
    floor = time_floor(root, stats)
    print(
        f"floor (read + decode every file once): wall {floor.wall:.3f}s cpu {floor.cpu:.3f}s; "
        f"check_drift is {ec / max(floor.cpu, 1e-9):.1f}x the floor (cpu)"
    )
    print(
        f"engine work: {len(stats.reads)} files read "
        f"(max {max(stats.reads.values(), default=0)}x each), "
        f"{len(stats.compiles)} patterns compiled "
        f"(max {max(stats.compiles.values(), default=0)}x), "
        f"{stats.passes} pass(es), {stats.regex_runs} regex runs, "
        f"{stats.prefilter_skips} pattern/file pairs skipped by the literal prefilter, "
        f"{sum(stats.parses.values())} modules parsed"
    )
    print(f"statuses: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
