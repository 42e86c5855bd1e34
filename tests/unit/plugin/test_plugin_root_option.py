"""``--chimera-root DIR`` (two tokens) must never let pytest take DIR's configuration.

pytest chooses its rootdir and configuration file before it loads this plugin, reading ``DIR``
as a test path; the plugin redoes that search without its own option values and refuses the
run in one line when the answers differ. ``--chimera-root=DIR`` (one token) is unaffected.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_chimera.setup_check import separate_values


@pytest.fixture
def two_repos(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> tuple[pytest.Pytester, Path]:
    """``project`` (the conftest's) in ``proj/`` and a target tree with its own pytest.ini in
    ``target/``, side by side; the working directory is ``proj/``."""
    proj = project.path / "proj"
    proj.mkdir()
    for name in ("pyproject.toml", "src", "README.md", "tests", "specs"):
        (project.path / name).rename(proj / name)
    target = project.path / "target"
    target.mkdir()
    (target / "pytest.ini").write_text("[pytest]\naddopts = --collect-only\n", encoding="utf-8")
    (target / "README.md").write_text("pip install app\n", encoding="utf-8")
    (target / "src").mkdir()
    (target / "src" / "app.py").write_text("class Widget: ...\n", encoding="utf-8")
    monkeypatch.chdir(proj)
    return project, target


def test_root_given_as_two_tokens_that_moves_the_configuration_is_refused(
    two_repos: tuple[pytest.Pytester, Path],
) -> None:
    project, _ = two_repos
    # pytest's search starts at the first test path it sees: here ../target, with an ini.
    result = project.runpytest("--chimera-root", "../target", "--chimera-spec", "specs")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert "--chimera-root ../target: pytest read '../target' as a test path" in err
    assert "write --chimera-root=../target (one token)" in err
    assert "Traceback" not in err


def test_root_given_as_one_token_keeps_the_projects_configuration(
    two_repos: tuple[pytest.Pytester, Path],
) -> None:
    project, _ = two_repos
    result = project.runpytest("--chimera-root=../target", "--chimera-spec", "specs", "-rA")
    # The project's testpaths (2 tests) and the target's files (its README passes).
    result.stdout.fnmatch_lines(["*rootdir: *proj*", "*PASSED specs/app.yaml::readme-install*"])
    assert "--collect-only" not in result.stdout.str()
    result.assert_outcomes(passed=5, failed=1)


def test_two_tokens_inside_the_project_change_nothing(project: pytest.Pytester) -> None:
    sub = project.path / "sub"
    sub.mkdir()
    (sub / "README.md").write_text("pip install app\n", encoding="utf-8")
    result = project.runpytest("--chimera-spec", "specs", "--chimera-root", "sub", "-k", "readme")
    result.assert_outcomes(passed=1, deselected=5)


def test_separate_values_stop_at_double_dash() -> None:
    args = ["--chimera-spec", "specs", "--chimera-root=x", "-k", "a", "--", "--chimera-root", "y"]
    assert separate_values(args) == [("--chimera-spec", "specs")]
