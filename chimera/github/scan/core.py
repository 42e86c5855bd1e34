"""The publish scan: every rule of the package over one patch (see :mod:`chimera.github.scan`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from chimera.github.scan.code import code_findings
from chimera.github.scan.model import Finding, ScanLimits, ScanResult, finding
from chimera.github.scan.paths import (
    FileChange,
    PatchUnreadable,
    read_blobs,
    read_changes,
    rescan,
)
from chimera.github.scan.rules import (
    GITLINK,
    SYMLINK,
    compare_findings,
    line_findings,
    mode_findings,
    path_findings,
    reads_file,
    symlink_findings,
    uncompared_findings,
)
from chimera.github.scan.secrets import (
    content_findings,
    entropy_findings,
    secret_file_findings,
    text_findings,
)
from chimera.github.scan.uses import UsedPaths, used_paths
from chimera.governance.rules import Verdict

__all__ = ["scan_patch"]

B = Verdict.BLOCK


def _add(result: ScanResult, findings: Iterable[Finding]) -> None:
    for f in findings:
        result.add(f)


def _scan_change(result: ScanResult, change: FileChange, lim: ScanLimits, workspace: str) -> None:
    path = change.path
    _add(result, path_findings(path, change.status))
    if change.old_path != path:
        _add(result, path_findings(change.old_path, "D" if change.status == "R" else "M"))
    _add(result, mode_findings(path, change.status, change.old_mode, change.new_mode))
    _add(result, secret_file_findings(path, change.status))
    if change.binary:
        result.add(finding(B, "binary-file", path, "binary files are not published by Chimera"))
    added_bytes = sum(len(text.encode("utf-8")) + 1 for _, text in change.added)
    if added_bytes > lim.max_file_bytes:
        why = f"adds {added_bytes} bytes; the limit per file is {lim.max_file_bytes}"
        result.add(finding(B, "file-size", path, why))
    if change.status == "D":
        return
    if change.new_mode == SYMLINK:
        new = change.old_mode != SYMLINK or change.status in ("A", "C")
        _add(result, symlink_findings(path, change.added_text, new=new))
        return
    _add(result, content_findings(path, change.added))
    _add(result, code_findings(path, change.added, workspace))
    _add(result, line_findings(path, change.added))
    _add(result, entropy_findings(path, change.added))


def _rescan(result: ScanResult, patch: str, repo: Path, base: str) -> bool:
    """Re-read the tree after ``git apply``; ``False`` when it could not run."""
    entries = rescan(patch, repo, base)
    if isinstance(entries, str):
        return False
    result.rescanned = True
    known = set(result.files)
    readable = [e for e in entries if _regular(e.old_mode) and _regular(e.new_mode)]
    readable = [e for e in readable if reads_file(e.path)]
    blobs = read_blobs(
        repo,
        [e.new_blob for e in entries if e.new_mode == SYMLINK]
        + [b for e in readable for b in (e.old_blob, e.new_blob)],
    )
    for e in entries:
        if e.status == "?" or e.path not in known:
            why = "git applies a path the patch's file list does not name"
            result.add(finding(B, "path-mismatch", e.path, why))
        _add(result, path_findings(e.path, e.status))
        _add(result, mode_findings(e.path, e.status, e.old_mode, e.new_mode))
        if e.new_mode == SYMLINK:
            target = blobs.get(e.new_blob, b"").decode("utf-8", "replace")
            _add(result, symlink_findings(e.path, target, new=e.old_mode != SYMLINK))
    for e in readable:
        old = blobs.get(e.old_blob) if e.old_mode else None
        new = blobs.get(e.new_blob) if e.new_mode else None
        _add(result, compare_findings(e.path, old, new))
    return True


def _regular(mode: str) -> bool:
    """A regular file's mode, or ``""`` (the side does not exist)."""
    return mode not in (SYMLINK, GITLINK)


def scan_patch(
    patch: str,
    *,
    workspace: str = "/workspace",
    limits: ScanLimits | None = None,
    base: str | None = None,
    messages: Mapping[str, str] | None = None,
) -> ScanResult:
    """Scan a ``git diff --binary`` patch before it is pushed.

    Args:
        patch: the patch text.
        workspace: the repository root (absolute); the rescan reads ``base`` from it.
        limits: size limits (default :class:`ScanLimits`).
        base: the commit the patch applies to; when it is in ``workspace``, the tree after
            ``git apply`` is re-scanned in a temporary index (symlink targets from the blobs,
            files whose verdict depends on what they say compared side by side, git's own
            path list cross-checked), and the paths the base commit's workflows ``uses:`` are
            blocked (read from ``base``, never from the patch).
        messages: texts built from model output that travel with the change, by label
            (``{"PR title": ..., "commit message": ...}``); a secret in one blocks.

    Returns:
        A :class:`ScanResult`; an unreadable patch or path is a ``block`` finding.

    Raises:
        ChimeraError: git is not installed.
    """
    lim = limits or ScanLimits()
    result = ScanResult()
    size = len(patch.encode("utf-8", "surrogateescape"))
    if size > lim.max_patch_bytes:
        why = f"the patch is {size} bytes; the limit is {lim.max_patch_bytes}"
        result.add(finding(B, "patch-size", "", why))
    for label, text in (messages or {}).items():
        _add(result, text_findings(text, f"<{label}>"))
    try:
        changes, unreadable = read_changes(patch)
    except PatchUnreadable as exc:
        result.add(finding(B, "patch-unreadable", "", str(exc)))
        return result
    for raw in unreadable:
        shown = raw.decode("utf-8", "backslashreplace")
        result.add(finding(B, "path-unreadable", shown, "git reads a path the scan cannot"))
    for change in changes:
        result.files.append(change.path)
        if change.old_path != change.path:
            result.files.append(change.old_path)
    for change in changes:
        _scan_change(result, change, lim, workspace)
    if base:
        used = used_paths(Path(workspace), base)
        if isinstance(used, UsedPaths):
            for path in dict.fromkeys(result.files):
                _add(result, used.findings(path))
    if not (base and _rescan(result, patch, Path(workspace), base)):
        for change in changes:
            if _regular(change.new_mode) and _regular(change.old_mode):
                _add(result, uncompared_findings(change.path, change.status, change.added))
    return result
