"""``command`` checks of an autonomous run, each in a throwaway copy of the tree.

In the live tree one check could rewrite ``specs/*.yaml``, ``[tool.chimera]`` or a file that a
later check reads, or plant ``.git/hooks/*`` and ``core.fsmonitor`` for Chimera's own git to
run. So every command of a check runs in a fresh export of the tree — the files git sees
(tracked, and untracked ones not ignored; outside a repository every file), without ``.git``,
``.chimera`` or secret files (:mod:`chimera.sandbox.secret_files`) — under the same
sandbox, and the copy is deleted afterwards: whatever the command wrote is gone before the
next check starts.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from chimera.errors import RunnerError
from chimera.runner import DEFAULT_OUTPUT_LIMIT, CommandResult, CommandRunner
from chimera.sandbox.checkmemo import CheckMemo, tree_digest
from chimera.sandbox.gitsafe import safe_git_args, safe_git_env
from chimera.sandbox.secret_files import is_secret_file

_NEVER = frozenset({".git", ".chimera"})
LIST_TIMEOUT_S = 120.0


class Cloneable(Protocol):
    """A runner that can run the same way over another workspace (the Sandbox)."""

    def clone(self, workspace: Path, carried: Sequence[tuple[Path, Path]] = ()) -> CommandRunner:
        """This runner over ``workspace``; ``carried`` are ``(live, in copy)`` read-only pairs."""
        ...


def _listed(root: Path) -> list[str] | None:
    """Paths git sees under ``root`` (relative), or ``None`` outside a repository."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        proc = subprocess.run(
            [git, *safe_git_args("ls-files", "-z", "--cached", "--others", "--exclude-standard")],
            cwd=root,
            env=safe_git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=LIST_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    names = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({n.rstrip("/") for n in names if n})


def _walked(root: Path) -> list[str]:
    found: list[str] = []
    for top, dirs, files in os.walk(root):  # Path.walk needs Python 3.12
        dirs[:] = [d for d in dirs if d not in _NEVER]
        here = Path(top)
        for name in files + [d for d in dirs if (here / d).is_symlink()]:
            found.append((here / name).relative_to(root).as_posix())
    return sorted(found)


def _skip(rel: str) -> bool:
    parts = rel.split("/")
    return bool(_NEVER.intersection(parts)) or is_secret_file(parts[-1])


def export_tree(root: Path, dest: Path, *, exclude: Sequence[Path] = ()) -> int:
    """Copy the files of ``root`` that git sees into ``dest`` (created); returns files copied.

    Symlinks are copied as symlinks, executable bits kept; a nested repository or submodule
    is copied without its ``.git``. ``.git``, ``.chimera`` and secret files never are, nor
    anything at or under an ``exclude`` path (absolute; held-out requirements).

    Raises:
        RunnerError: a file cannot be copied.
    """
    root = Path(root).resolve()
    dest.mkdir(parents=True, exist_ok=True)
    names = _listed(root)
    if names is None:
        names = _walked(root)
    left_out = [p.relative_to(root).as_posix() for p in exclude if p.is_relative_to(root)]
    copied = 0
    for rel in names:
        if _skip(rel) or any(rel == x or rel.startswith(x + "/") for x in left_out):
            continue
        src = root / rel
        target = dest / rel
        try:
            info = os.lstat(src)
        except FileNotFoundError:
            continue  # tracked but deleted in the tree
        except OSError as exc:
            raise RunnerError(f"cannot copy {rel} for a check: {exc.strerror or exc}") from exc
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if stat.S_ISLNK(info.st_mode):
                target.symlink_to(src.readlink())
            elif stat.S_ISDIR(info.st_mode):
                shutil.copytree(src, target, symlinks=True, ignore=shutil.ignore_patterns(*_NEVER))
            elif stat.S_ISREG(info.st_mode):
                shutil.copy2(src, target)
            else:
                continue  # sockets, fifos, devices: not part of a tree's content
        except OSError as exc:
            raise RunnerError(f"cannot copy {rel} for a check: {exc.strerror or exc}") from exc
        copied += 1
    return copied


def _remove_tree(path: Path) -> None:
    def writable(func: Callable[..., Any], failed: str, _info: Any) -> None:
        # A command may have made a folder unwritable; never chmod through a symlink.
        path = Path(failed)
        path.parent.chmod(0o700)
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o700)
        func(failed)

    shutil.rmtree(path, onerror=writable)


class DisposableRunner:
    """Runs each command in a fresh copy of ``root``, through ``inner.clone(copy)``.

    Implements :class:`chimera.runner.CommandRunner`. ``cwd`` must lie under ``root``; the same
    relative folder of the copy is used. Paths of the copy in the output read as ``root``.

    Args:
        inner: the runner to clone over each copy (a :class:`chimera.sandbox.Sandbox`).
        root: the live tree.
        carry: folders under ``root`` that are not copied (an ignored dependency folder) but
            shown read-only at the same place in the copy.
        exclude: paths under ``root`` never copied (held-out requirements).
        add: ``(folder, relative path)`` pairs copied into each copy after the tree (the
            held-out folder for held-out checks; an existing path there is an error).
        scratch: where copies are made (default: the system's temporary folder).
        memo: results of earlier checks of this run by what they saw
            (:class:`~chimera.sandbox.checkmemo.CheckMemo`): a command whose copy would hold
            the same bytes as an earlier one's is answered from it, never run again.
    """

    def __init__(
        self,
        inner: Cloneable,
        root: Path,
        *,
        carry: Sequence[Path] = (),
        exclude: Sequence[Path] = (),
        add: Sequence[tuple[Path, str]] = (),
        scratch: Path | None = None,
        memo: CheckMemo | None = None,
    ) -> None:
        self.memo = memo
        self.inner = inner
        self.root = Path(root).resolve()
        self.carry = tuple((self.root / p).resolve() for p in carry)
        self.exclude = tuple((self.root / p).resolve() for p in exclude)
        self.add = tuple((Path(src).resolve(), rel) for src, rel in add)
        self.scratch = scratch

    @property
    def mode(self) -> str:
        return str(getattr(self.inner, "mode", "disposable"))

    def run(
        self,
        command: str | Sequence[str],
        *,
        cwd: Path,
        timeout: float,
        env: Mapping[str, str] | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> CommandResult:
        """Run ``command`` in a new copy of the tree; the copy is deleted afterwards.

        Raises:
            RunnerError: ``cwd`` is outside ``root``, or the tree cannot be copied.
        """
        where = (self.root / cwd).resolve()
        if not where.is_relative_to(self.root):
            raise RunnerError(f"cannot run a check in {cwd}: outside {self.root}")
        key = self._memo_key(command, where, timeout, env, output_limit)
        if key is not None and self.memo is not None:
            known = self.memo.get(key)
            if known is not None:
                return known
        result = self._run_in_copy(command, where, timeout, env, output_limit)
        if key is not None and self.memo is not None:
            self.memo.put(key, result)
        return result

    def _memo_key(
        self,
        command: str | Sequence[str],
        where: Path,
        timeout: float,
        env: Mapping[str, str] | None,
        output_limit: int,
    ) -> tuple[object, ...] | None:
        if self.memo is None:
            return None
        names = _listed(self.root)
        if names is None:
            names = _walked(self.root)
        left_out = [p.relative_to(self.root).as_posix() for p in self.exclude]

        def skip(rel: str) -> bool:
            return _skip(rel) or any(rel == x or rel.startswith(x + "/") for x in left_out)

        try:
            tree = tree_digest(self.root, names, skip=skip, added=self.add, carried=self.carry)
        except OSError:
            return None  # unreadable now: run it, as without a memo
        rel_cwd = where.relative_to(self.root).as_posix()
        return CheckMemo.key(tree, command, rel_cwd, timeout, env, output_limit)

    def _run_in_copy(
        self,
        command: str | Sequence[str],
        where: Path,
        timeout: float,
        env: Mapping[str, str] | None,
        output_limit: int,
    ) -> CommandResult:
        base = Path(tempfile.mkdtemp(prefix="chimera-check-", dir=self.scratch))
        copy = base / self.root.name
        try:
            export_tree(self.root, copy, exclude=self.exclude)
            for src, rel in self.add:
                inside = copy / rel
                if os.path.lexists(inside):
                    raise RunnerError(f"cannot add {rel} to a check's copy: it exists in the tree")
                try:
                    shutil.copytree(src, inside, symlinks=True)
                except OSError as exc:
                    raise RunnerError(f"cannot copy {rel} for a check: {exc}") from exc
            carried: list[tuple[Path, Path]] = []
            for live in self.carry:
                inside = copy / live.relative_to(self.root)
                if live.is_dir() and not inside.exists():
                    inside.mkdir(parents=True)
                    carried.append((live, inside))
            rel_cwd = where.relative_to(self.root)
            (copy / rel_cwd).mkdir(parents=True, exist_ok=True)
            runner = self.inner.clone(copy, carried)
            result = runner.run(
                command, cwd=copy / rel_cwd, timeout=timeout, env=env, output_limit=output_limit
            )
        finally:
            _remove_tree(base)
        return CommandResult(
            command=result.command,
            exit_code=result.exit_code,
            output=result.output.replace(str(copy), str(self.root)),
            truncated=result.truncated,
            timed_out=result.timed_out,
            duration_s=result.duration_s,
            mode=result.mode,
        )
