"""The plugin imports nothing heavy: not at import time, and not while checking a Spec."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("litellm", "github", "openai", "httpx", "aiohttp", "tiktoken", "unidiff", "dotenv", "rich")


def heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_importing_the_plugin_imports_no_chimera_module() -> None:
    code = (
        "import json, sys\nimport pytest_chimera.plugin\nprint(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    modules = json.loads(out)
    assert "pytest_chimera.plugin" in modules
    assert heavy(modules) == []
    assert [m for m in modules if m == "chimera" or m.startswith("chimera.")] == []


CONFTEST = """
import json, sys
from pathlib import Path

def pytest_sessionfinish(session):
    Path("modules.json").write_text(json.dumps(sorted(sys.modules)))
"""


def test_a_checked_spec_imports_nothing_heavy(project: pytest.Pytester) -> None:
    (project.path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (project.path / "specs" / "cmd.yaml").write_text(
        "requirements:\n  - id: true-cmd\n    command: {run: 'true'}\n", encoding="utf-8"
    )
    result = project.runpytest_subprocess("--chimera-spec", "specs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=2)
    modules = json.loads((project.path / "modules.json").read_text(encoding="utf-8"))
    assert "chimera.spec.drift" in modules
    assert heavy(modules) == []
