"""One version source (the git tag, through setuptools-scm), the commit the package was built
from, and a release workflow that alone publishes."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

import chimera
from chimera.cli import main

ROOT = Path(__file__).resolve().parents[3]
WORKFLOWS = ROOT / ".github" / "workflows"
SHA = "0123456789abcdef0123456789abcdef01234567"


def workflow(name: str) -> dict[Any, Any]:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return {("on" if k is True else k): v for k, v in data.items()}


@pytest.mark.parametrize(
    ("node", "dirty", "commit"),
    [
        (f"g{SHA}", False, SHA),
        (f"g{SHA}", True, None),  # uncommitted changes: no commit can be pinned to
        (None, False, None),  # no git metadata
        ("g0123456", False, None),  # a short node is no pin
    ],
)
def test_the_commit_is_the_built_one_only_from_a_clean_tree(
    node: str | None, dirty: bool, commit: str | None
) -> None:
    assert chimera._commit(node, dirty) == commit


def test_the_version_comes_from_the_build_not_a_literal(capsys: pytest.CaptureFixture[str]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools_scm"]["version_file"] == "chimera/_version.py"
    assert "chimera/_version.py" in (ROOT / ".gitignore").read_text(encoding="utf-8")
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip().endswith(f"chimera {chimera.__version__}")


def test_only_a_version_tag_publishes_and_only_by_trusted_publishing() -> None:
    release = workflow("release.yml")
    assert release["on"] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    assert release["permissions"] == {}
    jobs = release["jobs"]
    assert jobs["build"]["permissions"] == {"contents": "read"}
    assert jobs["publish"]["permissions"] == {"id-token": "write"}
    assert jobs["publish"]["needs"] == "build" and jobs["publish"]["environment"] == "pypi"
    uses = [s.get("uses", "") for s in jobs["publish"]["steps"]]
    assert uses[-1].startswith("pypa/gh-action-pypi-publish@")
    build = "\n".join(s.get("run", "") for s in jobs["build"]["steps"])
    assert "python -m build" in build and "twine check --strict" in build
    assert jobs["build"]["steps"][0]["with"]["fetch-depth"] == 0, "setuptools-scm needs the tag"


def test_ci_publishes_nothing() -> None:
    ci = (WORKFLOWS / "ci.yml").read_text(encoding="utf-8")
    assert "gh-action-pypi-publish" not in ci and "id-token" not in ci
    assert "twine upload" not in ci
    assert workflow("ci.yml")["permissions"] == {"contents": "read"}
