"""Which files each spelling of a ``paths`` glob selects, through ``chimera check``.

A leading ``./`` anchors a glob at the root and keeps the rest a path: ``./!x`` is the file
``!x`` (not a negation), ``./#x`` the file ``#x`` (not a comment), ``.//x`` is ``/x``. Globs
that cannot name files (a comment, the root itself, a ``..`` segment) are validation problems
at their ``file:line:col``. Real files in a tmp git tree (half tracked, half untracked), the
real CLI, its ``--json`` evidence naming every selected file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from chimera.cli import main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FILES = ("!x", "#x", "x", "x.py", "sub/x", "sub/!x", "sub/#x", "sub/x.py", "src/a.py", "gen/b.py")


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``repo/`` holds FILES (the Spec stays outside it, in the working directory)."""
    repo = tmp_path / "repo"
    for rel in FILES:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("HIT\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "--", *FILES[::2]], cwd=repo, check=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(tmp: Path, scope: Mapping[str, object], *flags: str) -> tuple[int, str]:
    """``chimera check`` of one ``absent`` requirement over ``scope``: (exit code, its line)."""
    line = f"    absent: {json.dumps({**scope, 'pattern': 'HIT'})}"
    (tmp / "t.yaml").write_text(f"requirements:\n  - id: r\n{line}\n", encoding="utf-8")
    return main(["check", "--root", "repo", "--no-cache", *flags, "t.yaml"]), line


def selected(
    root: Path, capsys: pytest.CaptureFixture[str], paths: list[str], exclude: list[str]
) -> set[str]:
    """The files an ``absent`` over ``paths`` minus ``exclude`` names (every file holds HIT)."""
    capsys.readouterr()
    code, _ = check(root, {"paths": paths, "exclude": exclude}, "--json", "--all-evidence")
    doc = json.loads(capsys.readouterr().out)
    (result,) = doc["results"]
    if result["status"] == "error":
        assert "selects zero files" in result["message"], result
        return set()
    assert code == 1 and result["status"] == "failed", result
    return {e["file"] for e in result["evidence"]}


@pytest.mark.parametrize(
    ("paths", "exclude", "expected"),
    [
        # ./ anchors at the root.
        (["./x"], [], {"x"}),
        (["x"], [], {"x", "sub/x"}),
        (["/x"], [], {"x"}),
        (["././x"], [], {"x"}),
        ([".//x"], [], {"x"}),
        (["./x.py"], [], {"x.py"}),
        (["*.py"], [], {"x.py", "sub/x.py", "src/a.py", "gen/b.py"}),
        (["./*.py"], [], {"x.py"}),
        (["./**/*.py"], [], {"x.py", "sub/x.py", "src/a.py", "gen/b.py"}),
        (["./src/*.py"], [], {"src/a.py"}),
        (["./sub"], [], {"sub/x", "sub/!x", "sub/#x", "sub/x.py"}),
        # After ./ a leading ! or # is part of the name.
        (["./!x"], [], {"!x"}),
        (["./#x"], [], {"#x"}),
        (["/!x"], [], {"!x"}),
        (["./sub/!x"], [], {"sub/!x"}),
        # A leading ! is still a negation, with or without ./ after it.
        (["**/*.py", "!./gen/**"], [], {"x.py", "sub/x.py", "src/a.py"}),
        (["**/*.py", "!gen/**"], [], {"x.py", "sub/x.py", "src/a.py"}),
        (["**", "!./!x"], [], set(FILES) - {"!x"}),
        (["**", "!x"], [], set(FILES) - {"x", "sub/x"}),
        # exclude reads the same way.
        (["**/*.py"], ["./x.py"], {"sub/x.py", "src/a.py", "gen/b.py"}),
        (["**/*.py"], ["x.py"], {"src/a.py", "gen/b.py"}),
        (["**"], ["./#x", "./!x"], set(FILES) - {"#x", "!x"}),
        (["**"], [".//sub/"], {"!x", "#x", "x", "x.py", "src/a.py", "gen/b.py"}),
        # Nothing to select: an error at check time, not a pass.
        (["./nowhere"], [], set()),
    ],
)
def test_each_spelling_selects(
    tree: Path,
    capsys: pytest.CaptureFixture[str],
    paths: list[str],
    exclude: list[str],
    expected: set[str],
) -> None:
    assert selected(tree, capsys, paths, exclude) == expected


@pytest.mark.parametrize(
    ("glob", "message"),
    [
        ("#x", "'#x' is a comment in gitignore syntax and selects nothing; write '/#x'"),
        ("./", "'./' names the root directory, not files; write '**' for every file"),
        (".", "'.' names the root directory"),
        ("/", "'/' names the root directory"),
        ("!./", "'!./' names the root directory"),
        ("!", "'!' negates nothing"),
        ("../x", "'..' in '../x' never matches"),
        ("src/../x", "'..' in 'src/../x' never matches"),
    ],
)
def test_globs_that_cannot_name_files_are_problems_at_their_place(
    tree: Path, capsys: pytest.CaptureFixture[str], glob: str, message: str
) -> None:
    for field in ("paths", "exclude"):
        scope = {"paths": [glob]} if field == "paths" else {"paths": ["**"], "exclude": [glob]}
        capsys.readouterr()
        code, line = check(tree, scope)
        assert code == 2
        err = capsys.readouterr().err.splitlines()
        col = line.index(json.dumps([glob])) + 2  # the glob's opening quote
        assert err[0].startswith(f"t.yaml:3:{col}: absent.{field}[0]: {message}"), err
