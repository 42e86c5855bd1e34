"""Found by an attack pass: two ways a selection used to skip files silently."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from chimera.spec.drift import DriftSession
from chimera.spec.kinds import Absent
from chimera.spec.model import Requirement, SourceLocation, Spec, SpecFile, Status


def _spec(check: Absent) -> Spec:
    loc = SourceLocation("specs/t.yaml", 1, 1)
    return Spec((SpecFile(Path("specs/t.yaml"), (Requirement("no-float", check, loc),)),))


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip


NO_FLOAT = Absent(paths=["src/**/*.py"], pattern=r"float\(")


def test_a_symlinked_directory_is_unscannable_not_skipped(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "impl.py").write_text("x = float(1)\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ok.py").write_text("x = 1\n")
    (tmp_path / "src" / "dirlink").symlink_to("../outside", target_is_directory=True)
    for git in (False, True):
        if git:
            _git(tmp_path, "init", "-q")
            _git(tmp_path, "add", "-A")
            _git(tmp_path, "commit", "-qm", "x")
        report = DriftSession(_spec(Absent(paths=["src/**"], pattern=r"float\(")), tmp_path)
        (result,) = report.report().results
        assert result.status is not Status.PASSED, (git, result.message)
        assert "symlink to a directory" in " ".join(e.note for e in result.evidence)


def test_a_repository_git_refuses_is_an_error_not_a_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / ".gitignore").write_text("evil.py\n")
    (tmp_path / "src" / "evil.py").write_text("x = float(1)\n")
    (tmp_path / "src" / "ok.py").write_text("x = 1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A", "-f")
    _git(tmp_path, "commit", "-qm", "x")
    (tmp_path / ".git" / "HEAD").write_text("not a ref\n")  # git cannot read it any more
    (result,) = DriftSession(_spec(NO_FLOAT), tmp_path).report().results
    assert result.status is Status.ERROR, result.message
    assert "git cannot list" in result.message


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand the tree to another owner")
def test_a_clone_git_calls_dubious_is_an_error_not_a_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack's setting: a clone owned by another user, which git refuses."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)  # no safe.directory from the host
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / ".gitignore").write_text("evil.py\n")
    (tmp_path / "src" / "evil.py").write_text("x = float(1)\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A", "-f")
    _git(tmp_path, "commit", "-qm", "x")
    for path in [tmp_path, *tmp_path.rglob("*")]:
        os.lchown(path, 65534, 65534)
    (result,) = DriftSession(_spec(NO_FLOAT), tmp_path).report().results
    assert result.status is Status.ERROR, result.message
    assert "dubious ownership" in result.message
