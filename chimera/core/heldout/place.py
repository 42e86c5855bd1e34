"""Where the held-out spec folder is, and the refusals that keep it unseen.

Inside a git repository the folder must be ignored by git and never committed: the sandbox
shows ``.git`` read-only, so a tracked or once-committed file is readable through git's
objects whatever the masks say, and an unignored folder is one ``git add`` from a pull
request. Outside the repository (an absolute path) nothing of it is mounted at all.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chimera.config.heldout import HeldOutConfig
from chimera.errors import ConfigError, UsageError
from chimera.sandbox.gitsafe import safe_git_args, safe_git_env
from chimera.spec.loader import discover_spec_files

GIT_TIMEOUT_S = 60.0
_SECTION = "[tool.chimera.heldout] dir"


@dataclass(frozen=True)
class HeldOutDir:
    """A validated held-out spec folder.

    Attributes:
        path: the folder, absolute and resolved.
        root: the workspace it belongs to (resolved).
    """

    path: Path
    root: Path

    @property
    def inside(self) -> bool:
        """The folder lies inside the workspace."""
        return self.path.is_relative_to(self.root)

    @property
    def rel_in_copy(self) -> str:
        """Where held-out ``command`` checks find the folder in their copy of the tree: its
        path from the root, or its name when it lies outside the root."""
        return self.path.relative_to(self.root).as_posix() if self.inside else self.path.name

    def files(self) -> list[Path]:
        """The spec files (``*.yaml``, ``*.yml``) in the folder, sorted."""
        return discover_spec_files([self.path])


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        return subprocess.run(
            [git, *safe_git_args(*args)],
            cwd=root,
            env=safe_git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _refuse_git_exposure(root: Path, path: Path, shown: str) -> None:
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0:
        return  # not a repository: nothing records the folder
    repo = Path(top.stdout.decode("utf-8", "surrogateescape").strip()).resolve()
    if not path.is_relative_to(repo):
        return
    rel = path.relative_to(repo).as_posix()
    hint = f"keep {shown} out of git (add it to .gitignore) or outside the repository"
    tracked = _git(repo, "ls-files", "-z", "--", rel)
    if tracked is None or tracked.returncode != 0 or tracked.stdout:
        raise ConfigError(f"{_SECTION}: {shown} is tracked by git, which the agent reads; {hint}")
    history = _git(repo, "log", "--all", "-1", "--format=%H", "--", rel)
    if history is None or history.returncode != 0 or history.stdout.strip():
        raise ConfigError(
            f"{_SECTION}: {shown} is in the repository's history, which the agent reads; "
            "move the requirements to a new folder outside it"
        )
    ignored = _git(repo, "check-ignore", "-q", "--", rel + "/")
    if ignored is None or ignored.returncode != 0:
        raise ConfigError(f"{_SECTION}: {shown} is not ignored by git; {hint}")


def locate_heldout(root: Path, config: HeldOutConfig) -> HeldOutDir | None:
    """The held-out folder of ``root`` per ``config``, validated; ``None`` when none is
    configured, or when it is absent and not ``required``.

    Raises:
        ConfigError: one line: the folder is missing (and required), is not a folder, holds
            no spec file, is the root or holds it, lies in ``.git`` or ``.chimera``, or —
            inside a git repository — is tracked, in the history, or not ignored.
    """
    if config.dir is None:
        return None
    root = Path(root).resolve()
    path = (root / config.dir).resolve()
    shown = config.dir
    if not path.exists():
        if config.required:
            raise ConfigError(
                f"{_SECTION}: {shown} does not exist (set required = false where it is "
                "deliberately absent)"
            )
        return None
    if not path.is_dir():
        raise ConfigError(f"{_SECTION}: {shown} is not a folder")
    if path == root or root.is_relative_to(path):
        raise ConfigError(f"{_SECTION}: {shown} holds the whole workspace")
    if path.is_relative_to(root) and {".git", ".chimera"} & set(path.relative_to(root).parts):
        raise ConfigError(f"{_SECTION}: {shown} lies in .git or .chimera")
    if not discover_spec_files([path]):
        raise ConfigError(f"{_SECTION}: {shown} holds no spec file (*.yaml, *.yml)")
    _refuse_git_exposure(root, path, shown)
    return HeldOutDir(path=path, root=root)


def refuse_overlap(place: HeldOutDir, spec_paths: Sequence[Path]) -> None:
    """Refuse visible spec paths that hold the held-out folder or lie inside it.

    Raises:
        UsageError: one line naming the path.
    """
    for raw in spec_paths:
        path = (place.root / raw).resolve()
        if path == place.path or path.is_relative_to(place.path) or place.path.is_relative_to(path):
            raise UsageError(
                f"--spec {raw}: it overlaps the held-out folder; held-out requirements are "
                "loaded only by acceptance"
            )
