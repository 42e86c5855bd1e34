"""WorkspaceGuard: snapshot, diff and restore of a working tree (the "revert" of verify-or-revert).

Design (and why)
----------------
The hard constraint is that the bytes a snapshot copies grow with the files changed, not
with the tree, while a restore must bring back *any* change — including edits made in
place by an arbitrary command (``echo >> f``), which defeats hard links (the link aliases the
edited inode) and leaves no chance to copy a file "before" it changes. The only correct
cheap source of the original bytes is content that is already stored somewhere: git's object
database. So a snapshot is a **git index** (a stat-level manifest of every file: path, size,
mtime/ctime, inode, mode, blob id — the same manifest ``git status`` uses) written by ``git
add -A -f`` into a *private* git directory inside ``store``:

* ``store/git`` is a bare-initialised object store whose ``objects/info/alternates`` points at
  the project's own object database, so blobs git already has (tracked, unchanged files) are
  never written again; only changed, untracked or ignored files' contents are added.
* each snapshot's index is seeded from the previous one (or, for the first snapshot, from the
  repository's own index when that is provably equivalent, see :meth:`_seed_from_repo`), so
  git re-reads only files whose stat data changed — a ``git status``-like scan.
* the private git directory has its own config and ``info/attributes`` that switch off every
  content conversion (``-text -eol -crlf -filter -ident -working-tree-encoding``), and user
  and system configs are not read: what is stored is the raw bytes, restored byte-for-byte.
* ``.git`` (at any depth, git's rule) and the top-level ``.chimera/`` are never recorded;
  nothing else is honoured — ignored files are recorded too.
* Empty directories (which git does not record) are listed in the snapshot's JSON manifest.

``diff`` shows what a pull request would contain: files the project ignores and does not
track (``__pycache__``, ``.pytest_cache``) are listed in ``omitted`` instead of the patch,
so running tests never makes an attempt look like a change.

Guarantees: ``restore`` makes the tree (minus ``.git``/``.chimera``) exactly what it was at
the snapshot for regular files, executable bits, symlinks, directories (empty ones
included) and binary files; edited, created, deleted and renamed files alike. It is
idempotent, so a restore interrupted by a crash is finished by running it again
(:meth:`WorkspaceGuard.load` finds the snapshot on disk). Limits: permission bits other than
the executable bit are those of a fresh file (umask), as with git checkout; a nested git
repository is recorded as its checked-out commit, not its files; one without any commit (a
test that ran ``git init``) is left out of the record and listed in ``nested_repos`` of the
snapshot and the diff, and ``restore`` removes it unless the snapshot had it. Restore is one
``git ls-files -m -d -o`` scan plus a rewrite of just the changed paths
(``git checkout-index``). Bytes written per snapshot: the contents of files changed since
the previous snapshot (for the first snapshot: files not in the repository's index, i.e.
untracked and ignored ones, or every file outside a git repository). Requires the ``git``
executable.
"""

from __future__ import annotations

from chimera.core.workspace.guard import WorkspaceGuard
from chimera.core.workspace.records import MANIFEST_VERSION, FileChange, Snapshot, WorkspaceDiff

__all__ = ["MANIFEST_VERSION", "FileChange", "Snapshot", "WorkspaceDiff", "WorkspaceGuard"]
