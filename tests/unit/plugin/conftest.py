"""A small project for pytester runs: tests/, src/, README and a spec with red and green."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

APP_SOURCE = '''\
class Widget:
    """A widget."""

    def render(self) -> str:
        # TODO: real rendering
        return "widget"


# TODO one
# TODO two
# TODO three
# TODO four
# TODO five
# TODO six
'''

SPEC_APP = """\
requirements:
  - id: widget-class
    title: The app defines Widget
    defines: {path: src/app.py, symbol: Widget, kind: class}

  - id: widget-render
    risk: medium
    defines: {path: src/app.py, symbol: Widget.render, kind: method}

  - id: no-todo
    title: No TODO is left in the sources
    risk: high
    absent: {pattern: 'TODO', paths: ['src/**/*.py']}

  - id: readme-install
    title: The README says how to install the app
    contains: {path: README.md, pattern: 'pip install app', regex: false}
"""

TESTS = """\
def test_one():
    assert 1 + 1 == 2


def test_two():
    assert "chimera"
"""

PYPROJECT = """\
[tool.pytest.ini_options]
testpaths = ["tests"]
"""

APP_IDS = ["widget-class", "widget-render", "no-todo", "readme-install"]
"""Ids of SPEC_APP, in file order (two pass, no-todo and readme-install fail)."""

_OUTCOME_RE = re.compile(r"\b(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b (\S+::\S+)")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with 2 tests (testpaths = tests) and specs/app.yaml (2 green, 2 red)."""
    pytester.makefile(".toml", pyproject=PYPROJECT)
    (pytester.path / "src").mkdir()
    (pytester.path / "src" / "app.py").write_text(APP_SOURCE, encoding="utf-8")
    (pytester.path / "README.md").write_text("# app\n\nA tiny app.\n", encoding="utf-8")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_app.py").write_text(TESTS, encoding="utf-8")
    (pytester.path / "specs").mkdir()
    (pytester.path / "specs" / "app.yaml").write_text(SPEC_APP, encoding="utf-8")
    return pytester


def outcomes(lines: list[str]) -> dict[str, str]:
    """``{node id: outcome}`` from ``-rA`` / ``-v`` output (xdist's ``[gw0]`` prefixes too)."""
    found: dict[str, str] = {}
    for line in lines:
        match = _OUTCOME_RE.search(line)
        if match:
            found[match.group(2)] = match.group(1)
    return found


@pytest.fixture
def parse_outcomes() -> Callable[[list[str]], dict[str, str]]:
    """The :func:`outcomes` parser (conftest modules are not importable by name)."""
    return outcomes
