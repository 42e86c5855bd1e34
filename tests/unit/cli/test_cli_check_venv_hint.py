"""``chimera check`` names a virtual environment its scopes read: a ``.venv`` made inside the
project and missing from ``.gitignore`` is untracked, so git lists it and ``**/*.py`` selects
its files (a new user's ``cents-not-floats`` found ``float(`` 117 times in site-packages). The
selection itself is unchanged (DESIGN: the files git sees); the report adds one hint line.

Each run is a real process in a real git repository, so the replay of an unchanged re-check
and the report cache take part as they do for a user.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SPEC = """\
requirements:
  - id: cents-not-floats
    absent: {pattern: '\\bfloat\\(', paths: ['**/*.py']}
"""
TIME = re.compile(r" in \d+\.\d+s")
HINT = (
    "chimera: hint: {n} files under .venv/ (a virtual environment) were selected: "
    "add it to .gitignore"
)


def chimera(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHIMERA_", "GITHUB_"))}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "chimera", "check", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The first tutorial's project with an environment made in it the way the tutorial did
    (``python -m venv .venv``: a ``pyvenv.cfg`` and packages that use ``float(``)."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "cart.py").write_text("def total(p: list[int]) -> int:\n    return sum(p)\n")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "cart.yaml").write_text(SPEC)
    venv = tmp_path / ".venv"
    (venv / "lib" / "site-packages" / "money").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    for n in range(3):
        (venv / "lib" / "site-packages" / "money" / f"m{n}.py").write_text("x = float(1)\n")
    (venv / "lib" / "site-packages" / "money" / "README.txt").write_text("not python\n")
    return tmp_path


def test_the_report_names_an_unignored_virtual_environment_once(project: Path) -> None:
    first = chimera(project)
    assert first.returncode == 1, first.stderr
    assert ".venv/lib/site-packages/money/m0.py:1:5" in first.stdout  # the engine is unchanged
    assert first.stderr.splitlines() == [HINT.format(n=3)]
    # Not replayed without it: the re-check (report cache warm) says it again.
    again = chimera(project)
    assert again.returncode == 1
    assert TIME.sub("", again.stdout) == TIME.sub("", first.stdout)
    assert again.stderr == first.stderr


def test_json_stays_one_object_and_the_hint_goes_to_stderr(project: Path) -> None:
    result = chimera(project, "--json", "--no-cache")
    assert json.loads(result.stdout)["counts"]["failed"] == 1
    assert result.stderr.splitlines() == [HINT.format(n=3)]


def test_once_ignored_there_is_no_hint_and_the_spec_is_green(project: Path) -> None:
    (project / ".gitignore").write_text(".venv/\n")
    result = chimera(project)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize(
    "scope",
    [
        "paths: ['**/*.py'], exclude: ['.venv/']",  # the scope leaves it out itself
        "paths: ['/*.py']",  # the root's files only
        "path: .venv/lib/site-packages/money/m0.py",  # one file, named on purpose
    ],
)
def test_no_hint_when_no_paths_scope_selects_the_environment(project: Path, scope: str) -> None:
    (project / "specs" / "cart.yaml").write_text(
        "requirements:\n  - id: r\n    absent: {pattern: 'float\\(', " + scope + "}\n"
    )
    result = chimera(project, "--no-cache")
    assert result.stderr == "", result.stderr


def test_a_folder_without_pyvenv_cfg_is_not_named(project: Path) -> None:
    (project / ".venv" / "pyvenv.cfg").rename(project / ".venv" / "pyvenv.txt")
    result = chimera(project, "--no-cache")
    assert result.returncode == 1
    assert result.stderr == ""


def test_a_contains_scope_counts_too_and_one_file_is_singular(project: Path) -> None:
    for extra in (project / ".venv" / "lib" / "site-packages" / "money").glob("m[12].py"):
        extra.unlink()
    (project / "specs" / "cart.yaml").write_text(
        "requirements:\n  - id: r\n    contains: {pattern: 'sum', paths: ['**/*.py']}\n"
    )
    result = chimera(project, "--no-cache")
    assert result.returncode == 0
    assert result.stderr.splitlines() == [
        "chimera: hint: 1 file under .venv/ (a virtual environment) was selected: "
        "add it to .gitignore"
    ]
