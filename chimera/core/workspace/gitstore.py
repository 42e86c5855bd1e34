"""The private git store behind WorkspaceGuard: its configuration, repository discovery and
file helpers (no conversions, no hooks, nothing read from user or system config)."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.errors import WorkspaceError

PRIVATE_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tignorecase = false
\tprecomposeunicode = false
\tautocrlf = false
\tsafecrlf = false
\ttrustctime = true
\tcheckstat = default
\tfsmonitor = false
\tuntrackedcache = false
\tsplitindex = false
\tlogallrefupdates = false
\tquotepath = false
[index]
\tsparse = false
[gc]
\tauto = 0
[advice]
\taddEmbeddedRepo = false
"""


NO_CONVERSION = "* -text -eol -crlf -filter -ident -working-tree-encoding\n"


# `git ls-files -v -z` records: a tag letter, a space, the path. Lowercase tags are
# assume-unchanged entries, "S" skip-worktree ones: git does not look at those files.
# Both patterns expect the listing with a NUL prepended, so every record starts after one.
HIDDEN_ENTRY = re.compile(rb"\0[a-zS] ")


# git add's refusal of a nested repository without a commit ("error: 'sub/' does not have a
# commit checked out"); such a folder is left out of the record instead of failing the run.
NO_COMMIT = re.compile(rb"error: '(.+?)' does not have a commit checked out")


MAX_NESTED = 1000


# Attribute tokens that make git's stored blob differ from the bytes on disk.
_CONVERTING = re.compile(r"^(text|crlf|eol|filter|ident|working-tree-encoding)(=.*)?$")


@dataclass(frozen=True, slots=True)
class GitRepo:
    gitdir: Path
    objects: Path
    worktree: Path
    toplevel: bool


def find_repo(root: Path) -> GitRepo | None:
    """The git repository containing ``root``, read from the filesystem (no git process)."""
    for candidate in (root, *root.parents):
        dotgit = candidate / ".git"
        if dotgit.is_dir():
            gitdir = dotgit
        elif dotgit.is_file():
            text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            gitdir = (candidate / text[len("gitdir:") :].strip()).resolve()
        else:
            continue
        common = gitdir
        commondir = gitdir / "commondir"
        if commondir.is_file():
            common = (gitdir / commondir.read_text(encoding="utf-8").strip()).resolve()
        objects = common / "objects"
        if not objects.is_dir():
            return None
        return GitRepo(
            gitdir=gitdir, objects=objects, worktree=candidate, toplevel=candidate == root
        )
    return None


def copy_index(src: Path, dst: Path) -> None:
    # copy2 keeps the mtime: git's racy-entry check compares entry mtimes with the index
    # file's own mtime, and a newer copy would make racily-clean entries look clean.
    shutil.copy2(src, dst)


def remove_tree(path: Path) -> None:
    """Delete a file, link or whole folder, even one an attempt made unwritable.

    Raises:
        WorkspaceError: it cannot be deleted.
    """

    def retry_writable(func: Any, failed: str, _info: Any) -> None:
        # An attempt may have chmod'ed a folder read-only; the snapshot did not have it.
        # Never chmod through a symlink: its target may lie outside the tree.
        target = Path(failed)
        target.parent.chmod(0o700)
        if target.is_dir() and not target.is_symlink():
            target.chmod(0o700)
        func(failed)

    try:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o700)
            shutil.rmtree(path, onerror=retry_writable)
        else:
            path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WorkspaceError(f"cannot remove {path}: {exc.strerror or exc}") from exc


def remove_around(folder: Path, keep: set[Path]) -> None:
    """Delete everything under ``folder`` except the ``keep`` paths and their parents."""
    if folder in keep:
        return
    for child in list(folder.iterdir()):
        if child in keep:
            continue
        if child.is_dir() and not child.is_symlink() and any(k.is_relative_to(child) for k in keep):
            remove_around(child, keep)
        else:
            remove_tree(child)


def attribute_files(listing: bytes) -> list[bytes]:
    """Paths of ``.gitattributes`` files in a NUL-prefixed ``ls-files -v -z`` listing."""
    found: list[bytes] = []
    needle = b".gitattributes\0"
    pos = listing.find(needle)
    while pos != -1:
        start = listing.rfind(b"\0", 0, pos) + 1
        path = listing[start + 2 : pos + len(needle) - 1]
        if path == b".gitattributes" or path.endswith(b"/.gitattributes"):
            found.append(path)
        pos = listing.find(needle, pos + 1)
    return found


def has_conversion(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        tokens = line.strip().split()
        if not tokens or tokens[0].startswith("#"):
            continue
        if any(_CONVERTING.match(token) for token in tokens[1:]):
            return True
    return False
