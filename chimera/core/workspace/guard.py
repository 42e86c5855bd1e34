"""WorkspaceGuard itself (see the package docstring for the design).

One class of about 540 lines on purpose: its methods share the invariants of one private git
index per snapshot (seeding, racy-entry handling, restore idempotence), and splitting them
across modules would scatter those invariants."""

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
from dataclasses import replace
from pathlib import Path
from typing import Any

from chimera.atomic import atomic_write_json
from chimera.core.workspace.gitstore import (
    HIDDEN_ENTRY,
    MAX_NESTED,
    NO_COMMIT,
    NO_CONVERSION,
    PRIVATE_CONFIG,
    GitRepo,
    attribute_files,
    copy_index,
    find_repo,
    has_conversion,
    remove_around,
    remove_tree,
)
from chimera.core.workspace.records import (
    MANIFEST_VERSION,
    Snapshot,
    WorkspaceDiff,
    file_chunks,
    parse_diff,
    snapshot_manifest,
)
from chimera.errors import WorkspaceError, WorkspaceGitError
from chimera.localstate import make_dirs
from chimera.runner import stderr_line
from chimera.sandbox.gitsafe import safe_git_args


class WorkspaceGuard:
    """Snapshot, diff and restore the working tree at ``root``; state lives in ``store``.

    Args:
        root: the working tree (resolved).
        store: a folder for snapshots, normally ``.chimera/runs/<id>/snapshots``. If it lies
            inside ``root`` it is never recorded.
        private: more paths inside ``root`` never recorded, diffed or restored, like
            ``.chimera`` (held-out requirements: their text never enters a run folder).

    Raises:
        WorkspaceError: ``git`` is not installed, ``root`` is not a directory, or a git
            operation failed (one line, with git's own message).
    """

    def __init__(self, root: Path, store: Path, *, private: Sequence[Path] = ()) -> None:
        self.root = Path(root).resolve()
        self.store = Path(store).resolve()
        if not self.root.is_dir():
            raise WorkspaceError(f"workspace {self.root} is not a directory")
        git = shutil.which("git")
        if git is None:
            raise WorkspaceError("WorkspaceGuard needs the git executable on PATH")
        self._git_exe = git
        self._gitdir = self.store / "git"
        self._repo = find_repo(self.root)
        self._seed: Path | None = None
        self._trees: dict[str, str] = {}
        inside = [(self.root / p).resolve() for p in private]
        self._private = [p for p in inside if p.is_relative_to(self.root) and p != self.root]
        excludes = [":(top,exclude).chimera"]
        if self.store.is_relative_to(self.root) and self.store != self.root:
            excludes.append(f":(top,exclude,literal){self.store.relative_to(self.root).as_posix()}")
        for path in self._private:
            excludes.append(f":(top,exclude,literal){path.relative_to(self.root).as_posix()}")
        self._pathspec = [".", *excludes]
        self._skip_dirs = {self.root / ".chimera", self.store, *self._private}

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
            why = stderr_line(proc.stderr, exit_code=proc.returncode)
            raise WorkspaceGitError(f"git {args[0]} failed in {self.root}: {why}")
        return proc.stdout

    def _ensure_store(self) -> None:
        if (self._gitdir / "objects").is_dir():
            return
        make_dirs(self.store)
        staging = self.store / f".git-init-{secrets.token_hex(4)}"
        # The layout `git init --bare --template=` makes, written directly (one process less
        # on the first snapshot): HEAD, config, objects/, refs/, plus our info/attributes.
        for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
            (staging / sub).mkdir(parents=True)
        (staging / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        (staging / "config").write_text(PRIVATE_CONFIG, encoding="utf-8")
        (staging / "info" / "attributes").write_text(NO_CONVERSION, encoding="utf-8")
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

    def _conversions_configured(self, repo: GitRepo) -> bool:
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
        return any(has_conversion(path) for path in attr_files)

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
        copy_index(source, target)
        try:
            listing = b"\0" + self._git(["ls-files", "-v", "-z"], index=target)
        except WorkspaceError:
            target.unlink(missing_ok=True)
            return False
        if HIDDEN_ENTRY.search(listing):
            target.unlink(missing_ok=True)
            return False
        for path in attribute_files(listing):
            attr = self.root / os.fsdecode(path)
            if not attr.is_file() or has_conversion(attr):
                target.unlink(missing_ok=True)
                return False
        private = any(
            re.search(b"\0. " + re.escape(f"{rel}/".encode()), listing)
            for rel in self._private_rel()
        )
        if private:
            self._git(
                # -f: this is a private copy of the index, and a tracked .chimera/memory.db
                # staged with content unlike both HEAD and the file must still leave it.
                [
                    "rm",
                    "--cached",
                    "-f",
                    "-r",
                    "-q",
                    "--ignore-unmatch",
                    "--",
                    *self._pathspec_private(),
                ],
                index=target,
            )
        return True

    def _private_rel(self) -> list[str]:
        paths = [".chimera"]
        if self.store.is_relative_to(self.root) and self.store != self.root:
            paths.append(self.store.relative_to(self.root).as_posix())
        paths.extend(p.relative_to(self.root).as_posix() for p in self._private)
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
                for m in NO_COMMIT.findall(proc.stderr)
                if os.fsdecode(m).rstrip("/") not in skipped
            ]
            if not found or len(skipped) > MAX_NESTED:
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
            copy_index(self._seed, staging)
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
        atomic_write_json(snapshot.manifest_path, snapshot_manifest(snapshot))
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
            copy_index(snapshot.index_path, scratch)
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
        copy_index(snapshot.index_path, current)
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
        full = replace(parse_diff(text), nested_repos=nested)
        if include_ignored or not full.files:
            return full
        paths = sorted({p for f in full.files for p in (f.path, f.source) if p})
        ignored = self._ignored_untracked(paths)
        if not ignored:
            return full
        chunks = file_chunks(text)
        if len(chunks) != len(full.files):  # pragma: no cover - git's format guarantees it
            return full
        kept: list[str] = []
        for chunk, change in zip(chunks, full.files, strict=True):
            if not all(p in ignored for p in (change.path, change.source) if p):
                kept.append(chunk)
        result = parse_diff("".join(kept)) if kept else WorkspaceDiff(text="")
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
        copy_index(snapshot.index_path, work)
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
                remove_around(self.root / rel, {self.root / n for n in kept})
                continue
            target = self.root / rel
            if rel in keep:
                # An empty folder of the snapshot that gained content: empty it.
                for child in list(target.iterdir()):
                    remove_tree(child)
                continue
            remove_tree(target)
        paths = b"\0".join(dict.fromkeys(p for p in changed if p))
        if paths:
            self._git(
                ["checkout-index", "--force", "-z", "--stdin"], index=work, stdin=paths + b"\0"
            )
        for rel in snapshot.empty_dirs:
            target = self.root / rel
            if os.path.lexists(target) and not target.is_dir():
                remove_tree(target)
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
            remove_tree(path)
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
