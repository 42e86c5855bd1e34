"""Shared helpers of the documentation tests: the repository, the docs folder, a site build."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"


@pytest.fixture(scope="session")
def reference() -> ModuleType:
    """``scripts/docs_reference.py`` (scripts/ is not a package), imported by path."""
    path = ROOT / "scripts" / "docs_reference.py"
    spec = importlib.util.spec_from_file_location("chimera_docs_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_site(project: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the site whose ``mkdocs.yml`` is in ``project``."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(project / "_site")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def build_site() -> Callable[[Path], subprocess.CompletedProcess[str]]:
    """Builds the site of a folder holding ``mkdocs.yml`` with ``mkdocs build --strict``."""
    return _build_site


@pytest.fixture
def site_copy(tmp_path: Path) -> Path:
    """A copy of ``mkdocs.yml`` and ``docs/`` to plant faults in."""
    shutil.copy2(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    return tmp_path
