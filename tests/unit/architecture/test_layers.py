"""The layer order holds: the AST import graph of ``chimera/`` is acyclic between top-level
names, every edge points down, and ``specs/layers.yaml`` is what ``scripts/layers.py`` says.

The Spec file's regexes can be fooled by a parenthesised import; this graph cannot.
"""

from __future__ import annotations

import ast
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


ROOMS = {
    "github": {
        "mail": {},
        "desk": {"mail": "the desk's state is kept through the API"},
        "jobs": {"*": "a job wires the rooms"},
    }
}


def _rooms(tmp_path: Path, files: dict[str, str]) -> Path:
    base = {
        "__init__.py": "",
        "github/__init__.py": '"""GitHub."""\n',
        "github/mail/__init__.py": '"""The mail."""\n',
        "github/mail/post.py": "",
        "github/desk/__init__.py": '"""The desk."""\n',
        "github/desk/tray.py": "from chimera.github.mail.post import X\n",
        "github/jobs/__init__.py": '"""The jobs."""\n',
        "github/jobs/drain.py": "from chimera.github.desk import tray\n",
    }
    return _package(tmp_path, {**base, **files})


def test_declared_room_edges_and_jobs_wildcard_are_allowed(tmp_path: Path) -> None:
    assert layers.room_violations(_rooms(tmp_path, {}), ROOMS) == []


@pytest.mark.parametrize(
    "statement",
    [
        "from chimera.github.desk.tray import Tray",
        "from chimera.github import desk",
        "import chimera.github.jobs.drain",
        "from ..desk import tray",
        "def f():\n    from chimera.github.desk import tray",
    ],
)
def test_an_undeclared_sideways_import_between_rooms_is_reported(
    tmp_path: Path, statement: str
) -> None:
    pkg = _rooms(tmp_path, {"github/mail/back.py": statement})
    problems = layers.room_violations(pkg, ROOMS)
    assert any(
        p.startswith("chimera/github/mail/back.py:")
        and ": chimera.github.mail imports chimera.github." in p
        for p in problems
    ), problems


def test_a_module_outside_every_room_and_an_undeclared_room_are_named(tmp_path: Path) -> None:
    pkg = _rooms(tmp_path, {"github/loose.py": "", "github/attic/__init__.py": ""})
    problems = layers.room_violations(pkg, ROOMS)
    assert (
        "chimera/github/loose.py is in no room of chimera.github (ROOMS in scripts/layers.py)"
        in problems
    )
    assert "chimera.github.attic is in no room of scripts/layers.py" in problems


def test_a_cycle_between_rooms_is_reported_even_when_both_edges_are_declared(
    tmp_path: Path,
) -> None:
    rooms = {"github": {**ROOMS["github"], "mail": {"desk": "a reason"}}}
    pkg = _rooms(tmp_path, {"github/mail/back.py": "from chimera.github.desk import tray\n"})
    problems = layers.room_violations(pkg, rooms)
    assert problems == ["import cycle between rooms of chimera.github: desk -> mail -> desk"]


def test_without_rooms_declared_a_flat_layer_is_not_checked(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {"__init__.py": "", "github/a.py": "from chimera.github import b\n"})
    assert layers.room_violations(pkg, {}) == []


def test_every_declared_room_has_a_one_line_docstring() -> None:
    for layer, decl in layers.ROOMS.items():
        for room in decl:
            init = ROOT / "chimera" / layer / room / "__init__.py"
            if not init.exists():
                continue
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
            assert doc, f"{init.relative_to(ROOT)} has no docstring"
            assert doc.splitlines()[0].strip(), f"{init.relative_to(ROOT)}: empty first line"


def test_the_spec_forbids_each_undeclared_room_edge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = _rooms(tmp_path, {})
    monkeypatch.setattr(layers, "ROOMS", ROOMS)
    text = layers.render_spec(pkg)
    assert "id: room-github-mail-not-desk" in text
    assert "id: room-github-desk-not-jobs" in text
    assert "id: room-github-desk-not-mail" not in text
    assert "id: room-github-jobs-not-" not in text
    assert "#   desk -> mail: the desk's state is kept through the API" in text
