"""The plugin stores its outcomes in the whole-report cache; a re-run with nothing changed
is answered from it, with the same outcomes."""

from __future__ import annotations

import json
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


@pytest.mark.slow
def test_spec_files_are_parsed_once_and_not_with_no_cache(
    project: pytest.Pytester, parse_outcomes: Callable[[list[str]], dict[str, str]]
) -> None:
    _git(project.path, "init", "-q")
    _git(project.path, "add", "-A")
    _git(project.path, "commit", "-qm", "init")
    args = ("--chimera-spec", "specs", "-rA", "-p", "no:cacheprovider", "-p", "no:randomly")
    cache = project.path / ".chimera" / "cache"
    off = project.runpytest_subprocess(*args, "--chimera-no-cache")
    assert not cache.exists()
    first = project.runpytest_subprocess(*args)
    assert parse_outcomes(first.outlines) == parse_outcomes(off.outlines)
    parses = sorted(cache.glob("spec-*.json"))
    assert parses, "the plugin stores the parse of each clean spec file"
    # Proof that a run reads the stored parse instead of parsing: keep one requirement per
    # stored file (in a real tree only Chimera writes here, and git must not track it).
    for entry in parses:
        raw = json.loads(entry.read_text(encoding="utf-8"))
        raw["value"]["requirements"] = raw["value"]["requirements"][:1]
        entry.write_text(json.dumps(raw), encoding="utf-8")

    def spec_items(outlines: list[str]) -> dict[str, str]:
        return {k: v for k, v in parse_outcomes(outlines).items() if k.startswith("specs/")}

    second = spec_items(project.runpytest_subprocess(*args).outlines)
    assert len(second) == len(parses) < len(spec_items(first.outlines))
    assert set(second.items()) <= set(spec_items(first.outlines).items())
