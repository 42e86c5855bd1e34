"""The lean read floor: the least a process can do to look at the same files as a check.

One process that lists the files with git (``git ls-files -z``), reads each file whose name
ends with one of the given suffixes and decodes it once as UTF-8 — importing nothing of
Chimera (nor anything beyond the standard library's ``subprocess`` and ``sys``). Benchmarks
divide a check's CPU by this process's CPU, measured in the same run.

Usage: ``python bench/floor.py ROOT [SUFFIX ...]`` (default suffix ``.py``). Prints the
number of files and bytes read.
"""

# Plain open() and try/except on purpose: the floor imports nothing it does not need.
# ruff: noqa: PTH123, SIM105

import subprocess
import sys


def main() -> int:
    root = sys.argv[1]
    suffixes = tuple(sys.argv[2:]) or (".py",)
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True).stdout
    files = 0
    size = 0
    for rel in listed.decode("utf-8", "surrogateescape").split("\0"):
        if not rel.endswith(suffixes):
            continue
        try:
            with open(root + "/" + rel, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        files += 1
        size += len(data)
    print(files, size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
