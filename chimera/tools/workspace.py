"""Path confinement for the agent's tools, and .gitignore-aware file walking.

Every path a model names goes through :meth:`Workspace.resolve` before a tool touches the
disk. The checks are lexical first (absolute paths, ``..``, ``.git``/``.chimera``
components, hidden paths) and then physical: the path is resolved through symlinks and must
still land inside the workspace, outside ``.git``/``.chimera`` and outside every hidden path
(held-out requirements) — "resolve, then check", the order that closes the symlink escape a
purely lexical check leaves open.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator, Sequence
from pathlib import Path

import pathspec

from chimera.errors import PathEscapeError

PRIVATE_DIRS: frozenset[str] = frozenset({".git", ".chimera"})
"""Folder names the agent's tools never read, list or write (at any depth)."""


class Workspace:
    """The folder the agent works in; turns model-given relative paths into safe paths.

    Args:
        root: the workspace root (resolved once, at construction).
        hidden: paths (absolute, or relative to the root) that tools never read, list,
            search or write, at or below them (held-out requirements).
    """

    def __init__(self, root: Path, *, hidden: Sequence[Path] = ()) -> None:
        self.root = Path(root).resolve()
        self.hidden = tuple(dict.fromkeys((self.root / p).resolve() for p in hidden))
        self._ignore_cache: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def is_hidden(self, path: Path) -> bool:
        """Whether ``path`` (absolute) is a hidden path or lies under one."""
        return any(path == h or path.is_relative_to(h) for h in self.hidden)

    def resolve(self, rel: str) -> Path:
        """The absolute, symlink-resolved path of ``rel`` inside the workspace.

        ``""`` and ``"."`` name the root. The result may not exist yet (``write_file``).

        Raises:
            PathEscapeError: ``rel`` is absolute, climbs out with ``..``, resolves (through a
                symlink) outside the workspace, or is in/under ``.git`` or ``.chimera``.
        """
        if not isinstance(rel, str):
            raise PathEscapeError(f"path must be a string, got {type(rel).__name__}")
        if "\x00" in rel:
            raise PathEscapeError(f"path {rel!r} contains a NUL character")
        text = rel.strip() or "."
        if text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
            raise PathEscapeError(
                f"path {rel!r} is absolute; give a path relative to the workspace root"
            )
        normal = posixpath.normpath(text.replace("\\", "/"))
        if normal == ".." or normal.startswith("../"):
            raise PathEscapeError(f"path {rel!r} leaves the workspace (through '..')")
        self._refuse_private(rel, Path(normal).parts)
        if self.is_hidden(self.root / normal):
            raise PathEscapeError(f"path {rel!r} is held out; tools may not touch it")
        resolved = (self.root / normal).resolve()
        if not resolved.is_relative_to(self.root):
            raise PathEscapeError(
                f"path {rel!r} leaves the workspace (a symlink points to {resolved})"
            )
        self._refuse_private(rel, resolved.relative_to(self.root).parts)
        if self.is_hidden(resolved):
            raise PathEscapeError(f"path {rel!r} is held out; tools may not touch it")
        return resolved

    @staticmethod
    def _refuse_private(rel: str, parts: tuple[str, ...]) -> None:
        for part in parts:
            if part in PRIVATE_DIRS:
                raise PathEscapeError(f"path {rel!r} is inside {part}/, which tools may not touch")

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, POSIX-style (``"."`` for the root itself)."""
        rel = path.relative_to(self.root).as_posix()
        return rel or "."

    # -- .gitignore handling ---------------------------------------------------------------

    def _spec_for(self, directory: Path) -> pathspec.GitIgnoreSpec | None:
        if directory not in self._ignore_cache:
            spec: pathspec.GitIgnoreSpec | None = None
            try:
                text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            if text.strip():
                spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
            self._ignore_cache[directory] = spec
        return self._ignore_cache[directory]

    def is_ignored(self, path: Path, *, is_dir: bool) -> bool:
        """Whether ``path`` is excluded by the ``.gitignore`` files of its folders.

        Git's precedence: the deepest ``.gitignore`` with a matching rule decides, and within
        one file the last matching rule wins (pathspec's ``check_file`` reports it). Callers
        walking a tree never descend into an ignored folder, so a file under an ignored
        folder is ignored as git does.
        """
        rel_parts = path.relative_to(self.root).parts
        for depth in range(len(rel_parts) - 1, -1, -1):
            directory = self.root.joinpath(*rel_parts[:depth])
            spec = self._spec_for(directory)
            if spec is None:
                continue
            sub = "/".join(rel_parts[depth:]) + ("/" if is_dir else "")
            verdict = spec.check_file(sub).include
            if verdict is not None:
                return bool(verdict)
        return False

    def walk_files(self, start: Path) -> Iterator[Path]:
        """Files under ``start`` (a resolved path), sorted, skipping ignored and private ones.

        Symlinks are yielded as files when they point to a file inside the workspace; linked
        folders are not followed (no cycles, no escapes).
        """
        stack = [start]
        while stack:
            directory = stack.pop()
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError:
                continue
            subdirs: list[Path] = []
            for entry in entries:
                if entry.name in PRIVATE_DIRS:
                    continue
                path = Path(entry.path)
                if self.is_hidden(path):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not self.is_ignored(path, is_dir=True):
                        subdirs.append(path)
                    continue
                if self.is_ignored(path, is_dir=False):
                    continue
                if entry.is_symlink():
                    target = path.resolve()
                    if not target.is_relative_to(self.root) or not target.is_file():
                        continue
                    if self.is_hidden(target):
                        continue
                yield path
            stack.extend(reversed(subdirs))
