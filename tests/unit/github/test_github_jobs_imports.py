"""Each Action mode loads its own job only: job modules never import each other, the jobs
package imports none of them, and the LLM-free decide gate stays small.

The import checker is first shown to catch each form it forbids.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.cli.action import JOB_MODES

JOBS_DIR = Path(__file__).resolve().parents[3] / "chimera" / "github" / "jobs"
# The jobs' shared base (the context every job receives) and the checkout's git steps are
# helpers, not jobs.
HELPERS = {"__init__", "context", "checkout"}
DECIDE_MODULE_BOUND = 60


def job_names() -> set[str]:
    names = {p.stem for p in JOBS_DIR.glob("*.py")} - HELPERS
    assert {"decide", "agent", "verify", "publish", "command"} <= names
    return names


def job_imports(source: str, jobs: set[str]) -> list[str]:
    """Every import of a job module (``chimera.github.jobs.<job>``, or ``<job>`` taken from
    ``chimera.github.jobs``) — top-level, function-local or under ``TYPE_CHECKING``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module if node.level == 0 else f"chimera.github.jobs.{node.module}"
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [f"chimera.github.jobs.{a.name}" for a in node.names]
        else:
            continue
        if any(n.startswith("chimera.github.jobs.") and n.split(".")[3] in jobs for n in names):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize(
    "source",
    [
        "from chimera.github.jobs.drain import cancel",
        "from chimera.github.jobs import tick",
        "import chimera.github.jobs.refresh",
        "def f():\n    from chimera.github.jobs.command import explain_command",
        "from .verify import HeldOutInput",
        "from . import agent",
    ],
)
def test_the_job_import_checker_catches_each_form(source: str) -> None:
    assert job_imports(source, job_names())


def test_the_job_import_checker_lets_the_shared_helpers_through() -> None:
    source = (
        "from chimera.github.action.context import ActionContext\n"
        "from chimera.github.jobs.checkout import git\n"
        "from chimera.github.action.cancellation import cancel\n"
    )
    assert job_imports(source, job_names()) == []


def test_no_job_module_imports_another_and_the_package_imports_none() -> None:
    jobs = job_names()
    found = {
        path.name: hits
        for path in sorted(JOBS_DIR.glob("*.py"))
        if (hits := job_imports(path.read_text(encoding="utf-8"), jobs))
    }
    assert found == {}, "what two jobs share belongs in chimera.github, not in a job"


def test_every_job_is_imported_by_a_mode_runner_and_by_nothing_else_in_the_cli() -> None:
    jobs = job_names()
    runners = {name: inspect.getsource(mode.run) for name, mode in JOB_MODES.items()}
    assert len(set(runners.values())) == len(runners), "one runner per mode"
    imported = {
        hit.split("chimera.github.jobs.")[1].split()[0]
        for source in runners.values()
        for hit in job_imports(source, jobs)
    }
    assert imported == jobs


def _chimera_modules_after(module: str) -> list[str]:
    code = (
        f"import sys, {module}\n"
        "print('\\n'.join(sorted(m for m in sys.modules "
        "if m == 'chimera' or m.startswith('chimera.'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return out.split()


def test_importing_the_decide_job_loads_at_most_60_chimera_modules() -> None:
    loaded = _chimera_modules_after("chimera.github.jobs.decide")
    assert "chimera.github.jobs.decide" in loaded
    others = sorted(
        m
        for m in loaded
        if m.startswith("chimera.github.jobs.") and m.split(".")[3] in job_names() - {"decide"}
    )
    assert others == [], "the decide gate loads another job"
    assert len(loaded) <= DECIDE_MODULE_BOUND, len(loaded)


def test_the_action_cli_imports_no_job_until_a_mode_runs() -> None:
    loaded = _chimera_modules_after("chimera.cli.action")
    assert not [m for m in loaded if m.startswith("chimera.github.jobs")]
