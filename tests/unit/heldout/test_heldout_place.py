"""Where the held-out folder may live: refusals that keep it out of git and out of --spec."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.config.heldout import HeldOutConfig
from chimera.core.heldout import locate_heldout, refuse_overlap
from chimera.errors import ConfigError, UsageError

HIDDEN = "requirements:\n  - id: hidden-one\n    contains: {path: a.py, pattern: x}\n"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def _repo(tmp_path: Path, ignore: str = "specs-heldout/\n") -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / ".gitignore").write_text(ignore)
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "base"], cwd=root, check=True)
    (root / "specs-heldout").mkdir()
    (root / "specs-heldout" / "hidden.yaml").write_text(HIDDEN)
    return root


def _cfg(folder: str = "specs-heldout", required: bool = True) -> HeldOutConfig:
    return HeldOutConfig(dir=folder, required=required)


def test_an_ignored_folder_is_accepted(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    place = locate_heldout(root, _cfg())
    assert place is not None and place.inside and place.rel_in_copy == "specs-heldout"
    assert [p.name for p in place.files()] == ["hidden.yaml"]
    assert locate_heldout(root, HeldOutConfig()) is None


def test_a_folder_git_does_not_ignore_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path, ignore=".chimera/\n")
    with pytest.raises(ConfigError, match="specs-heldout is not ignored by git"):
        locate_heldout(root, _cfg())


def test_a_tracked_folder_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    subprocess.run([*GIT, "add", "-f", "specs-heldout"], cwd=root, check=True)
    with pytest.raises(ConfigError, match="tracked by git"):
        locate_heldout(root, _cfg())


def test_a_folder_once_committed_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    subprocess.run([*GIT, "add", "-f", "specs-heldout"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "oops"], cwd=root, check=True)
    subprocess.run([*GIT, "rm", "-q", "-r", "--cached", "specs-heldout"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "removed"], cwd=root, check=True)
    with pytest.raises(ConfigError, match="in the repository's history"):
        locate_heldout(root, _cfg())


def test_missing_empty_and_misplaced_folders(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with pytest.raises(ConfigError, match="nope does not exist"):
        locate_heldout(root, _cfg("nope"))
    assert locate_heldout(root, _cfg("nope", required=False)) is None
    (root / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no spec file"):
        locate_heldout(root, _cfg("empty"))
    with pytest.raises(ConfigError, match="holds the whole workspace"):
        locate_heldout(root, _cfg("."))
    (root / ".chimera" / "h").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"lies in \.git or \.chimera"):
        locate_heldout(root, _cfg(".chimera/h"))
    (root / "file.yaml").write_text(HIDDEN)
    with pytest.raises(ConfigError, match="is not a folder"):
        locate_heldout(root, _cfg("file.yaml"))


def test_a_folder_outside_the_repository_needs_no_git_rules(tmp_path: Path) -> None:
    root = _repo(tmp_path, ignore=".chimera/\n")
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "h.yml").write_text(HIDDEN)
    place = locate_heldout(root, _cfg(str(outside)))
    assert place is not None and not place.inside and place.rel_in_copy == "private"


def test_visible_spec_paths_may_not_overlap_it(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    place = locate_heldout(root, _cfg())
    assert place is not None
    refuse_overlap(place, [Path("specs")])
    for bad in (Path("specs-heldout"), Path("specs-heldout/hidden.yaml"), Path()):
        with pytest.raises(UsageError, match="overlaps the held-out folder"):
            refuse_overlap(place, [bad])
