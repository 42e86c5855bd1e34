"""Path confinement: every way out of the workspace is refused with a clear message."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.errors import PathEscapeError, ToolError
from chimera.tools import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / ".git").mkdir()
    (root / ".chimera").mkdir()
    (tmp_path / "secret.txt").write_text("outside")
    return Workspace(root)


@pytest.mark.parametrize("rel", ["src/a.py", "./src/a.py", "src/../src/a.py", "new/file.txt"])
def test_paths_inside_resolve(ws: Workspace, rel: str) -> None:
    path = ws.resolve(rel)
    assert path.is_relative_to(ws.root)


@pytest.mark.parametrize("rel", ["", ".", "  "])
def test_empty_means_root(ws: Workspace, rel: str) -> None:
    assert ws.resolve(rel) == ws.root


@pytest.mark.parametrize(
    ("rel", "message"),
    [
        ("../secret.txt", "leaves the workspace"),
        ("src/../../secret.txt", "leaves the workspace"),
        ("..", "leaves the workspace"),
        ("/etc/passwd", "is absolute"),
        ("~/x", "is absolute"),
        (".git/config", "inside .git/"),
        (".git", "inside .git/"),
        ("src/../.git/hooks/pre-commit", "inside .git/"),
        (".chimera/runs/x/audit.jsonl", "inside .chimera/"),
        ("vendor/.git/config", "inside .git/"),
        ("a\x00b", "NUL"),
    ],
)
def test_escapes_are_refused(ws: Workspace, rel: str, message: str) -> None:
    with pytest.raises(PathEscapeError, match=message):
        ws.resolve(rel)


def test_path_escape_is_a_tool_error() -> None:
    assert issubclass(PathEscapeError, ToolError)


def test_symlink_escaping_the_workspace_is_refused(ws: Workspace) -> None:
    (ws.root / "link").symlink_to(ws.root.parent / "secret.txt")
    (ws.root / "dirlink").symlink_to(ws.root.parent)
    with pytest.raises(PathEscapeError, match="symlink"):
        ws.resolve("link")
    with pytest.raises(PathEscapeError, match="symlink"):
        ws.resolve("dirlink/secret.txt")


def test_symlink_into_git_is_refused(ws: Workspace) -> None:
    (ws.root / "sneaky").symlink_to(ws.root / ".git")
    with pytest.raises(PathEscapeError, match=r"\.git/"):
        ws.resolve("sneaky/config")


def test_symlink_inside_is_followed(ws: Workspace) -> None:
    (ws.root / "alias.py").symlink_to(ws.root / "src" / "a.py")
    assert ws.resolve("alias.py") == ws.root / "src" / "a.py"


def test_non_string_is_refused(ws: Workspace) -> None:
    with pytest.raises(PathEscapeError, match="must be a string"):
        ws.resolve(3)  # type: ignore[arg-type]  # deliberately not a string


def test_gitignore_rules(tmp_path: Path) -> None:
    root = tmp_path
    (root / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n")
    (root / "pkg").mkdir()
    (root / "pkg" / ".gitignore").write_text("local.txt\n!important.log\n")
    ws = Workspace(root)
    assert ws.is_ignored(root / "x.log", is_dir=False)
    assert not ws.is_ignored(root / "keep.log", is_dir=False)
    assert ws.is_ignored(root / "build", is_dir=True)
    assert not ws.is_ignored(root / "build", is_dir=False)
    assert ws.is_ignored(root / "pkg" / "local.txt", is_dir=False)
    assert not ws.is_ignored(root / "pkg" / "important.log", is_dir=False)
    assert ws.is_ignored(root / "pkg" / "other.log", is_dir=False)
    assert not ws.is_ignored(root / "local.txt", is_dir=False)


def test_walk_files_skips_ignored_private_and_escaping_links(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".gitignore").write_text("node_modules/\n")
    for rel in ["a.py", "pkg/b.py", "node_modules/m.js", ".git/HEAD", ".chimera/state.json"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    (tmp_path / "out.txt").write_text("x")
    (root / "escape.txt").symlink_to(tmp_path / "out.txt")
    (root / "inner_link.py").symlink_to(root / "a.py")
    ws = Workspace(root)
    files = [ws.relative(p) for p in ws.walk_files(root)]
    assert files == [".gitignore", "a.py", "inner_link.py", "pkg/b.py"]
