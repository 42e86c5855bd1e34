"""The static half of the plain install's proof (scripts/plain_imports.py): every import reachable
from the console script's check path, the pytest11 plugin and the Action's check mode is of the
standard library, a plain dependency, or an extra's package behind the MissingExtraError guard.
The installed half is tests/e2e/test_wheel_tiers.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

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


walker = _walker()

PYPROJECT = """\
[project]
name = "pytest-chimera"
dependencies = ["pytest>=8", "PyYAML>=6"]

[project.optional-dependencies]
github = ["PyGithub>=2"]
agent = ["pytest-chimera[github]", "litellm>=1"]
eval = ["numpy>=1"]
dev = ["pytest-chimera[agent,eval]", "mypy"]
"""


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, "utf-8")
    for rel, text in {"chimera/__init__.py": "", "chimera/cli/__init__.py": "", **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return tmp_path


ENTRY = {"chimera.cli.check": None}


def test_the_plain_entry_points_import_only_what_the_plain_install_holds() -> None:
    assert walker.problems() == []


def test_the_walk_reaches_the_report_cache_save_and_the_plugin() -> None:
    sources = {f.source for f in walker.reachable_imports(ROOT, walker.ENTRIES)}
    # The function-local import that crashed the plain install lives here.
    assert "chimera/spec/engine/reports.py" in sources
    assert "pytest_chimera/plugin.py" in sources
    assert "chimera/github/trust/settings.py" in sources, (
        "the Action's check mode reads its settings"
    )


def test_a_function_local_import_of_an_extra_s_package_is_a_problem(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "chimera/cli/check.py": "def handler():\n    from chimera.cache import save\n",
            "chimera/cache.py": "def save():\n    import github\n    return github\n",
        },
    )
    assert walker.problems(root, ENTRY) == [
        "chimera/cache.py:2: 'github' (extra agent, github) is imported without the "
        "MissingExtraError guard on the plain install's path"
    ]


def test_the_guard_naming_an_extra_that_holds_the_package_is_accepted(tmp_path: Path) -> None:
    guarded = (
        "from chimera.errors import MissingExtraError\n\n"
        "def client():\n"
        "    try:\n"
        "        import github\n"
        "    except ImportError as exc:\n"
        "        raise MissingExtraError('the GitHub integration', {extra!r}) from exc\n"
        "    return github\n\n"
        "def later():\n"
        "    import github.Auth\n"  # after the module's guard: covered by it
        "    return github.Auth\n"
    )
    good = tree(tmp_path / "good", {"chimera/cli/check.py": guarded.format(extra="github")})
    assert walker.problems(good, ENTRY) == []
    wrong = tree(tmp_path / "wrong", {"chimera/cli/check.py": guarded.format(extra="eval")})
    assert walker.problems(wrong, ENTRY) == [
        "chimera/cli/check.py:5: 'github' is guarded as extra 'eval', which does not hold it "
        "(it is in: agent, github)",
        "chimera/cli/check.py:11: 'github' is guarded as extra 'eval', which does not hold it "
        "(it is in: agent, github)",
    ]


def test_fallbacks_type_checking_and_plain_imports_are_fine(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "chimera/cli/check.py": (
                "from typing import TYPE_CHECKING\n"
                "import yaml\nimport pytest\nimport json\n"
                "if TYPE_CHECKING:\n    import litellm\n"
                "def fast():\n"
                "    try:\n        import numpy\n    except ImportError:\n        return None\n"
                "    return numpy\n"
            )
        },
    )
    assert walker.problems(root, ENTRY) == []


def test_an_undeclared_package_and_a_computed_submodule_import_are_walked(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "chimera/cli/check.py": "import importlib\nimportlib.import_module('chimera.lazy')\n",
            "chimera/lazy/__init__.py": (
                "import importlib\n"
                "def __getattr__(name):\n"
                "    return importlib.import_module(f'{__name__}.{name}')\n"
            ),
            "chimera/lazy/deep.py": "def f():\n    import requests\n",
        },
    )
    assert walker.problems(root, ENTRY) == [
        "chimera/lazy/deep.py:2: 'requests' is in no dependency group of pyproject.toml"
    ]


def test_only_the_named_functions_of_a_partial_entry_are_walked(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "chimera/cli/action.py": (
                "def _check():\n    import yaml\ndef _agent():\n    import litellm\n"
            )
        },
    )
    assert walker.problems(root, {"chimera.cli.action": ("_check",)}) == []
    assert walker.problems(root, {"chimera.cli.action": ("_check", "_agent")}) == [
        "chimera/cli/action.py:4: 'litellm' (extra agent) is imported without the "
        "MissingExtraError guard on the plain install's path"
    ]
