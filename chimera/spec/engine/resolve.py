"""Names to real files for the check engine, confined to the root, fail closed.

A symlinked file is read through its target only when the target is a regular file inside
the root, and each real file is scanned once however many names select it; a broken or
looping link, a link leaving the root, a directory or a special file is an
:class:`Unscannable` naming why.
"""

# The engine handles thousands of paths per run as plain strings with os/os.path on purpose:
# pathlib objects cost several times more per call on this hot path.

# ruff: noqa: PTH112, PTH116, PTH118

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chimera.spec.check_context import Unscannable

IS_DIRECTORY = "is a directory, not a file"
"""The reason given for a directory (or a link to one) named where a file is expected; glob
selection skips these silently, as git does (it never descends into a linked directory)."""


def normalize_relpath(path: str) -> str | None:
    """``path`` relative to the root in normal form, or ``None`` when it leaves the root.

    ``./a//b/../c`` becomes ``a/c``; absolute paths and paths climbing above the root with
    ``..`` return ``None``.
    """
    if path.startswith("/"):
        return None
    norm = posixpath.normpath(path)
    if norm == ".." or norm.startswith("../"):
        return None
    return "" if norm == "." else norm


@dataclass(frozen=True, slots=True)
class Target:
    """A selected name (``rel``, as the user sees it) and the real file read for it."""

    rel: str
    real: str


def within(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip("/") + "/")


class Resolver:
    """Maps selected names to the real files behind them, confined to the root.

    Directory real paths are cached, so resolving thousands of files costs one ``lstat``
    each plus one per directory (a ``realpath`` only under a linked directory).
    """

    def __init__(
        self,
        root_real: str,
        hidden: Sequence[str] = (),
        taken: Mapping[str, os.stat_result] | None = None,
    ) -> None:
        self.root_real = root_real
        self.hidden = tuple(hidden)
        self._taken = taken or {}
        """``lstat`` results of real paths just taken by the caller, used instead of taking
        them again (the report cache's validation stats every recorded file first)."""
        self._dirs: dict[str, str | Unscannable | None] = {"": root_real}
        self._files: dict[str, Target | Unscannable | None] = {}

    def _real_dir(self, rel_dir: str) -> str | Unscannable | None:
        if rel_dir in self._dirs:
            return self._dirs[rel_dir]
        result: str | Unscannable | None
        parent, _, name = rel_dir.rpartition("/")
        parent_real = self._real_dir(parent)
        if isinstance(parent_real, str) and name not in ("", ".", ".."):
            # The parent is a real directory inside the root: a child that is a directory
            # and not a link is the parent's real path plus its name (one lstat, where
            # realpath would lstat every component again).
            child = f"{parent_real.rstrip('/')}/{name}"
            try:
                st = os.lstat(child)
            except OSError:
                st = None
            if st is not None and stat.S_ISDIR(st.st_mode):
                self._dirs[rel_dir] = child
                return child
        try:
            real = os.path.realpath(os.path.join(self.root_real, rel_dir), strict=True)
        except FileNotFoundError:
            result = None
        except (OSError, RuntimeError):
            result = Unscannable(rel_dir, "symlink loop in its directory path")
        else:
            if not within(real, self.root_real):
                result = Unscannable(rel_dir, "directory link points outside the root (refused)")
            elif not os.path.isdir(real):
                result = None
            else:
                result = real
        self._dirs[rel_dir] = result
        return result

    def resolve(self, rel: str) -> Target | Unscannable | None:
        """The real file behind ``rel``; ``None`` when nothing exists there.

        Links are followed only to a regular file inside the root; anything else is an
        :class:`Unscannable` naming why. Answers are cached for the session.
        """
        if rel in self._files:
            return self._files[rel]
        found = self._resolve(rel)
        if (
            self.hidden
            and isinstance(found, Target)
            and any(within(found.real, h) for h in self.hidden)
        ):
            found = Unscannable(rel, "held out (refused)")
        self._files[rel] = found
        return found

    def answers(self) -> dict[str, Target | Unscannable | None]:
        """Every name resolved so far and its answer (a copy)."""
        return dict(self._files)

    def _resolve(self, rel: str) -> Target | Unscannable | None:
        rel_dir, _, name = rel.rpartition("/")
        real_dir = self._real_dir(rel_dir)
        if real_dir is None:
            return None
        if isinstance(real_dir, Unscannable):
            return Unscannable(rel, real_dir.reason)
        full = f"{real_dir.rstrip('/')}/{name}"
        try:
            st = self._taken.get(full) or os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            return Unscannable(rel, f"unreadable: {exc.strerror or exc}")
        if stat.S_ISREG(st.st_mode):
            return Target(rel, full)
        if stat.S_ISDIR(st.st_mode):
            return Unscannable(rel, IS_DIRECTORY)
        if not stat.S_ISLNK(st.st_mode):
            return Unscannable(rel, "not a regular file")
        try:
            real = os.path.realpath(full, strict=True)
        except FileNotFoundError:
            return Unscannable(rel, "broken symlink")
        except RuntimeError:
            return Unscannable(rel, "symlink loop")
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return Unscannable(rel, "symlink loop")
            return Unscannable(rel, f"unreadable: {exc.strerror or exc}")
        try:
            target_st = os.stat(real)
        except OSError as exc:
            return Unscannable(rel, f"unreadable: {exc.strerror or exc}")
        if stat.S_ISDIR(target_st.st_mode):
            return Unscannable(rel, IS_DIRECTORY)
        if not within(real, self.root_real):
            return Unscannable(rel, "symlink points outside the root (refused)")
        if not stat.S_ISREG(target_st.st_mode):
            return Unscannable(rel, "not a regular file")
        return Target(rel, real)
