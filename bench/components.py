"""What the [speed] goals not met are made of: the parts every check with today's semantics
pays, each measured on its own against a baseline in the same run.

Each part runs in a fresh process (``python bench/components.py --part NAME ...`` prints the
CPU seconds of that part alone, measured inside the process around it), paired with the
baseline process, alternating which side runs first; the table gives the median ratio and
its spread. The parts, on :mod:`scale`'s trees and specs (``--work``, built when missing):

* ``start``: the interpreter starting and exiting (``python -c pass``, whole process);
* ``imports``: importing what a check needs to validate and evaluate a Spec (the spec
  loader, the kinds and their pydantic models, the engine);
* ``load``: loading (parsing and validating) the Spec, every ``file:line:col`` kept;
* ``parse``: ``ast.parse`` of every file a ``defines`` names (a ``defines`` verdict needs the
  whole file parsed: a syntax error anywhere is ``error``, a miss names similar symbols);
* ``match``: one RE2 ``Set`` of the patterns whose scope is every file (``**/*.py``) over
  every file's bytes (the one-pass matcher's scan alone, its smallest group: no search for
  evidence or counts);
* ``read``: the lean read floor's own work inside its process (list, read, decode);
* ``record``: for an edited tree, what a re-check that re-reads only the edited file must
  still do before it searches anything: import the report cache's validation (no pydantic),
  load the stored record and stat every recorded file (``holds_for``'s first loop).

Rows: the sum ``start + imports + load + parse + match`` over the lean floor (the cold row's
lower bound, before any search, evaluation or output); the same parts for 5,000
requirements in CPU seconds; ``start + record`` over a cold check of the 10,000-file tree
(the edit row's lower bound without the Spec's models), and with ``imports`` added (with
them). Not run by CI.

Usage: ``python bench/components.py [--repeat 5] [--work DIR] [--no-docs]``; it writes its
table to ``docs/snippets/performance-components.md`` unless ``--no-docs``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent


def part(name: str, root: Path, spec: Path) -> float:
    """CPU seconds of one part, in this process (see the module docstring)."""
    if name == "start":
        return 0.0
    began = time.process_time()
    if name == "imports":
        import chimera.spec.drift
        import chimera.spec.kinds
        import chimera.spec.loader
        import chimera.spec.settings

        return time.process_time() - began
    if name == "record":
        from chimera.spec.engine import reports

        store = reports.ReportStore(str(root), max_bytes=1 << 40)
        entries = sorted((root / ".chimera" / "cache").glob("report-*.json"))
        raw = json.loads(entries[-1].read_bytes())
        record = reports.TreeRecord.from_json(raw["record"])
        assert store.root_real == str(root)
        for real in record.files:
            os.lstat(real)
        return time.process_time() - began
    if name == "read":
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
        ).stdout
        for rel in listed.decode("utf-8", "surrogateescape").split("\0"):
            if rel.endswith(".py"):
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    (root / rel).read_bytes().decode("utf-8")
        return time.process_time() - began
    import chimera.spec.drift  # noqa: F401  (imports are their own part)
    from chimera.spec.discovery import discover_spec_files
    from chimera.spec.loader import load_spec

    files = discover_spec_files([spec])
    began = time.process_time()
    loaded = load_spec(files)
    # As in the engine's pass: the cyclic collector would rescan every live object (the
    # Spec's models) again and again while syntax trees are allocated, to free nothing.
    gc.disable()
    if name == "load":
        return time.process_time() - began
    if name == "parse":
        import ast

        paths = sorted(
            {str(r.check.path) for r in loaded.requirements if r.kind == "defines" and r.check.path}  # type: ignore[attr-defined]
        )
        texts = [(p, (root / p).read_bytes()) for p in paths]
        began = time.process_time()
        for p, data in texts:
            with contextlib.suppress(SyntaxError, ValueError):
                ast.parse(data, p)
        return time.process_time() - began
    if name == "match":
        from chimera.spec.engine import EngineOptions, EngineStats
        from chimera.spec.engine.combined import CombinedMatcher, load_re2
        from chimera.spec.engine.patterns import PatternCache

        cache = PatternCache(EngineOptions(), EngineStats())
        compiled = []
        for r in loaded.requirements:
            # The patterns every file is searched for (the scope ``**/*.py``): each file is
            # scanned at least by their Set, so this bounds the matcher's scan from below.
            if r.kind in ("contains", "absent") and r.check.paths == ["**/*.py"]:  # type: ignore[attr-defined]
                compiled.append(cache.get(r.check.pattern, r.check.regex))  # type: ignore[attr-defined]
        matcher = CombinedMatcher(list({c.key: c for c in compiled}.values()), load_re2())
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
        ).stdout
        datas = []
        for rel in listed.decode("utf-8", "surrogateescape").split("\0"):
            if rel.endswith(".py"):
                try:
                    data = (root / rel).read_bytes()
                    text = data.decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                datas.append((text, data, data.isascii()))
        began = time.process_time()
        for text, data, ascii in datas:
            matcher.hits(text, data, ascii)
        return time.process_time() - began
    raise SystemExit(f"unknown part {name}")


def run_part(name: str, root: Path, spec: Path) -> float:
    """The part's CPU seconds, from a fresh process (``start``: the whole process's CPU)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if name == "start":
        before = os.times()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env, cwd="/")
        after = os.times()
        return (after.children_user - before.children_user) + (
            after.children_system - before.children_system
        )
    out = subprocess.run(
        [sys.executable, str(Path(__file__)), "--part", name, str(root), str(spec)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
    ).stdout
    return float(out.strip().splitlines()[-1])


def process_cpu(cmd: list[str], cwd: str = "/") -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = os.times()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = os.times()
    return (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", nargs=3, metavar=("NAME", "ROOT", "SPEC"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    if args.part:
        name, root, spec = args.part
        print(f"{part(name, Path(root), Path(spec)):.6f}")
        return 0

    sys.path.insert(0, str(HERE))
    import _tree
    import scale

    repeat = max(5, args.repeat)
    work = (args.work or Path(tempfile.mkdtemp(prefix="chimera-scale-"))).resolve()
    stdlib = _tree.stdlib_tree(work / "stdlib")
    spec = _tree.write_spec(_tree.stdlib_checks(stdlib), work / "spec" / "bench.yaml")
    many = scale.many_spec(stdlib, work / "many" / "many.yaml")
    load_before = os.getloadavg()
    rows: list[scale.Row] = []

    def floor() -> float:
        return process_cpu([sys.executable, str(HERE / "floor.py"), str(stdlib)])

    def parts(names: tuple[str, ...], root: Path, on: Path) -> Callable[[], float]:
        return lambda: sum(run_part(n, root, on) for n in names)

    cold_parts = ("start", "imports", "load", "parse", "match")
    for names, label in [
        (("start", "imports"), "interpreter and the check path's imports"),
        (("load",), "loading the Spec (≈650 requirements)"),
        (("parse",), "ast.parse of the files `defines` names"),
        (("match",), "one RE2 Set over every selected file"),
        (cold_parts, "all of the above (the cold row's lower bound)"),
    ]:
        row = scale.Row(f"{label} / lean read floor (CPU)", "≤ 8" if len(names) > 3 else "")
        row.pairs = scale.paired(repeat, floor, parts(names, stdlib, spec))
        if len(names) > 3:
            row.met = row.ratio()[0] <= 8
        rows.append(row)

    runs = [parts(cold_parts, stdlib, many)() for _ in range(repeat)]
    med = statistics.median(runs)
    rows.append(
        scale.Row(
            "5,000 requirements: the same parts (the row's lower bound), CPU seconds",
            "≤ 1.5 s",
            value=f"{med:.2f}",
            spread=f"{min(runs):.2f}–{max(runs):.2f}",
            note="seconds, not a ratio: before any search",
            met=med <= 1.5,
        )
    )

    n = 10000
    root = scale.copies_tree(work / f"copies-{n}", n)
    sspec = scale.scale_spec(work / "scale" / "scale.yaml")
    subprocess.run(scale.chimera(root, sspec), capture_output=True, check=False, cwd="/")

    def cold() -> float:
        return process_cpu(scale.chimera(root, sspec, "--no-cache"))

    for names, label in [
        (("start", "record"), "without the Spec's models"),
        (("start", "record", "imports"), "with them imported"),
    ]:
        row = scale.Row(
            f"one file edited in 10,000: stat and stored record, {label} / cold check (CPU)",
            "≤ 0.1",
        )
        row.pairs = scale.paired(repeat, cold, parts(names, root, sspec))
        row.met = row.ratio()[0] <= 0.1
        rows.append(row)

    load_after = os.getloadavg()
    text = scale.render(rows, load_before, load_after, repeat, by="bench/components.py")
    print(text)
    if not args.no_docs:
        from _docs_table import write

        print(f"wrote {write('performance-components', scale.table(rows))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
