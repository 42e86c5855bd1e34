"""Benchmark: what the workspace's total write cap costs a sandboxed command.

The cap (:mod:`chimera.sandbox.capped`) starts each command through an outer bubblewrap and
a Python supervisor that mounts a size-limited overlay, and merges the command's writes back
when it ends. Measured here against the same sandbox without the cap, in the same run, on a
workspace of ``--files`` small files:

* ``true`` — the fixed cost per command (the outer namespace, the supervisor, the mounts);
* ``write`` — a command that writes ``--write-files`` new files of 4 KiB (the merge's cost
  grows with what was written);
* ``edit`` — a command that appends a line to one existing 1 MiB file (copy-up: the whole
  file goes to the overlay, and back).

Medians of ``--rounds`` runs; the ratio is capped / uncapped. The cap also reads the
supervisor's status file; a command's own duration is the same on both sides.

Usage: ``python bench/sandbox_write_cap.py [--files 2000] [--write-files 200] [--rounds 15]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from chimera.sandbox import Sandbox, SandboxLimits, bwrap_available, probe_bwrap
from chimera.sandbox.limits import GIB


def make_tree(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"pkg{i % 40:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"VALUE_{i} = {i}\n" * 8, encoding="utf-8")
    (root / "big.bin").write_bytes(b"x" * (1 << 20))


def timed(sandbox: Sandbox, command: str, root: Path, rounds: int, reset: str) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        result = sandbox.run(command, cwd=root, timeout=120)
        samples.append(time.perf_counter() - start)
        assert result.ok, result.output
        sandbox.run(reset, cwd=root, timeout=120)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--write-files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if not bwrap_available():
        raise SystemExit(f"bubblewrap unusable: {probe_bwrap().reason}")
    with tempfile.TemporaryDirectory(prefix="chimera-bench-cap-") as folder:
        root = Path(folder) / "ws"
        root.mkdir()
        make_tree(root, args.files)
        plain = Sandbox(root, limits=SandboxLimits(write_cap_bytes=None))
        capped = Sandbox(root, limits=SandboxLimits(write_cap_bytes=GIB))
        write = (
            "mkdir -p out && i=0; while [ $i -lt "
            f"{args.write_files} ]; do head -c 4096 /dev/zero > out/f$i; i=$((i+1)); done"
        )
        cases = {
            "true": ("true", "true"),
            "write": (write, "rm -rf out"),
            "edit": ("echo more >> big.bin", "head -c 1048576 big.bin > t && mv t big.bin"),
        }
        print(f"workspace: {args.files} files; {args.rounds} rounds; medians in ms")
        print(f"{'case':<8}{'uncapped':>10}{'capped':>10}{'ratio':>8}{'added':>8}")
        for name, (command, reset) in cases.items():
            base = timed(plain, command, root, args.rounds, reset)
            cap = timed(capped, command, root, args.rounds, reset)
            print(
                f"{name:<8}{base * 1000:>10.1f}{cap * 1000:>10.1f}{cap / base:>8.2f}"
                f"{(cap - base) * 1000:>8.1f}"
            )


if __name__ == "__main__":
    main()
