"""``chimera demo`` runs the agent engine: without the ``agent`` extra it says so in one line,
before it makes a folder or prints anything (a new user's first command, from the plain wheel,
used to start the demo and stop mid-run naming an internal step). The installed half — the plain
wheel, really without the extra — is tests/e2e/test_wheel_tiers.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from chimera.cli import main
from chimera.cli.demo import AGENT_MODULES, NEEDS_AGENT, missing_agent_modules

ROOT = Path(__file__).resolve().parents[3]


def _walker() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "chimera_plain_imports", ROOT / "scripts" / "plain_imports.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("chimera_plain_imports", module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("absent", AGENT_MODULES)
def test_without_the_agent_extra_the_demo_says_so_in_one_line_before_anything(
    absent: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A None entry in sys.modules is how Python spells "this module cannot be imported".
    monkeypatch.setitem(sys.modules, absent, None)
    assert missing_agent_modules() == [absent]
    target = tmp_path / "demo"
    assert main(["demo", "--dir", str(target), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "chimera demo runs the agent engine: pip install 'pytest-chimera[agent]'\n"
    )
    assert captured.err == NEEDS_AGENT + "\n"
    assert captured.out == ""
    assert not target.exists(), "nothing was made before the check"


def test_with_the_agent_extra_nothing_is_missing() -> None:
    # The dev install holds every extra.
    assert missing_agent_modules() == []


def test_the_modules_looked_up_are_the_agent_extras_distributions() -> None:
    walker = _walker()
    agent = walker.dependency_groups(ROOT / "pyproject.toml")["agent"]
    provides = walker.import_names()  # import name -> distributions, as installed
    looked_up = {name: provides.get(name, set()) for name in AGENT_MODULES}
    assert {m: d for m, d in looked_up.items() if not d & agent} == {}, (
        "a module the demo looks up belongs to no distribution of the agent extra"
    )
    covered = set().union(*looked_up.values())
    assert agent - covered == set(), "a distribution of the agent extra is not looked up"


def test_the_help_says_the_demo_needs_the_agent_extra(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["demo"])
    # The entry and its wrapped continuation lines (indented past the command names).
    end = next(
        (i for i, line in enumerate(lines[start + 1 :]) if not line.startswith(" " * 8)),
        len(lines),
    )
    assert "agent extra" in " ".join(" ".join(lines[start : start + 1 + end]).split())
    assert main(["demo", "--help"]) == 0
    assert "pip install 'pytest-chimera[agent]'" in " ".join(capsys.readouterr().out.split())
