"""``chimera check`` run below the root: it finds the root and says which one and why."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.cli._root import find_root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)


def test_from_a_subdirectory_of_a_repository(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    git_init(repo)
    code, at_root, _ = run(capsys, "check")
    assert code == 1
    monkeypatch.chdir(repo / "src")
    code, out, err = run(capsys, "check")
    assert code == 1
    # The same report as from the root, not "every target missing".
    assert out.splitlines()[:4] == at_root.splitlines()[:4]
    assert "does not exist" not in out
    assert err.splitlines()[0] == (
        f"chimera: checking {repo} (the nearest directory with specs/; --root sets it)"
    )


def test_from_the_root_nothing_extra_is_said(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git_init(repo)
    code, _, err = run(capsys, "check", "--json")
    assert code == 1
    assert err == ""


def test_a_repository_without_specs_dir_below_uses_its_root(tmp_path: Path) -> None:
    git_init(tmp_path)
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text("", encoding="utf-8")
    assert find_root(tmp_path / "pkg" / "sub") == (
        tmp_path,
        "the root of the git repository",
    )


def test_a_project_nested_in_a_repository_is_its_own_root(tmp_path: Path) -> None:
    # Like the bundled example inside Chimera's own repository.
    git_init(tmp_path)
    (tmp_path / "specs").mkdir()
    example = tmp_path / "examples" / "shop"
    (example / "specs").mkdir(parents=True)
    (example / "src").mkdir()
    assert find_root(example / "src") == (example, "the nearest directory with specs/")


def test_outside_a_repository_the_nearest_pyproject_then_the_current_directory(
    tmp_path: Path,
) -> None:
    (tmp_path / "proj" / "lib").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("", encoding="utf-8")
    assert find_root(tmp_path / "proj" / "lib") == (
        tmp_path / "proj",
        "the nearest directory with pyproject.toml",
    )
    (tmp_path / "loose").mkdir()
    assert find_root(tmp_path / "loose") == (tmp_path / "loose", "the current directory")


def test_root_option_is_taken_as_given(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo / "src")
    code, out, err = run(capsys, "check", "--root", "..", "--only", "widget-class")
    assert (code, err) == (0, "")
    assert "widget-class" in out
