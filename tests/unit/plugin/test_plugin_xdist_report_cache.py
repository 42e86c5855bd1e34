"""Under xdist each worker saves the outcomes of its own items under the Spec's one key: the
saves merge, so a second ``-n 2`` run evaluates no cacheable requirement at all."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import pytest

pytest.importorskip("xdist")

# Each worker writes down how many items asked it for a result and what its engine did.
COUNTING_CONFTEST = """
import json

from pytest_chimera.plugin import get_state


def pytest_sessionfinish(session):
    state = get_state(session.config)
    workerinput = getattr(session.config, "workerinput", None)
    if not workerinput:
        return
    stats = state.stats
    counts = {
        "evaluated": state.evaluated,
        "passes": stats.passes if stats else 0,
        "reads": sum(stats.reads.values()) if stats else 0,
        "parses": sum(stats.parses.values()) if stats else 0,
    }
    with open(f"counts-{workerinput['workerid']}.json", "w") as out:
        json.dump(counts, out)
"""


def _spec(n: int) -> str:
    lines = ["requirements:"]
    for i in range(n):
        lines.append(f"  - id: r{i:03d}")
        pattern = "not in the readme" if i % 3 == 0 else "tiny"  # some are red
        lines.append(f"    contains: {{path: README.md, pattern: '{pattern}'}}")
        lines.append(f"  - id: d{i:03d}")
        lines.append("    defines: {path: src/app.py, symbol: Widget, kind: class}")
    # Never cached: it appends a line each time it is evaluated.
    lines.append("  - id: cmd")
    lines.append("    command: {run: 'echo ran >> evaluated.txt'}")
    return "\n".join(lines) + "\n"


def _git(root: object, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=str(root),
        check=True,
        capture_output=True,
    )


def _counts(project: pytest.Pytester) -> dict[str, dict[str, int]]:
    out = {}
    for path in sorted(project.path.glob("counts-*.json")):
        out[path.stem.removeprefix("counts-")] = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
    return out


@pytest.mark.slow
def test_a_second_xdist_run_evaluates_no_cacheable_requirement(
    project: pytest.Pytester, parse_outcomes: Callable[[list[str]], dict[str, str]]
) -> None:
    (project.path / "specs" / "app.yaml").unlink()
    (project.path / "specs" / "many.yaml").write_text(_spec(30), encoding="utf-8")
    project.makeconftest(COUNTING_CONFTEST)
    _git(project.path, "init", "-q")
    _git(project.path, "add", "-A")
    _git(project.path, "commit", "-qm", "init")
    args = ("--chimera-spec", "specs", "-rA", "-n", "2", "-p", "no:cacheprovider")

    first = project.runpytest_subprocess(*args)
    cold = _counts(project)
    assert sorted(cold) == ["gw0", "gw1"]
    assert all(c["evaluated"] and c["passes"] + c["parses"] for c in cold.values())
    entries = list((project.path / ".chimera" / "cache").glob("report-*.json"))
    assert len(entries) == 1
    assert len(json.loads(entries[0].read_text(encoding="utf-8"))["outcomes"]) == 60

    second = project.runpytest_subprocess(*args)
    assert parse_outcomes(second.outlines) == parse_outcomes(first.outlines)
    warm = _counts(project)
    assert sorted(warm) == ["gw0", "gw1"]
    assert sum(c["evaluated"] for c in warm.values()) == 61  # every item asked ...
    for counts in warm.values():  # ... and no worker read, parsed or searched anything
        assert (counts["passes"], counts["reads"], counts["parses"]) == (0, 0, 0)
    # The command requirement (never cached) ran in both runs: the items did run.
    assert (project.path / "evaluated.txt").read_text(encoding="utf-8").split() == ["ran"] * 2
