"""Which files a patch changes, read the way ``git apply`` reads them.

Git C-quotes a path with non-ASCII bytes, ``"``, a tab or ``\\`` (``"b/\\303\\251.yml"``) and an
artifact patch may spell any byte in octal (``\\056github`` is ``.github``). The scan never
unquotes a path itself: it asks git, whose NUL-separated output holds the raw bytes.

* :func:`read_changes` — one :class:`FileChange` per ``diff --git`` section: the new path from
  ``git apply --numstat -z``, the old path from the same run with ``-R`` (a rename's source),
  modes from the section's header lines (which hold no paths), the added lines from its hunks.
  Sections and numstat records must pair up one to one; otherwise the patch is unreadable.
* :func:`rescan` — applies the patch to ``base`` in a temporary index (``git apply --cached``,
  never touching a work tree) and lists what git changed (``git diff-index --cached --raw -z
  --no-renames``), with the new blobs' ids, so the caller can compare and read symlink targets.

A path that is not UTF-8, absolute, or has ``..``/``.``/empty parts is unreadable (``None`` from
:func:`normalise`); callers block it.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from chimera.errors import ChimeraError
from chimera.runner import stderr_line

__all__ = [
    "FileChange",
    "PatchUnreadable",
    "TreeChange",
    "git_lines",
    "normalise",
    "read_blobs",
    "read_changes",
    "rescan",
]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_MODE = re.compile(r"^(new file mode|deleted file mode|old mode|new mode) ([0-7]{6})$")
_INDEX_MODE = re.compile(r"^index [0-9a-f]+\.\.[0-9a-f]+ ([0-7]{6})$")
# Git's own configuration must not change how a patch reads (no global or system config).
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}


class PatchUnreadable(ChimeraError):
    """Git could not read the patch, or its sections do not pair with git's file list."""


@dataclass
class FileChange:
    """One file of the patch.

    Attributes:
        path: the path after the change (the removed path for a deletion), normalised.
        old_path: the path before (differs from ``path`` for a rename or copy).
        status: ``A`` added, ``M`` modified, ``D`` deleted, ``R`` renamed, ``C`` copied.
        old_mode / new_mode: octal modes (``100644``, ``100755``, ``120000`` symlink, ``160000``
            gitlink), ``""`` when the side does not exist.
        binary: a binary section (``GIT binary patch`` or ``Binary files ... differ``).
        added: ``(line number in the new file, text)`` for every added line.
        removed: the text of every removed line.
    """

    path: str
    old_path: str
    status: str = "M"
    old_mode: str = ""
    new_mode: str = ""
    binary: bool = False
    added: list[tuple[int, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def added_text(self) -> str:
        return "\n".join(text for _, text in self.added)


@dataclass(frozen=True)
class TreeChange:
    """One entry of ``git diff-index --raw`` after applying the patch (no rename pairing)."""

    path: str
    status: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str


def normalise(raw: bytes) -> str | None:
    """``raw`` as NFC text, or ``None`` when it is not UTF-8 or not a plain relative path."""
    try:
        text = unicodedata.normalize("NFC", raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None
    parts = text.split("/")
    if not text or text.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    return text


def _git(
    args: list[str], *, cwd: Path, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    full_env = {**os.environ, **_GIT_ENV, **(env or {})}
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, input=stdin, capture_output=True, env=full_env, check=False
        )
    except OSError as exc:
        raise ChimeraError(f"git is needed to scan a patch: {exc}") from exc


def _numstat(patch: bytes, cwd: Path, *, reverse: bool) -> list[tuple[str, str, bytes]]:
    args = ["apply", "--numstat", "-z", *(["-R"] if reverse else []), "-"]
    proc = _git(args, cwd=cwd, stdin=patch)
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        raise PatchUnreadable(f"git cannot read the patch: {tail[0][:200]}")
    tokens = proc.stdout.split(b"\0")
    records: list[tuple[str, str, bytes]] = []
    i = 0
    while i < len(tokens) and tokens[i]:
        added, deleted, path = tokens[i].split(b"\t", 2)
        if path == b"" and i + 2 < len(tokens):  # `-z` rename form: "a\td\t\0src\0dst\0"
            path, i = tokens[i + 2], i + 2
        records.append((added.decode(), deleted.decode(), path))
        i += 1
    return records


def _sections(patch: str) -> list[list[str]]:
    sections: list[list[str]] = []
    for line in patch.split("\n"):
        if line.startswith("diff --git "):
            sections.append([])
        elif sections:
            sections[-1].append(line)
    return sections


def _parse_section(lines: list[str], change: FileChange) -> None:
    """Modes, kind and hunks of one section; header lines are read only for their keywords."""
    i = 0
    while i < len(lines) and not lines[i].startswith("@@ "):
        line = lines[i]
        mode = _MODE.match(line)
        if mode:
            kind, value = mode.groups()
            if kind == "new file mode":
                change.status, change.new_mode = "A", value
            elif kind == "deleted file mode":
                change.status, change.old_mode = "D", value
            elif kind == "old mode":
                change.old_mode = value
            else:
                change.new_mode = value
        elif (index := _INDEX_MODE.match(line)) is not None:
            change.old_mode = change.old_mode or index.group(1)
            change.new_mode = change.new_mode or index.group(1)
        elif line.startswith("rename from "):
            change.status = "R"
        elif line.startswith("copy from "):
            change.status = "C"
        elif line.startswith(("GIT binary patch", "Binary files ")):
            change.binary = True
        i += 1
    while i < len(lines):
        hunk = _HUNK.match(lines[i])
        i += 1
        if not hunk:
            continue
        old_left = int(hunk.group(2) if hunk.group(2) is not None else 1)
        new_left = int(hunk.group(4) if hunk.group(4) is not None else 1)
        lineno = int(hunk.group(3))
        while i < len(lines) and (old_left > 0 or new_left > 0):
            line = lines[i]
            tag, text = line[:1], line[1:]
            if tag == "+":
                change.added.append((lineno, text))
                lineno, new_left = lineno + 1, new_left - 1
            elif tag == "-":
                change.removed.append(text)
                old_left -= 1
            elif tag in (" ", ""):
                lineno, old_left, new_left = lineno + 1, old_left - 1, new_left - 1
            elif tag != "\\":
                break
            i += 1


def read_changes(patch: str) -> tuple[list[FileChange], list[bytes]]:
    """Every file of ``patch`` (``git diff --binary`` text), and the raw paths git reported
    that are unreadable (see :func:`normalise`).

    Raises:
        PatchUnreadable: git rejects the patch, or its ``diff --git`` sections do not pair one
            to one with git's records (a section git would skip, or a non-git diff hidden in
            between).
        ChimeraError: git is not installed.
    """
    data = patch.encode("utf-8", "surrogateescape")
    sections = _sections(patch)
    if not sections:
        raise PatchUnreadable("the patch has no `diff --git` section")
    with tempfile.TemporaryDirectory(prefix="chimera-scan-") as tmp:
        forward = _numstat(data, Path(tmp), reverse=False)
        backward = list(reversed(_numstat(data, Path(tmp), reverse=True)))
    if not len(sections) == len(forward) == len(backward):
        raise PatchUnreadable(
            f"the patch has {len(sections)} `diff --git` sections but git reads "
            f"{len(forward)} file(s)"
        )
    changes: list[FileChange] = []
    unreadable: list[bytes] = []
    for lines, fwd, back in zip(sections, forward, backward, strict=True):
        if (fwd[0], fwd[1]) != (back[1], back[0]):
            raise PatchUnreadable("git reads the patch differently forwards and backwards")
        new, old = normalise(fwd[2]), normalise(back[2])
        if new is None or old is None:
            unreadable.extend(raw for raw, ok in ((fwd[2], new), (back[2], old)) if ok is None)
            continue
        change = FileChange(path=new, old_path=old, binary=fwd[0] == "-")
        _parse_section(lines, change)
        if change.status == "M" and old != new:
            change.status = "R"
        changes.append(change)
    return changes, unreadable


def rescan(patch: str, repo: Path, base: str) -> list[TreeChange] | str:
    """What git changes when it applies ``patch`` to the commit ``base`` of ``repo``.

    The patch goes into a temporary index (``GIT_INDEX_FILE``); neither the repository's index
    nor its work tree is touched.

    Returns:
        The changed entries, or a one-line reason the rescan could not run (``base`` is not
        in ``repo``, or the patch does not apply to it).
    """
    with tempfile.TemporaryDirectory(prefix="chimera-rescan-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        steps: list[tuple[list[str], bytes]] = [
            (["read-tree", f"{base}^{{tree}}"], b""),
            (["apply", "--cached", "--binary", "-"], patch.encode("utf-8", "surrogateescape")),
            (["diff-index", "--cached", "--raw", "-z", "--no-renames", "--abbrev=40", base], b""),
        ]
        proc: subprocess.CompletedProcess[bytes] | None = None
        for args, stdin in steps:
            proc = _git(args, cwd=repo, stdin=stdin, env=env)
            if proc.returncode != 0:
                return f"git {args[0]}: {stderr_line(proc.stderr, exit_code=proc.returncode)}"
    assert proc is not None
    tokens = proc.stdout.split(b"\0")
    entries: list[TreeChange] = []
    for meta, raw in zip(tokens[0::2], tokens[1::2], strict=False):
        if not meta.startswith(b":"):
            break
        old_mode, new_mode, old_blob, new_blob, status = meta[1:].decode().split(" ")
        path = normalise(raw)
        entries.append(
            TreeChange(
                path if path is not None else raw.decode("utf-8", "backslashreplace"),
                status[:1] if path is not None else "?",
                "" if old_mode == "000000" else old_mode,
                "" if new_mode == "000000" else new_mode,
                old_blob,
                new_blob,
            )
        )
    return entries


def git_lines(repo: Path, args: list[str]) -> list[bytes] | None:
    """The NUL-separated records of ``git ARGS`` in ``repo`` (pathspecs literal), or ``None``
    when git fails (an unknown commit)."""
    proc = _git(args, cwd=repo, env={"GIT_LITERAL_PATHSPECS": "1"})
    if proc.returncode != 0:
        return None
    return [r for r in proc.stdout.split(b"\0") if r]


def read_blobs(repo: Path, blobs: list[str]) -> dict[str, bytes]:
    """The contents of ``blobs`` (40-hex ids) from ``repo``, through one ``git cat-file
    --batch``; missing ids are left out."""
    wanted = [b for b in dict.fromkeys(blobs) if b and set(b) != {"0"}]
    if not wanted:
        return {}
    proc = _git(["cat-file", "--batch"], cwd=repo, stdin="".join(f"{b}\n" for b in wanted).encode())
    out: dict[str, bytes] = {}
    data, pos = proc.stdout, 0
    for blob in wanted:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].split(b" ")
        pos = end + 1
        if len(header) != 3:
            continue
        size = int(header[2])
        out[blob] = data[pos : pos + size]
        pos += size + 1
    return out
