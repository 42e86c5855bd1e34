"""Each ``command`` check of an autonomous run runs in a disposable copy of the tree."""

# ruff: noqa: E501

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.runner import LocalRunner, check_runner
from chimera.sandbox import DisposableRunner, Sandbox, SandboxMode, export_tree
from chimera.spec.drift import check_drift
from chimera.spec.loader import load_spec

# One line per command: YAML flow mappings read best unbroken.
SPEC = """\
requirements:
  - id: a-rewrite-spec
    command: {run: 'printf "requirements: []\\n" > specs/base.yaml; echo x >> README.md; touch planted.txt'}
  - id: b-sees-pristine
    command: {run: 'grep -q a-rewrite-spec specs/base.yaml && ! test -e planted.txt && test "$(cat README.md)" = "# Tiny"'}
  - id: c-no-git-no-env
    command: {run: '! test -e .git && ! test -e .env && ! test -e config/.env && test -e config/settings.toml'}
  - id: d-in-subdir
    command: {run: 'test "$(basename $PWD)" = sub && echo made > out.txt', cwd: sub}
"""


def _files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git/" not in str(p)}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "base.yaml").write_text(SPEC, encoding="utf-8")
    (root / "README.md").write_text("# Tiny\n", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "sub" / "keep.txt").write_text("k\n", encoding="utf-8")
    (root / "config").mkdir()
    (root / "config" / "settings.toml").write_text("x = 1\n", encoding="utf-8")
    (root / ".gitignore").write_text(".env\nbuild/\n", encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    # A tracked dotenv file deeper down, and an untracked ignored one at the root.
    (root / "config" / ".env").write_text("KEY=tracked-secret\n", encoding="utf-8")
    _git(root, "add", "-f", "config/.env")
    (root / ".env").write_text("KEY=root-secret\n", encoding="utf-8")
    (root / "build").mkdir()
    (root / "build" / "artifact.bin").write_bytes(b"\0" * 10)
    (root / "untracked.txt").write_text("u\n", encoding="utf-8")
    (root / "link").symlink_to("README.md")
    return root


def test_export_copies_what_git_sees_without_git_or_secrets(project: Path, tmp_path: Path) -> None:
    dest = tmp_path / "copy"
    export_tree(project, dest)
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if not p.is_dir())
    assert files == [
        ".gitignore",
        "README.md",
        "config/settings.toml",
        "link",
        "specs/base.yaml",
        "sub/keep.txt",
        "untracked.txt",
    ]
    assert (dest / "link").is_symlink()


def test_export_outside_a_repository_walks_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "a" / ".git").mkdir(parents=True)
    (root / "a" / "f.txt").write_text("f\n", encoding="utf-8")
    (root / ".chimera").mkdir()
    (root / ".chimera" / "state").write_text("s\n", encoding="utf-8")
    (root / ".env.local").write_text("K=v\n", encoding="utf-8")
    dest = tmp_path / "copy"
    assert export_tree(root, dest) == 1
    assert (dest / "a" / "f.txt").is_file()


@pytest.mark.parametrize("mode", ["auto", "scrubbed"])
def test_checks_cannot_change_the_tree_or_each_other(project: Path, mode: SandboxMode) -> None:
    before = {
        p: p.read_bytes() for p in project.rglob("*") if p.is_file() and ".git/" not in str(p)
    }
    sandbox = Sandbox(project, mode=mode)
    spec = load_spec(project / "specs")
    report = check_drift(spec, project, runner=sandbox)
    results = {r.requirement.id: r for r in report.results}
    assert all(r.passed for r in results.values()), {k: r.message for k, r in results.items()}
    assert _files(project) == before
    assert not (project / "planted.txt").exists()
    assert not (project / "sub" / "out.txt").exists()


def test_the_trusted_local_runner_keeps_the_live_tree(project: Path) -> None:
    local = LocalRunner()
    assert check_runner(local, project) is local
    runner = check_runner(Sandbox(project, mode="scrubbed"), project)
    assert isinstance(runner, DisposableRunner)
    assert runner.mode == "scrubbed"


def test_output_names_the_live_tree_and_carried_folders_are_read_only(project: Path) -> None:
    sandbox = Sandbox(project, mode="auto", read_only_paths=[Path("build")])
    runner = sandbox.for_checks(project)
    res = runner.run(
        "pwd; cat build/artifact.bin | wc -c; echo x > build/new", cwd=project, timeout=30
    )
    assert res.output.splitlines()[0] == str(project)
    assert res.output.splitlines()[1].strip() == "10"  # the ignored folder is carried
    assert not (project / "build" / "new").exists()
