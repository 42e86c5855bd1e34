"""Literal ``paths`` globs answered by lookup select exactly what pathspec's gitwildmatch does.

Differential: random trees (real files, some tracked, some untracked, some ignored), random
glob lists mixing literal paths and real globs with the edge cases of gitwildmatch (leading
``/`` and ``./``, trailing ``/``, case, trailing spaces, escapes, ``**``, negation), the
lookup against pathspec on every listed file, and whole selections against the pathspec-only
path of the same tree, in git's listing and in the walk.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pathspec
import pytest
from pathspec.patterns.gitignore import GitIgnorePatternError

from chimera.spec.engine.literal import Listing, literal_glob, literal_globs
from chimera.spec.engine.options import EngineStats
from chimera.spec.engine.tree import FileTree, normalize_glob

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SEGMENTS = ["src", "Src", "a", "b", "a b", "é", "pkg", "x.py", "main.py", "#h", "!bang"]
SEGMENTS += ["b.txt", "dir.d", "[x]", "sp ", "a\\b", "-", "README"]


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def make_tree(root: Path, rng: random.Random) -> None:
    files: set[str] = set()
    dirs: set[str] = set()
    for _ in range(rng.randint(15, 40)):
        parts = [rng.choice(SEGMENTS) for _ in range(rng.randint(1, 4))]
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts))}
        rel = "/".join(parts)
        if rel in dirs or prefixes & files:
            continue  # a name cannot be both a file and a directory
        files.add(rel)
        dirs |= prefixes
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", encoding="utf-8")
    names = sorted(files)
    ignored = rng.sample(SEGMENTS, 2)
    (root / ".gitignore").write_text(
        "\n".join(s.replace("\\", "\\\\").replace("[", "\\[") for s in ignored) + "\n",
        encoding="utf-8",
    )
    git(root, "init", "-q")
    tracked = rng.sample(names, len(names) // 2)
    if tracked:
        git(root, "add", "-f", "--", *tracked)  # some tracked files are ignored too
        git(root, "commit", "-q", "-m", "t")


def mutate(path: str, rng: random.Random) -> str:
    parts = path.split("/")
    pick = rng.random()
    if pick < 0.2:
        base = parts[-1]
    elif pick < 0.4 and len(parts) > 1:
        base = "/".join(parts[: rng.randint(1, len(parts) - 1)])
    elif pick < 0.5:
        base = rng.choice(SEGMENTS)
    elif pick < 0.55:
        base = "nowhere/" + parts[-1]
    else:
        base = path
    edits = [
        lambda g: "/" + g,
        lambda g: "./" + g,
        lambda g: "././" + g,
        lambda g: g + "/",
        lambda g: g.swapcase(),
        lambda g: g + " ",
        lambda g: g + "\\ ",
        lambda g: "**/" + g,
        lambda g: g + "/**",
        lambda g: g[:-1] + "?",
        lambda g: "*" + g[1:],
        lambda g: "!" + g,
        lambda g: "#" + g,
        lambda g: g.replace("/", "//", 1),
        lambda g: g.replace("/", "/./", 1),
        lambda g: "\\" + g,
    ]
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
        base = rng.choice(edits)(base)
    return base


def globs_for(listed: list[str], rng: random.Random, most: int) -> list[str]:
    return [mutate(rng.choice(listed), rng) for _ in range(rng.randint(1, most))]


def trees(root: str, *, use_git: bool, hidden: tuple[str, ...]) -> tuple[FileTree, FileTree]:
    def one(lookup: bool) -> FileTree:
        return FileTree(root, EngineStats(), use_git=use_git, hidden=hidden, literal_lookup=lookup)

    return one(True), one(False)


@needs_git
@pytest.mark.parametrize("seed", range(8))
def test_literal_lookup_selects_what_pathspec_selects(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "repo"
    root.mkdir()
    make_tree(root, rng)
    real = os.path.realpath(root)
    listing = FileTree(real, EngineStats()).git_listing()
    assert listing
    listed = list(listing)
    index = Listing(listing)
    literal_lists = 0
    for _ in range(150):
        globs = [normalize_glob(g) for g in globs_for(listed, rng, 3)]
        lits = literal_globs(globs)
        if lits is None:
            continue
        literal_lists += 1
        expected = set(pathspec.GitIgnoreSpec.from_lines(globs).match_files(listed))
        assert index.matches(lits) == expected, globs
    assert literal_lists > 15  # the lookup itself was exercised, not only the fallback
    hidden = (str(Path(real) / rng.choice(listed).split("/")[0]),) if seed % 2 else ()
    for use_git in (True, False):
        fast, reference = trees(real, use_git=use_git, hidden=hidden)
        for _ in range(100):
            paths = globs_for(listed, rng, 3)
            exclude = globs_for(listed, rng, 2) if rng.random() < 0.3 else []
            expected_sel = same_selection(fast, reference, paths, exclude)
            if expected_sel is None:
                continue
            assert fast.select(paths, exclude) == expected_sel  # memoised: the same answer
            # "./" anchors at the root: "./p" selects what "/p" does, even when p starts with
            # "!" or "#" (a file of that name, not a negation or a comment).
            dotted = ["./" + p for p in paths]
            rooted = ["/" + re.sub(r"^(?:\.?/)+", "", p) for p in paths]
            dotted_sel = same_selection(fast, reference, dotted, exclude)
            assert dotted_sel == same_selection(fast, reference, rooted, exclude), dotted


def same_selection(
    fast: FileTree, reference: FileTree, paths: list[str], exclude: list[str]
) -> list[str] | None:
    """What both trees select (asserted equal); ``None`` when pathspec rejects a glob (in
    both: Spec validation rejects the backslashes that cause it before any selection)."""
    try:
        expected = reference.select(paths, exclude)
    except GitIgnorePatternError:
        with pytest.raises(GitIgnorePatternError):
            fast.select(paths, exclude)
        return None
    assert fast.select(paths, exclude) == expected, (fast.use_git, paths, exclude)
    return expected


@pytest.mark.parametrize(
    ("glob", "is_literal"),
    [
        ("a/b.py", True),
        ("/a", True),
        ("a/", True),
        ("b.py", True),
        ("a b/é", True),
        ("a ", False),  # git strips trailing spaces
        ("a\\ ", False),
        (" a", False),
        ("a\\b", False),
        ("**/a", False),
        ("a/**", False),
        ("a?", False),
        ("[ab]", False),
        ("!a", False),
        ("#a", False),
        ("/", False),
        ("", False),
        ("a//b", False),
        ("a/./b", False),
        ("../a", False),
    ],
)
def test_which_globs_take_the_lookup(glob: str, is_literal: bool) -> None:
    assert (literal_glob(glob) is not None) is is_literal


def test_a_directory_named_literally_selects_everything_under_it() -> None:
    names = ("a/b", "a/b.py", "a/b/c.py", "a/b/d/e.py", "a/bc", "x/a/b/c.py", "x/b/y")
    index = Listing(names)
    for globs in (["a/b"], ["/a/b"], ["a/b/"], ["b"], ["b/"], ["B"], ["a"]):
        lits = literal_globs([normalize_glob(g) for g in globs])
        assert lits is not None
        expected = set(pathspec.GitIgnoreSpec.from_lines(globs).match_files(names))
        assert index.matches(lits) == expected, globs
    assert index.matches(literal_globs(["a/b/"]) or []) == {"a/b/c.py", "a/b/d/e.py"}
    assert index.matches(literal_globs(["b/"]) or []) == {
        "a/b/c.py",
        "a/b/d/e.py",
        "x/a/b/c.py",
        "x/b/y",
    }


@needs_git
def test_selection_order_is_the_pools_anchor_by_anchor(tmp_path: Path) -> None:
    # "a b/" sorts before "a/" (space before slash) but the anchor "a" comes first.
    for rel in ("a/x.py", "a b/y.py", "a/z/w.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n", encoding="utf-8")
    git(tmp_path, "init", "-q")
    fast, reference = trees(os.path.realpath(tmp_path), use_git=True, hidden=())
    paths = ["a b/y.py", "a/x.py", "/a/z"]
    assert reference.select(paths, []) == ["a/x.py", "a/z/w.py", "a b/y.py"]
    assert fast.select(paths, []) == reference.select(paths, [])
