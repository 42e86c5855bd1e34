"""Paired timing of ``paths`` scopes that name one literal file: one ``absent`` per file.

Writes a Spec with one ``absent`` requirement per ``.py`` file of the standard-library git
tree (``paths: [<the file>]``), then runs ``chimera check --no-cache`` on it in fresh
processes, this source tree and ``--baseline-src`` back to back, and prints the CPU of each
pair and the median ratio. Also prints the in-process CPU spent selecting scopes.

Usage: ``python bench/literal_scopes.py [--repeat 3] [--tree DIR] [--baseline-src DIR]``.
Not run by CI.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _tree
import yaml
from speed import child_cpu, env_for

SCOPE_CPU = """
import sys, time
sys.path.insert(0, {src!r})
from pathlib import Path
from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions
from chimera.spec.engine.scopes import ScopeSelection
from chimera.spec.loader import load_spec
spent = [0.0]
inner = ScopeSelection._select
def timed(self, *a):
    t = time.process_time()
    try:
        return inner(self, *a)
    finally:
        spent[0] += time.process_time() - t
ScopeSelection._select = timed
spec = load_spec(Path({spec!r}))
DriftSession(spec, Path({root!r}), options=EngineOptions(result_cache=False)).report()
print(f"{{spent[0]:.4f}}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=Path(tempfile.gettempdir()) / "bench/tree")
    parser.add_argument("--baseline-src", default=None, help="an older source tree to compare")
    args = parser.parse_args()
    root = _tree.stdlib_tree(args.tree.resolve())
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    files = sorted(f for f in listed.split("\0") if f.endswith(".py"))
    entries = [
        {"id": f"f{i:04d}", "absent": {"paths": [f], "pattern": r"breakpoint\(\)"}}
        for i, f in enumerate(files)
    ]
    spec = Path(tempfile.mkdtemp(prefix="chimera-literal-")) / "spec.yaml"
    spec.write_text(yaml.safe_dump({"requirements": entries}, sort_keys=False), encoding="utf-8")
    src = str(Path(__file__).resolve().parents[1])
    cmd = [sys.executable, "-m", "chimera", "check", "--no-cache", "--root", str(root), str(spec)]
    print(f"{len(files)} requirements, one literal file each")
    sides = [("this tree", src)] + ([("baseline", args.baseline_src)] if args.baseline_src else [])
    for name, where in sides:
        probe = SCOPE_CPU.format(src=where, spec=str(spec), root=str(root))
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        print(f"scope selection CPU, {name}: {out.stdout.strip() or out.stderr.strip()[-300:]} s")
    ratios = []
    for _ in range(args.repeat):
        ours = child_cpu(cmd, env=env_for(src))
        line = f"check CPU: this tree {ours:.3f} s"
        if args.baseline_src:
            base = child_cpu(cmd, env=env_for(args.baseline_src))
            ratios.append(ours / base)
            line += f", baseline {base:.3f} s, ratio {ours / base:.3f}"
        print(line)
        time.sleep(0)
    if ratios:
        print(f"median ratio {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
