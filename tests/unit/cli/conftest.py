"""A small repository for ``chimera check`` runs (two green, two red requirements)."""

from __future__ import annotations

from pathlib import Path

import pytest

SPEC = """\
requirements:
  - id: widget-class
    title: The app defines Widget
    defines: {path: src/app.py, symbol: Widget, kind: class}

  - id: no-todo
    title: No TODO is left in the sources
    risk: high
    absent: {pattern: 'TODO', paths: ['src/**/*.py']}

  - id: readme-mentions-app
    contains: {path: README.md, pattern: app}

  - id: exit-three
    title: A command that fails
    command: {run: 'echo "50% done"; echo boom >&2; exit 3', timeout: 30}
"""

APP = """\
class Widget:
    def render(self) -> str:
        return "widget"  # TODO: real rendering


# TODO: more
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository at ``tmp_path`` (the working directory) with ``specs/app.yaml``."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(APP, encoding="utf-8")
    (tmp_path / "README.md").write_text("# app\n", encoding="utf-8")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "app.yaml").write_text(SPEC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path
