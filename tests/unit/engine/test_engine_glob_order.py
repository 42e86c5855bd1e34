"""``paths`` globs are read in order and the last glob that matches a file decides (pathspec's
``GitIgnoreSpec``), so a negation removes a folder from an earlier folder glob and a later glob
adds a file back. A ``.gitignore`` differs: git cannot re-include a file whose parent folder
is excluded. Both pinned here, the second against real git.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from chimera.spec.kinds import Absent
from chimera.spec.model import Status

if TYPE_CHECKING:
    from tests.unit.engine.conftest import Evaluate

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FILES = ("docs/a.md", "docs/img/x.png", "docs/img/logo.svg", "src/m.py")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("HIT\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    return tmp_path


def selected(root: Path, evaluate: Evaluate, paths: list[str]) -> set[str]:
    res = evaluate(root, Absent(paths=paths, pattern="HIT"))
    assert res.status is Status.FAILED, res.message
    return {e.file for e in res.evidence if e.file is not None}


def git_ignores(tmp: Path, lines: list[str], rel: str) -> bool:
    """Whether git, with ``lines`` as a ``.gitignore``, ignores ``rel``."""
    scratch = tmp / "gitignore-probe"
    scratch.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=scratch, check=True)
    (scratch / ".gitignore").write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = subprocess.run(
        ["git", "check-ignore", "-q", "--no-index", rel], cwd=scratch, check=False
    )
    return found.returncode == 0


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["docs/", "!docs/img/"], {"docs/a.md"}),
        (["docs/", "!docs/img/", "docs/img/logo.svg"], {"docs/a.md", "docs/img/logo.svg"}),
        (["docs/**", "!docs/img/**", "docs/img/*.svg"], {"docs/a.md", "docs/img/logo.svg"}),
        # Order matters: a negation before the glob it should narrow removes nothing.
        (["!docs/img/", "docs/"], {"docs/a.md", "docs/img/x.png", "docs/img/logo.svg"}),
    ],
)
def test_last_matching_glob_decides(
    repo: Path, evaluate: Evaluate, paths: list[str], expected: set[str]
) -> None:
    assert selected(repo, evaluate, paths) == expected


def test_git_cannot_reinclude_under_an_excluded_folder(repo: Path, evaluate: Evaluate) -> None:
    lines = ["docs/", "!docs/img/"]
    # git: `docs/` excludes the folder, so `!docs/img/` cannot bring its files back ...
    assert git_ignores(repo, lines, "docs/img/x.png")
    # ... while `paths` drops them: the last glob matching the file decides.
    assert "docs/img/x.png" not in selected(repo, evaluate, lines)
