"""The suspicion line: held-out failures, edited checks and the review, side by side."""

from __future__ import annotations

from pathlib import Path

from chimera.core.heldout import Suspicion, checked_paths, edited_checks
from chimera.spec.loader import load_spec

SPEC = """\
requirements:
  - id: unit
    command: {run: 'python -m pytest tests/test_calc.py::test_add -q --rootdir=. -c pytest.ini'}
  - id: script
    command: {run: 'python checks/run.py --flag=checks/data.txt /usr/bin/true ../out'}
  - id: doc
    contains: {path: README.md, pattern: calc}
"""

DIFF = """\
diff --git a/pyproject.toml b/pyproject.toml
--- a/pyproject.toml
+++ b/pyproject.toml
@@ -1,2 +1,2 @@
-addopts = "-q"
+addopts = "-q -p no:pytest_randomly"
diff --git a/setup.cfg b/setup.cfg
--- a/setup.cfg
+++ b/setup.cfg
@@ -1 +1 @@
-name = a
+name = b
"""


def _project(tmp_path: Path) -> Path:
    for rel in ("tests/test_calc.py", "checks/run.py", "checks/data.txt", "pytest.ini"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "s.yaml").write_text(SPEC)
    return tmp_path


def test_checked_paths_are_argv_files_that_exist_and_the_spec_files(tmp_path: Path) -> None:
    root = _project(tmp_path)
    spec = load_spec([root / "specs"])
    assert checked_paths(spec, root) == {
        "specs/s.yaml",
        "tests/test_calc.py",
        "pytest.ini",
        "checks/run.py",
        "checks/data.txt",
    }


def test_edits_to_tests_conftest_and_pytest_configuration_count(tmp_path: Path) -> None:
    root = _project(tmp_path)
    checked = checked_paths(load_spec([root / "specs"]), root)
    changed = [
        "calc.py",
        "tests/test_calc.py",
        "tests/conftest.py",
        "pyproject.toml",
        "setup.cfg",
        "specs/s.yaml",
        "README.md",
    ]
    assert edited_checks(changed, DIFF, checked) == (
        "pyproject.toml",
        "specs/s.yaml",
        "tests/conftest.py",
        "tests/test_calc.py",
    )
    assert edited_checks(["calc.py"], "", checked) == ()


def test_levels_and_the_line() -> None:
    assert Suspicion().level == "none"
    assert Suspicion(edited=("t.py",)).level == "low"
    assert Suspicion(heldout="failed").level == "medium"
    assert Suspicion(edited=("t.py",), review="rejected").level == "medium"
    high = Suspicion(heldout="failed", edited=("tests/t.py",), review="approved")
    assert high.level == "high"
    assert high.line() == (
        "suspicion: high (held-out: failed; edited checks: tests/t.py; review: approved)"
    )
    many = Suspicion(edited=tuple(f"f{i}" for i in range(7)))
    assert "f4 …;" in many.line() and "f5" not in many.line()


def test_blocked_calls_raise_the_level_and_show_in_the_line() -> None:
    assert Suspicion(blocked=1).level == "low"
    assert Suspicion(blocked=3).level == "medium"  # a retry after a refusal weighs 2
    assert Suspicion(blocked=3, heldout="failed").level == "high"
    assert Suspicion(blocked=3).line() == (
        "suspicion: medium (held-out: not configured; edited checks: none; "
        "blocked actions: 3; review: none)"
    )
    assert "blocked" not in Suspicion().line()
