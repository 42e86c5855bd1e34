"""The layer order holds: the AST import graph of ``chimera/`` is acyclic between top-level
names, every edge points down, and ``specs/layers.yaml`` is what ``scripts/layers.py`` says.

The Spec file's regexes can be fooled by a parenthesised import; this graph cannot.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chimera_layers", ROOT / "scripts" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("chimera_layers", module)
    spec.loader.exec_module(module)
    return module


layers = _layers()


def test_chimera_import_graph_has_no_forbidden_edge_and_no_cycle() -> None:
    assert layers.violations(ROOT / "chimera", ROOT / "pytest_chimera") == []


def test_layers_spec_is_generated_from_the_layer_order() -> None:
    expected = layers.render_spec(ROOT / "chimera")
    assert (ROOT / "specs" / "layers.yaml").read_text(encoding="utf-8") == expected


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "chimera"
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    (tmp_path / "pytest_chimera").mkdir(exist_ok=True)
    return pkg


@pytest.mark.parametrize(
    "statement",
    [
        "import chimera.core as c",
        "from chimera import core",
        "from chimera import (\n    errors,\n    core,\n)",
        "from ..core import agent",
        "from ..core.agent import Agent",
        "def f():\n    from chimera.core.agent import Agent",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from chimera.core import agent",
    ],
)
def test_every_spelling_of_an_upward_import_is_an_edge(tmp_path: Path, statement: str) -> None:
    pkg = _package(
        tmp_path,
        {"__init__.py": "", "spec/__init__.py": "", "spec/x.py": statement, "core/__init__.py": ""},
    )
    problems = layers.violations(pkg, tmp_path / "pytest_chimera")
    assert any("chimera.spec imports chimera.core" in p for p in problems), problems
    assert any(p.startswith("chimera/spec/x.py:") for p in problems), problems


def test_a_cycle_between_peers_of_the_ground_floor_is_reported(tmp_path: Path) -> None:
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "errors.py": "from chimera.runner import X\n",
            "runner.py": "from chimera.errors import Y\n",
        },
    )
    problems = layers.violations(pkg, tmp_path / "pytest_chimera")
    assert any(p.startswith("import cycle") for p in problems), problems


def test_peers_are_independent_and_unknown_packages_are_named(tmp_path: Path) -> None:
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "sandbox/__init__.py": "from chimera.tools import registry\n",
            "tools/__init__.py": "",
            "mystery/__init__.py": "",
        },
    )
    problems = layers.violations(pkg, tmp_path / "pytest_chimera")
    assert any("chimera.sandbox imports chimera.tools" in p for p in problems), problems
    assert "chimera.mystery is in no layer of scripts/layers.py" in problems


def test_the_plugin_may_import_only_spec_and_errors(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {"__init__.py": ""})
    (tmp_path / "pytest_chimera" / "plugin.py").write_text(
        "from chimera.spec.model import Spec\nfrom chimera.governance import audit\n"
    )
    problems = layers.violations(pkg, tmp_path / "pytest_chimera")
    assert problems == ["pytest_chimera/plugin.py:2: the pytest plugin imports chimera.governance"]
