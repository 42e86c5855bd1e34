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

import json
import os
import re
import secrets
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from chimera.atomic import atomic_write_json
from chimera.errors import MissingExtraError, WorkspaceError
from chimera.sandbox.gitsafe import safe_git_args

MANIFEST_VERSION = 1

_PRIVATE_CONFIG = """\
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

_NO_CONVERSION = "* -text -eol -crlf -filter -ident -working-tree-encoding\n"

# `git ls-files -v -z` records: a tag letter, a space, the path. Lowercase tags are
# assume-unchanged entries, "S" skip-worktree ones: git does not look at those files.
# Both patterns expect the listing with a NUL prepended, so every record starts after one.
_HIDDEN_ENTRY = re.compile(rb"\0[a-zS] ")

# git add's refusal of a nested repository without a commit ("error: 'sub/' does not have a
# commit checked out"); such a folder is left out of the record instead of failing the run.
_NO_COMMIT = re.compile(rb"error: '(.+?)' does not have a commit checked out")
_MAX_NESTED = 1000

# Attribute tokens that make git's stored blob differ from the bytes on disk.
_CONVERTING = re.compile(r"^(text|crlf|eol|filter|ident|working-tree-encoding)(=.*)?$")


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


@dataclass(frozen=True, slots=True)
class _Repo:
    gitdir: Path
    objects: Path
    worktree: Path
    toplevel: bool


def _find_repo(root: Path) -> _Repo | None:
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
        return _Repo(gitdir=gitdir, objects=objects, worktree=candidate, toplevel=candidate == root)
    return None


def _copy_index(src: Path, dst: Path) -> None:
    # copy2 keeps the mtime: git's racy-entry check compares entry mtimes with the index
    # file's own mtime, and a newer copy would make racily-clean entries look clean.
    shutil.copy2(src, dst)


class WorkspaceGuard:
    """Snapshot, diff and restore the working tree at ``root``; state lives in ``store``.

    Args:
        root: the working tree (resolved).
        store: a folder for snapshots, normally ``.chimera/runs/<id>/snapshots``. If it lies
            inside ``root`` it is never recorded.

    Raises:
        WorkspaceError: ``git`` is not installed, ``root`` is not a directory, or a git
            operation failed (one line, with git's own message).
    """

    def __init__(self, root: Path, store: Path) -> None:
        self.root = Path(root).resolve()
        self.store = Path(store).resolve()
        if not self.root.is_dir():
            raise WorkspaceError(f"workspace {self.root} is not a directory")
        git = shutil.which("git")
        if git is None:
            raise WorkspaceError("WorkspaceGuard needs the git executable on PATH")
        self._git_exe = git
        self._gitdir = self.store / "git"
        self._repo = _find_repo(self.root)
        self._seed: Path | None = None
        self._trees: dict[str, str] = {}
        excludes = [":(top,exclude).chimera"]
        if self.store.is_relative_to(self.root) and self.store != self.root:
            excludes.append(f":(top,exclude,literal){self.store.relative_to(self.root).as_posix()}")
        self._pathspec = [".", *excludes]
        self._skip_dirs = {self.root / ".chimera", self.store}

    # -- git plumbing -----------------------------------------------------------------------

    def _env(self, index: Path | None) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LC_ALL": "C",
            "GIT_DIR": str(self._gitdir),
            "GIT_WORK_TREE": str(self.root),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "HOME": str(self.store),
        }
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return env

    def _run_git(
        self,
        args: Sequence[str],
        *,
        index: Path | None,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                # Command-line settings outrank every config file: no hook, fsmonitor or
                # external diff runs, even if the tree's own repository asks for one.
                [self._git_exe, *safe_git_args(*args)],
                cwd=self.root,
                env=env if env is not None else self._env(index),
                input=stdin,
                capture_output=True,
                check=False,
            )
        except OSError as exc:
            raise WorkspaceError(f"cannot run git: {exc.strerror or exc}") from exc

    def _git(
        self,
        args: Sequence[str],
        *,
        index: Path | None,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
        ok_codes: tuple[int, ...] = (0,),
    ) -> bytes:
        proc = self._run_git(args, index=index, stdin=stdin, env=env)
        if proc.returncode not in ok_codes:
            lines = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
            why = next((ln for ln in reversed(lines) if ln.startswith(("fatal", "error"))), "")
            why = why or (lines[-1] if lines else f"exit {proc.returncode}")
            raise WorkspaceError(f"git {args[0]} failed in {self.root}: {why}")
        return proc.stdout

    def _ensure_store(self) -> None:
        if (self._gitdir / "objects").is_dir():
            return
        self.store.mkdir(parents=True, exist_ok=True)
        staging = self.store / f".git-init-{secrets.token_hex(4)}"
        # The layout `git init --bare --template=` makes, written directly (one process less
        # on the first snapshot): HEAD, config, objects/, refs/, plus our info/attributes.
        for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
            (staging / sub).mkdir(parents=True)
        (staging / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        (staging / "config").write_text(_PRIVATE_CONFIG, encoding="utf-8")
        (staging / "info" / "attributes").write_text(_NO_CONVERSION, encoding="utf-8")
        exclude = self._repo.gitdir / "info" / "exclude" if self._repo else None
        if exclude is not None and exclude.is_file():
            # The project's own ignore rules, for diff's choice of what a PR would contain.
            shutil.copyfile(exclude, staging / "info" / "exclude")
        if self._repo is not None:
            alternates = staging / "objects" / "info" / "alternates"
            alternates.write_text(f"{self._repo.objects}\n", encoding="utf-8")
        try:
            staging.rename(self._gitdir)
        except OSError:
            # Another guard on the same store won the race; its store is equivalent.
            shutil.rmtree(staging, ignore_errors=True)
            if not (self._gitdir / "objects").is_dir():
                raise

    # -- seeding the stat cache -------------------------------------------------------------

    def _conversions_configured(self, repo: _Repo) -> bool:
        """Whether the project's git config or attributes convert content on ``git add``."""
        env = self._env(None)
        env.update(GIT_DIR=str(repo.gitdir))
        env.pop("GIT_WORK_TREE")
        for name in ("GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "HOME"):
            env.pop(name, None)
        if "HOME" in os.environ:
            env["HOME"] = os.environ["HOME"]
        if "XDG_CONFIG_HOME" in os.environ:
            env["XDG_CONFIG_HOME"] = os.environ["XDG_CONFIG_HOME"]
        try:
            out = self._git(
                ["config", "-z", "--get-regexp", r"^core\.(autocrlf|attributesfile)$"],
                index=None,
                env=env,
                ok_codes=(0, 1),
            )
        except WorkspaceError:
            return True  # unknown configuration: do not trust the repository's index

        attr_files = [repo.gitdir / "info" / "attributes", Path("/etc/gitattributes")]
        xdg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        attr_files.append(xdg / "git" / "attributes")
        for record in out.decode("utf-8", errors="replace").split("\0"):
            key, _, value = record.partition("\n")
            if key == "core.autocrlf" and value.lower() not in ("false", "no", "off", "0"):
                return True
            if key == "core.attributesfile" and value:
                attr_files.append(Path(value).expanduser())
        return any(_has_conversion(path) for path in attr_files)

    def _seed_from_repo(self, target: Path) -> bool:
        """Copy the repository's index as the first stat cache, when that is exact.

        It is exact when the repository stores raw bytes (no autocrlf, no converting
        attribute anywhere) and no entry hides the worktree (assume-unchanged,
        skip-worktree/sparse); a split index or any unreadable index simply is not used.
        Otherwise the first snapshot hashes every file once.
        """
        repo = self._repo
        if repo is None or not repo.toplevel:
            return False
        source = repo.gitdir / "index"
        if not source.is_file() or self._conversions_configured(repo):
            return False
        _copy_index(source, target)
        try:
            listing = b"\0" + self._git(["ls-files", "-v", "-z"], index=target)
        except WorkspaceError:
            target.unlink(missing_ok=True)
            return False
        if _HIDDEN_ENTRY.search(listing):
            target.unlink(missing_ok=True)
            return False
        for path in _attribute_files(listing):
            attr = self.root / os.fsdecode(path)
            if not attr.is_file() or _has_conversion(attr):
                target.unlink(missing_ok=True)
                return False
        private = any(
            re.search(b"\0. " + re.escape(f"{rel}/".encode()), listing)
            for rel in self._private_rel()
        )
        if private:
            self._git(
                ["rm", "--cached", "-r", "-q", "--ignore-unmatch", "--", *self._pathspec_private()],
                index=target,
            )
        return True

    def _private_rel(self) -> list[str]:
        paths = [".chimera"]
        if self.store.is_relative_to(self.root) and self.store != self.root:
            paths.append(self.store.relative_to(self.root).as_posix())
        return paths

    def _pathspec_private(self) -> list[str]:
        return [f":(top,literal){p}" for p in self._private_rel()]

    # -- scanning ---------------------------------------------------------------------------

    def _empty_dirs(self) -> list[str]:
        """Empty directories under root (not descending into nested repositories).

        Uses GNU find's leaf optimisation: where a filesystem counts directory links (ext4,
        xfs, tmpfs), a directory's link count is 2 plus its number of subdirectories, so a
        count of 2 marks a leaf whose entries need no type checks — only whether it is empty.
        The convention is verified on the root first; filesystems that do not count (btrfs
        and overlayfs report 1) get the plain walk.
        """
        found: list[str] = []
        root = str(self.root)
        skip = {str(p) for p in self._skip_dirs}
        stack: list[tuple[str, int]] = [(root, 0)]
        leaf_rule: bool | None = None
        while stack:
            directory, links = stack.pop()
            try:
                with os.scandir(directory) as entries:
                    if leaf_rule and links == 2:
                        if next(entries, None) is None:
                            found.append(directory[len(root) + 1 :])
                        continue
                    empty, nested = True, False
                    subdirs: list[tuple[str, int]] = []
                    for entry in entries:
                        empty = False
                        if not entry.is_dir(follow_symlinks=False):
                            continue
                        info = entry.stat(follow_symlinks=False)
                        if entry.name == ".git":
                            nested = True
                        if entry.name != ".git" and entry.path not in skip:
                            subdirs.append((entry.path, info.st_nlink))
                        elif directory == root:
                            subdirs.append(("", info.st_nlink))  # counted, not walked
            except OSError:
                continue
            if leaf_rule is None:
                count = len(subdirs)
                leaf_rule = os.lstat(root).st_nlink == 2 + count
                subdirs = [item for item in subdirs if item[0]]
            if empty and directory != root:
                found.append(directory[len(root) + 1 :])
            if nested and directory != root:
                continue
            stack.extend(subdirs)
        return sorted(found)

    def _record(self, index: Path) -> tuple[str, ...]:
        """Make ``index`` describe the current tree (only stat-changed files are read).

        Returns the nested repositories without a commit, which git refuses to add: each is
        left out and the add retried (git names them on stderr; it writes no index on failure).
        """
        skipped: list[str] = []
        while True:
            excludes = [f":(top,exclude,literal){rel}" for rel in skipped]
            args = ["add", "--all", "--force", "--", *self._pathspec, *excludes]
            proc = self._run_git(args, index=index)
            if proc.returncode == 0:
                return tuple(skipped)
            found = [
                os.fsdecode(m).rstrip("/")
                for m in _NO_COMMIT.findall(proc.stderr)
                if os.fsdecode(m).rstrip("/") not in skipped
            ]
            if not found or len(skipped) > _MAX_NESTED:
                self._git(args, index=index)  # raises with git's message
                return tuple(skipped)  # pragma: no cover - the retry succeeded after all
            skipped.extend(found)

    # -- public API -------------------------------------------------------------------------

    def snapshot(self, label: str = "") -> Snapshot:
        """Record the current tree; persisted in ``store`` before this returns.

        Raises:
            WorkspaceError: git failed (e.g. an unreadable file), or the store is unwritable.
        """
        self._ensure_store()
        snap_id = f"{time.time_ns():x}-{secrets.token_hex(3)}"
        staging = self.store / f".{snap_id}.index.tmp"
        seed = "none"
        if self._seed is not None and self._seed.is_file():
            _copy_index(self._seed, staging)
            seed = "snapshot"
        elif self._seed_from_repo(staging):
            seed = "repo-index"
        else:
            self._git(["read-tree", "--empty"], index=staging)
        dirs: list[str] = []
        walker = threading.Thread(target=lambda: dirs.extend(self._empty_dirs()), daemon=True)
        walker.start()
        try:
            nested = self._record(staging)
        except BaseException:
            staging.unlink(missing_ok=True)
            raise
        finally:
            walker.join()
        snapshot = Snapshot(
            id=snap_id,
            label=label,
            root=self.root,
            store=self.store,
            created_at=time.time(),
            empty_dirs=tuple(dirs),
            seed=seed,
            nested_repos=nested,
        )
        staging.replace(snapshot.index_path)
        atomic_write_json(snapshot.manifest_path, _manifest(snapshot))
        self._seed = snapshot.index_path
        return snapshot

    def _check(self, snapshot: Snapshot) -> None:
        if snapshot.root != self.root:
            raise WorkspaceError(
                f"snapshot {snapshot.id} records {snapshot.root}, not this workspace {self.root}"
            )
        if not snapshot.index_path.is_file():
            raise WorkspaceError(
                f"snapshot {snapshot.id} is missing from {snapshot.store} (discarded?)"
            )

    def _tree_of(self, snapshot: Snapshot) -> str:
        tree = self._trees.get(snapshot.id)
        if tree is None:
            scratch = self.store / f".{snapshot.id}.tree.index"
            _copy_index(snapshot.index_path, scratch)
            try:
                tree = self._git(["write-tree"], index=scratch).decode().strip()
            finally:
                scratch.unlink(missing_ok=True)
            self._trees[snapshot.id] = tree
        return tree

    def diff(self, snapshot: Snapshot, *, include_ignored: bool = False) -> WorkspaceDiff:
        """The unified diff from ``snapshot`` to the current tree.

        Renames are detected by content (``-M``); binary files are noted, not inlined. By
        default files the project ignores (``.gitignore``, ``.git/info/exclude``) and does
        not track are left out and listed in ``omitted`` — they would not be part of a pull
        request, and running tests (``__pycache__``, ``.pytest_cache``) must not make an
        attempt look like a change. ``restore`` reverts them all the same.

        Raises:
            WorkspaceError: the snapshot is gone or git failed.
        """
        self._check(snapshot)
        self._ensure_store()
        before = self._tree_of(snapshot)
        current = self.store / "current.index"
        _copy_index(snapshot.index_path, current)
        nested = self._record(current)
        after = self._git(["write-tree"], index=current).decode().strip()
        self._seed = current
        if before == after:
            return WorkspaceDiff(text="", nested_repos=nested)
        raw = self._git(
            [
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--find-renames",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                before,
                after,
            ],
            index=current,
        )
        text = raw.decode("utf-8", errors="replace")
        full = replace(_parse_diff(text), nested_repos=nested)
        if include_ignored or not full.files:
            return full
        paths = sorted({p for f in full.files for p in (f.path, f.source) if p})
        ignored = self._ignored_untracked(paths)
        if not ignored:
            return full
        chunks = _file_chunks(text)
        if len(chunks) != len(full.files):  # pragma: no cover - git's format guarantees it
            return full
        kept: list[str] = []
        for chunk, change in zip(chunks, full.files, strict=True):
            if not all(p in ignored for p in (change.path, change.source) if p):
                kept.append(chunk)
        result = _parse_diff("".join(kept)) if kept else WorkspaceDiff(text="")
        return replace(result, omitted=tuple(sorted(ignored)), nested_repos=nested)

    def _ignored_untracked(self, paths: list[str]) -> set[str]:
        """The subset of ``paths`` the project ignores and its index does not track."""
        payload = b"".join(os.fsencode(p) + b"\0" for p in paths)
        out = self._git(
            ["check-ignore", "--no-index", "-z", "--stdin"],
            index=None,
            stdin=payload,
            ok_codes=(0, 1),
        )
        ignored = {os.fsdecode(p) for p in out.split(b"\0") if p}
        repo = self._repo
        if not ignored or repo is None or not (repo.gitdir / "index").is_file():
            return ignored
        prefix = self.root.relative_to(repo.worktree).as_posix()
        prefix = "" if prefix == "." else prefix + "/"
        names = sorted(ignored)
        tracked: set[str] = set()
        for start in range(0, len(names), 500):
            specs = [f":(top,literal){prefix}{name}" for name in names[start : start + 500]]
            listing = self._git(["ls-files", "-z", "--", *specs], index=repo.gitdir / "index")
            tracked.update(os.fsdecode(p)[len(prefix) :] for p in listing.split(b"\0") if p)
        return ignored - tracked

    def restore(self, snapshot: Snapshot) -> None:
        """Make the tree exactly what it was at ``snapshot`` (idempotent; safe to re-run).

        Raises:
            WorkspaceError: the snapshot is gone, or git failed to write a file.
        """
        self._check(snapshot)
        self._ensure_store()
        work = self.store / "current.index"
        _copy_index(snapshot.index_path, work)
        # One pass: modified (C) and deleted (R) index entries, plus everything on disk the
        # snapshot does not have (?), new folders collapsed to one entry.
        listing = self._git(
            ["ls-files", "-z", "-t", "-m", "-d", "-o", "--directory", "--", *self._pathspec],
            index=work,
        )
        changed: list[bytes] = []
        untracked: list[bytes] = []
        for record in listing.split(b"\0"):
            if record[:2] == b"? ":
                untracked.append(record[2:])
            elif record:
                changed.append(record[2:])
        keep = set(snapshot.empty_dirs)
        for raw in untracked:
            if not raw:
                continue
            rel = raw.decode("utf-8", errors="surrogateescape").rstrip("/")
            kept = [n for n in snapshot.nested_repos if n == rel or n.startswith(rel + "/")]
            if kept:
                # Nested repositories of the snapshot were never recorded: they stay as they
                # are, and only what else is new around them goes.
                _remove_around(self.root / rel, {self.root / n for n in kept})
                continue
            target = self.root / rel
            if rel in keep:
                # An empty folder of the snapshot that gained content: empty it.
                for child in list(target.iterdir()):
                    _remove(child)
                continue
            _remove(target)
        paths = b"\0".join(dict.fromkeys(p for p in changed if p))
        if paths:
            self._git(
                ["checkout-index", "--force", "-z", "--stdin"], index=work, stdin=paths + b"\0"
            )
        for rel in snapshot.empty_dirs:
            target = self.root / rel
            if os.path.lexists(target) and not target.is_dir():
                _remove(target)
            target.mkdir(parents=True, exist_ok=True)
        self._seed = work

    def clear_stale_locks(self) -> list[str]:
        """Remove what killed processes left in ``store``; returns the names removed.

        A ``kill -9`` during a git call leaves git's ``<index>.lock`` behind, and git then
        refuses that index for good ("Unable to create ... .lock: File exists"): a fixed-name
        scratch index (``current.index``, a snapshot's ``.<id>.tree.index``) would make every
        later :meth:`diff` fail. A kill during :meth:`snapshot` leaves a half-recorded
        ``.<id>.index.tmp``, and one during the store's first creation a ``.git-init-*``
        folder. Completed snapshots (``<id>.index`` + ``<id>.json``) and stored objects are
        never touched.

        Call it only as the store's sole owner (a run holds its run lock): a lock file of a
        git process that is still running elsewhere would be taken from under it.

        Raises:
            WorkspaceError: a leftover cannot be removed.
        """
        removed: list[str] = []
        if not self.store.is_dir():
            return removed
        candidates = [
            *self.store.glob("*.lock"),
            *self.store.glob(".*.lock"),
            *self.store.glob(".*.index.tmp"),
            *self.store.glob(".*.tree.index"),
            *self.store.glob(".git-init-*"),
            *self._gitdir.glob("*.lock"),
        ]
        for path in sorted(set(candidates)):
            _remove(path)
            removed.append(path.relative_to(self.store).as_posix())
        return removed

    def discard(self, snapshot: Snapshot) -> None:
        """Forget ``snapshot`` (its files in ``store``). Stored blobs stay until the store goes."""
        snapshot.manifest_path.unlink(missing_ok=True)
        snapshot.index_path.unlink(missing_ok=True)
        self._trees.pop(snapshot.id, None)

    @classmethod
    def load(cls, store: Path, snapshot_id: str) -> Snapshot:
        """Read a snapshot back from ``store`` (after a crash, on resume).

        Use it with a guard on the same store: ``WorkspaceGuard(snap.root, store).restore(snap)``.

        Raises:
            WorkspaceError: no such snapshot, or its manifest is unreadable.
        """
        store = Path(store).resolve()
        path = store / f"{snapshot_id}.json"
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise WorkspaceError(f"no snapshot {snapshot_id!r} in {store}") from None
        except (OSError, ValueError) as exc:
            raise WorkspaceError(f"snapshot manifest {path} is unreadable: {exc}") from exc
        if data.get("version") != MANIFEST_VERSION:
            raise WorkspaceError(f"snapshot manifest {path} has unknown version")
        snapshot = Snapshot(
            id=str(data["id"]),
            label=str(data.get("label", "")),
            root=Path(data["root"]),
            store=store,
            created_at=float(data.get("created_at", 0.0)),
            empty_dirs=tuple(str(d) for d in data.get("empty_dirs", ())),
            nested_repos=tuple(str(d) for d in data.get("nested_repos", ())),
            seed=str(data.get("seed", "none")),
        )
        if not snapshot.index_path.is_file():
            raise WorkspaceError(f"snapshot {snapshot_id!r} in {store} has no index (incomplete)")
        return snapshot


def _remove(path: Path) -> None:
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


def _remove_around(folder: Path, keep: set[Path]) -> None:
    """Delete everything under ``folder`` except the ``keep`` paths and their parents."""
    if folder in keep:
        return
    for child in list(folder.iterdir()):
        if child in keep:
            continue
        if child.is_dir() and not child.is_symlink() and any(k.is_relative_to(child) for k in keep):
            _remove_around(child, keep)
        else:
            _remove(child)


def _attribute_files(listing: bytes) -> list[bytes]:
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


def _has_conversion(path: Path) -> bool:
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


def _manifest(snapshot: Snapshot) -> dict[str, Any]:
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


def _parse_diff(text: str) -> WorkspaceDiff:
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


def _file_chunks(text: str) -> list[str]:
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
