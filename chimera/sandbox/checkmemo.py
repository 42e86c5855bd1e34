"""Reusing a ``command`` check's result on a tree already checked in the same run.

An autonomous run checks the Spec after every attempt, and a reverted attempt leaves the tree
as it was: the same commands would run again on the same bytes (12 runs for the demo's four
attempts). :class:`CheckMemo` keys a result by everything the command can see and that
decides it — the command, its working folder, time limit, environment and output limit, and
a digest of every file of the disposable copy it runs in (names, kinds, executable bits,
link targets and content of the files git sees, as
:func:`~chimera.sandbox.disposable.export_tree` copies them; the content of folders added to
the copy; and the stat data of every file under a folder carried read-only) — and answers a
later identical run from it. A result that timed out is never kept (a time-out depends on the
machine's load), nor is a run that raised.

The memo lives as long as the :class:`~chimera.sandbox.Sandbox` of one run; it is never
written anywhere, so nothing outside the run can plant a result in it.
"""

# Paths are plain strings with os/os.path here on purpose: one call per file of the tree.
# ruff: noqa: PTH115, PTH118, PTH123, PTH206

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from chimera.runner import CommandResult

_CHUNK = 1 << 20


def _file_digest(path: str, into: hashlib.blake2b) -> None:
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            into.update(chunk)


def _walk_files(top: Path) -> list[str]:
    out: list[str] = []
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files):
            out.append(os.path.join(folder, name))
        for name in dirs:
            path = os.path.join(folder, name)
            if os.path.islink(path):  # noqa: PTH114
                out.append(path)
    return out


def tree_digest(
    root: Path,
    names: Sequence[str],
    *,
    skip: Callable[[str], bool],
    added: Sequence[tuple[Path, str]] = (),
    carried: Sequence[Path] = (),
) -> str:
    """A digest of what a command running in a copy of ``root`` can see (see the module
    docstring): ``names`` are the paths the copy takes from ``root`` (``skip`` drops some),
    ``added`` folders copied in at a relative path, ``carried`` folders shown read-only.

    Raises:
        OSError: a file cannot be read (the caller runs the command instead).
    """
    digest = hashlib.blake2b(digest_size=20)
    for rel in names:
        if skip(rel):
            continue
        _entry(root / rel, rel, digest)
    for src, rel in added:
        digest.update(f"+{rel}\0".encode("utf-8", "surrogateescape"))
        for path in _walk_files(src):
            _entry(Path(path), os.path.relpath(path, src), digest)
    for folder in carried:
        digest.update(f"={folder}\0".encode("utf-8", "surrogateescape"))
        for path in _walk_files(folder):
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            line = f"{path}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n"
            digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _entry(path: Path, rel: str, digest: hashlib.blake2b) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return  # tracked but deleted: not copied either
    name = rel.encode("utf-8", "surrogateescape")
    if stat.S_ISLNK(info.st_mode):
        digest.update(b"L\0" + name + b"\0" + os.fsencode(os.readlink(path)) + b"\n")
    elif stat.S_ISDIR(info.st_mode):
        digest.update(b"D\0" + name + b"\n")
        for inner in _walk_files(path):
            inner_rel = os.path.relpath(inner, path)
            if {".git", ".chimera"}.intersection(inner_rel.split(os.sep)):
                continue
            _entry(Path(inner), f"{rel}/{inner_rel}", digest)
    elif stat.S_ISREG(info.st_mode):
        mode = b"x" if info.st_mode & 0o111 else b"-"
        digest.update(b"F\0" + name + b"\0" + mode + b"\0" + str(info.st_size).encode() + b"\0")
        _file_digest(str(path), digest)
        digest.update(b"\n")


class CheckMemo:
    """Results of ``command`` checks by what they saw (one per run; see the module
    docstring). ``hits`` counts the runs answered from it."""

    def __init__(self) -> None:
        self._results: dict[tuple[object, ...], CommandResult] = {}
        self.hits = 0

    @staticmethod
    def key(
        tree: str,
        command: str | Sequence[str],
        rel_cwd: str,
        timeout: float,
        env: Mapping[str, str] | None,
        output_limit: int,
    ) -> tuple[object, ...]:
        shown = command if isinstance(command, str) else tuple(command)
        pairs = None if env is None else tuple(sorted(env.items()))
        return (tree, shown, rel_cwd, timeout, pairs, output_limit)

    def get(self, key: tuple[object, ...]) -> CommandResult | None:
        found = self._results.get(key)
        if found is not None:
            self.hits += 1
        return found

    def put(self, key: tuple[object, ...], result: CommandResult) -> None:
        if not result.timed_out:
            self._results[key] = result
