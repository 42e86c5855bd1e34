"""Real patches for tests: a git repository in a temporary folder, a base commit, a change made
with real files, symlinks, modes and gitlinks, and ``git diff --binary`` of it.

Shapes: a :data:`Change` is a function of the repository root that changes the work tree or
the index; :func:`make_patch` returns a :class:`Patch` (the text, the root, the base commit).
Git runs with ``core.quotePath=true`` so non-ASCII paths are C-quoted as in CI logs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-c", "core.quotePath=true"]
BASE = {
    "README.md": "# Tiny\n",
    "app/calc.py": "def total(xs):\n    return sum(xs)\n",
    "pyproject.toml": (
        '[project]\nname = "tiny"\ndependencies = []\n\n[tool.ruff]\nline-length = 99\n'
    ),
    "bin/tool.sh": "echo hi\n",
}


def git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    """Run git in ``root``; its stdout as text (undecodable bytes kept as surrogates).

    Raises:
        subprocess.CalledProcessError: git failed.
    """
    proc = subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True, input=stdin)
    return proc.stdout.decode("utf-8", "surrogateescape")


__all__ = ["BASE", "Change", "Patch", "chmod_x", "git", "gitlink", "make_patch", "symlink", "write"]


@dataclass(frozen=True)
class Patch:
    """A patch (``git diff --binary`` text), the repository it came from and its base commit."""

    text: str
    root: Path
    base: str


Change = Callable[[Path], None]


def write(files: dict[str, str | bytes]) -> Change:
    """Write ``files`` (relative path → text or bytes), creating folders."""

    def change(root: Path) -> None:
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")

    return change


def symlink(link: str, target: str) -> Change:
    """Create the symlink ``link`` → ``target`` (the target is stored as written)."""

    def change(root: Path) -> None:
        (root / link).parent.mkdir(parents=True, exist_ok=True)
        (root / link).symlink_to(target)

    return change


def chmod_x(rel: str, content: str | None = None) -> Change:
    """Make ``rel`` executable (writing ``content`` first when given)."""

    def change(root: Path) -> None:
        if content is not None:
            write({rel: content})(root)
        (root / rel).chmod(0o755)

    return change


def gitlink(rel: str) -> Change:
    """Create a nested repository with one commit at ``rel`` (``git add`` records a gitlink,
    mode 160000)."""

    def change(root: Path) -> None:
        nested = root / rel
        nested.mkdir(parents=True)
        git(nested, "init", "-q")
        git(nested, "commit", "-q", "--allow-empty", "-m", "nested")

    return change


def make_patch(tmp_path: Path, change: Change, base: dict[str, str] | None = None) -> Patch:
    """``git diff --cached --binary`` of ``change`` applied to a fresh repo holding ``base``."""
    root = tmp_path / "repo"
    root.mkdir(parents=True)
    git(root, "init", "-q")
    write(dict(base or BASE))(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    sha = git(root, "rev-parse", "HEAD").strip()
    change(root)
    git(root, "add", "-A")
    return Patch(git(root, "diff", "--cached", "--binary", sha), root, sha)
