"""The plugin stores its outcomes in the whole-report cache; a re-run with nothing changed
is answered from it, with the same outcomes."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest


def _git(root: object, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=str(root),
        check=True,
        capture_output=True,
    )


@pytest.mark.slow
def test_a_rerun_is_answered_from_the_report_cache(
    project: pytest.Pytester, parse_outcomes: Callable[[list[str]], dict[str, str]]
) -> None:
    _git(project.path, "init", "-q")
    _git(project.path, "add", "-A")
    _git(project.path, "commit", "-qm", "init")
    args = ("--chimera-spec", "specs", "-rA", "-p", "no:cacheprovider", "-p", "no:randomly")
    first = project.runpytest_subprocess(*args)
    reports = sorted((project.path / ".chimera" / "cache").glob("report-*.json"))
    assert len(reports) == 1
    # Without the per-file cache, a run that searched would write it again.
    (project.path / ".chimera" / "cache" / "results.json").unlink()
    before = reports[0].stat().st_mtime_ns
    second = project.runpytest_subprocess(*args)
    assert parse_outcomes(second.outlines) == parse_outcomes(first.outlines)
    assert reports[0].stat().st_mtime_ns == before  # nothing new to store: all were hits
    assert not (project.path / ".chimera" / "cache" / "results.json").exists()
