"""What a WorkspaceGuard records and reports: snapshots, diffs and their parsing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.errors import MissingExtraError, WorkspaceError

MANIFEST_VERSION = 1


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One recorded state of the working tree, persisted under ``store``.

    Attributes:
        id: unique, sortable by creation time.
        label: free text (``attempt-2``).
        root: the working tree it records.
        store: the folder holding it (``<id>.index`` and ``<id>.json``).
        created_at: Unix time.
        empty_dirs: empty directories at snapshot time, relative POSIX paths.
        seed: where the stat cache came from (``repo-index``, ``snapshot``, ``none``).
        nested_repos: nested repositories without a commit, not recorded (relative paths).
    """

    id: str
    label: str
    root: Path
    store: Path
    created_at: float
    empty_dirs: tuple[str, ...] = ()
    seed: str = "none"
    nested_repos: tuple[str, ...] = ()

    @property
    def index_path(self) -> Path:
        return self.store / f"{self.id}.index"

    @property
    def manifest_path(self) -> Path:
        return self.store / f"{self.id}.json"


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file of a :class:`WorkspaceDiff`: ``status`` is added/modified/removed/renamed."""

    path: str
    status: str
    added: int = 0
    removed: int = 0
    binary: bool = False
    source: str | None = None


@dataclass(frozen=True, slots=True)
class WorkspaceDiff:
    """The real unified diff of a working tree against a snapshot (git format, renames found
    by content with ``-M``), parsed and counted with ``unidiff``.

    Attributes:
        text: the unified diff; binary files appear as ``Binary files a/x and b/x differ``.
        files_changed: number of files in the diff.
        added: added lines over all text files.
        removed: removed lines over all text files.
        files: per-file details.
        omitted: changed files left out because the project ignores them (see
            :meth:`WorkspaceGuard.diff`).
        nested_repos: nested git repositories without a commit in the tree; git cannot
            record them, so their files are not in ``text`` — a reviewer must be told.
    """

    text: str
    files_changed: int = 0
    added: int = 0
    removed: int = 0
    files: tuple[FileChange, ...] = field(default_factory=tuple)
    omitted: tuple[str, ...] = ()
    nested_repos: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when the tree is identical to the snapshot (modulo empty folders)."""
        return not self.text.strip()

    def summary(self) -> str:
        """``3 files changed, +10 -2``."""
        noun = "file" if self.files_changed == 1 else "files"
        return f"{self.files_changed} {noun} changed, +{self.added} -{self.removed}"


def snapshot_manifest(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "version": MANIFEST_VERSION,
        "id": snapshot.id,
        "label": snapshot.label,
        "root": str(snapshot.root),
        "created_at": snapshot.created_at,
        "empty_dirs": list(snapshot.empty_dirs),
        "nested_repos": list(snapshot.nested_repos),
        "seed": snapshot.seed,
        "index": snapshot.index_path.name,
    }


def parse_diff(text: str) -> WorkspaceDiff:
    try:
        from unidiff.errors import UnidiffParseError
        from unidiff.patch import PatchSet
    except ImportError as exc:
        raise MissingExtraError("parsing workspace diffs", "agent") from exc

    try:
        patch = PatchSet(text)
    except UnidiffParseError as exc:
        raise WorkspaceError(f"cannot parse the workspace diff: {exc}") from exc
    files: list[FileChange] = []
    for pf in patch:
        if pf.is_rename:
            status = "renamed"
        elif pf.is_added_file:
            status = "added"
        elif pf.is_removed_file:
            status = "removed"
        else:
            status = "modified"
        files.append(
            FileChange(
                path=str(pf.path),
                status=status,
                added=pf.added,
                removed=pf.removed,
                binary=bool(pf.is_binary_file),
                source=_strip_prefix(pf.source_file) if pf.is_rename else None,
            )
        )
    return WorkspaceDiff(
        text=text,
        files_changed=len(files),
        added=sum(f.added for f in files),
        removed=sum(f.removed for f in files),
        files=tuple(files),
    )


def file_chunks(text: str) -> list[str]:
    """Split a git diff into per-file chunks (content lines never start with ``diff``)."""
    chunks: list[list[str]] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git ") or not chunks:
            chunks.append([line])
        else:
            chunks[-1].append(line)
    return ["".join(chunk) for chunk in chunks]


def _strip_prefix(name: str) -> str:
    return name[2:] if name.startswith(("a/", "b/")) else name
