"""The scan table applied to one changed file: paths, modes, symlinks and what a file runs.

The rows, their reasons and verdicts live in :mod:`chimera.github.scan.table`; this module
matches them:

* :func:`path_findings` — rows matched by the path alone;
* :func:`mode_findings`, :func:`symlink_findings` — gitlinks, executables and symlinks;
* :func:`line_findings` — rows matched by an added line (``pytest_plugins = ...``, npm
  scripts);
* :func:`compare_findings` — rows that read the file: both sides parsed, the row fires when
  what the file makes run differs (``pyproject.toml`` table by table, pytest's ``addopts``,
  Renovate, VS Code tasks, Read the Docs);
* :func:`uncompared_findings` — the same rows when the sides are unknown (no base commit): a
  new file is read whole, any other change fires on a ``hint`` line.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from chimera.github.scan.model import Finding
from chimera.github.scan.readers import LOADERS, Unparsed
from chimera.github.scan.table import TABLE, FileClass, row
from chimera.governance.rules import Verdict

__all__ = [
    "EXECUTABLE",
    "GITLINK",
    "SYMLINK",
    "compare_findings",
    "line_findings",
    "mode_findings",
    "path_findings",
    "reads_file",
    "symlink_findings",
    "uncompared_findings",
]

SYMLINK, GITLINK, EXECUTABLE = "120000", "160000", "100755"
B = Verdict.BLOCK

_PATH_ROWS = tuple(r for r in TABLE if r.path is not None and r.reads is None and r.hint is None)
_LINE_ROWS = tuple(r for r in TABLE if r.path is not None and r.reads is None and r.hint)
_READ_ROWS = tuple(r for r in TABLE if r.path is not None and r.reads is not None)


def _key(path: str) -> str:
    return path.casefold()


def _matching(rows: tuple[FileClass, ...], path: str) -> list[FileClass]:
    key = _key(path)
    return [r for r in rows if r.path is not None and r.path(key)]


def path_findings(path: str, status: str) -> Iterator[Finding]:
    """Findings of the path-only rows for ``path`` (normalised, repository-relative) changed
    with ``status`` (``A``/``M``/``D``/``R``/``C``)."""
    fired: set[str] = set()
    for r in _matching(_PATH_ROWS, path):
        if (status == "D" and not r.on_delete) or fired.intersection(r.shadowed_by):
            continue
        fired.add(r.rule)
        yield r.hit(path, f"never changed by Chimera: {r.runs}" if r.verdict is B else "")


def mode_findings(path: str, status: str, old_mode: str, new_mode: str) -> Iterator[Finding]:
    """Findings for a gitlink or a file made executable (symlinks: :func:`symlink_findings`)."""
    if new_mode == GITLINK:
        yield row("submodule").hit(path, "a nested repository (gitlink)")
    if new_mode == EXECUTABLE and (status == "A" or old_mode not in ("", EXECUTABLE)):
        yield row("exec-mode").hit(path)


def symlink_findings(path: str, target: str, *, new: bool) -> Iterator[Finding]:
    """Findings for the symlink ``path`` pointing at ``target`` (the blob's text)."""
    if not target or target.startswith(("/", "~")) or "\0" in target:
        yield row("symlink-escape").hit(path, "a symlink to an absolute or home path")
        return
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    head = _key(resolved).split("/")[0]
    if resolved == ".." or resolved.startswith("../"):
        yield row("symlink-escape").hit(path, "a symlink that leaves the repository")
    elif head in (".github", ".chimera", ".git"):
        yield row("symlink-github").hit(path, f"a symlink into {head}/")
    elif new:
        yield row("symlink-new").hit(path, "a new symlink")


def line_findings(path: str, added: list[tuple[int, str]]) -> Iterator[Finding]:
    """Rows matched by an added line, reported at the first such line of each row."""
    for r in _matching(_LINE_ROWS, path):
        assert r.hint is not None
        for lineno, text in added:
            if r.hint.search(text):
                yield r.hit(path, line=lineno)
                break


def reads_file(path: str) -> bool:
    """Whether a row reads ``path``'s content (its blobs are worth fetching)."""
    return bool(_matching(_READ_ROWS, path))


def _summary(items: set[str]) -> str:
    shown = sorted(items)
    text = "; ".join(s if len(s) <= 120 else s[:119] + "…" for s in shown[:3])
    return text + (f" (+{len(shown) - 3} more)" if len(shown) > 3 else "")


def _load(fmt: str, text: str | None, cache: dict[tuple[str, str | None], object]) -> object:
    """The parsed side (``None`` for a side that does not exist); raises :class:`Unparsed`."""
    if text is None:
        return None
    key = (fmt, text)
    if key not in cache:
        try:
            cache[key] = LOADERS[fmt](text)
        except Unparsed as exc:
            cache[key] = exc
    value = cache[key]
    if isinstance(value, Unparsed):
        raise value
    return value


def _decode(blob: bytes | None) -> str | None:
    if blob is None:
        return None
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return "\0"  # parses in no format: held as unparsed


def compare_findings(path: str, old: bytes | None, new: bytes | None) -> Iterator[Finding]:
    """Rows that read ``path``: both sides parsed (``None`` for a side that does not exist),
    a finding for each row whose readings differ. A side that does not parse gives one
    ``config-unparsed`` finding for the file (when the sides differ at all)."""
    old_text, new_text = _decode(old), _decode(new)
    if old_text == new_text:
        return
    cache: dict[tuple[str, str | None], object] = {}
    unparsed = ""
    for r in _matching(_READ_ROWS, path):
        assert r.reads is not None
        try:
            before = r.reads(_load(r.fmt, old_text, cache)) if old_text is not None else set()
            after = r.reads(_load(r.fmt, new_text, cache)) if new_text is not None else set()
        except Unparsed as exc:
            unparsed = unparsed or str(exc)
            continue
        except RecursionError:
            unparsed = unparsed or "nested too deeply"
            continue
        if before == after:
            continue
        added = set(after) - set(before)
        gone = set(before) - set(after)
        why = f"{r.runs}: {_summary(added)}" if added else f"{r.runs}: removed {_summary(gone)}"
        yield r.hit(path, why)
    if unparsed:
        why = f"does not parse ({unparsed[:120]}); what it makes run cannot be told"
        yield row("config-unparsed").hit(path, why)


def uncompared_findings(path: str, status: str, added: list[tuple[int, str]]) -> Iterator[Finding]:
    """Rows that read ``path`` when its sides are unknown: a new file (``status`` ``A``) is
    read whole from its added lines; any other change fires a row on an added line matching
    its ``hint`` (on any added line when the row has none)."""
    if status == "D":
        return
    if status == "A":
        text = "".join(t + "\n" for _, t in added)
        yield from compare_findings(path, None, text.encode("utf-8", "surrogateescape"))
        return
    for r in _matching(_READ_ROWS, path):
        hit = next((n for n, t in added if r.hint is None or r.hint.search(t)), None)
        if hit is not None:
            yield r.hit(path, f"{r.runs} (changed; the sides were not compared)", hit)
