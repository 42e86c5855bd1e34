"""pytest-xdist: the same node ids and the same results with ``-n 2``; JUnit XML too."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

Outcomes = Callable[[list[str]], dict[str, str]]

pytest.importorskip("xdist")

BROKEN = "requirements:\n  - id: broken\n    contians: {path: README.md, pattern: app}\n"


@pytest.mark.slow
def test_xdist_gives_the_same_node_ids_and_results(
    project: pytest.Pytester, parse_outcomes: Outcomes
) -> None:
    serial = project.runpytest_subprocess(
        "--chimera-spec", "specs", "-rA", "-p", "no:cacheprovider"
    )
    parallel = project.runpytest_subprocess(
        "--chimera-spec",
        "specs",
        "-rA",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
        "--junitxml=out.xml",
        "-o",
        "junit_family=xunit1",
    )
    expected = parse_outcomes(serial.outlines)
    assert len(expected) == 6
    assert parse_outcomes(parallel.outlines) == expected
    assert serial.ret == parallel.ret == pytest.ExitCode.TESTS_FAILED
    parallel.stdout.fnmatch_lines(
        ["*No TODO is left in the sources*", "*... and 2 more locations*"]
    )
    # The JUnit XML written by the xdist controller locates the requirement in its YAML.
    tree = ET.parse(project.path / "out.xml")
    listed = {
        f"{c.get('file')}::{c.get('name')}": "FAILED" if c.find("failure") is not None else "PASSED"
        for c in tree.iter("testcase")
        if c.get("file", "").startswith("specs/")
    }
    assert listed == {k: v for k, v in expected.items() if k.startswith("specs/")}
    case = next(c for c in tree.iter("testcase") if c.get("name") == "no-todo")
    assert (case.get("file"), case.get("line")) == ("specs/app.yaml", "9")
    assert case.find("failure") is not None


@pytest.mark.slow
def test_xdist_invalid_file_does_not_stop_the_others(
    project: pytest.Pytester, parse_outcomes: Outcomes
) -> None:
    (project.path / "specs" / "broken.yaml").write_text(BROKEN, encoding="utf-8")
    result = project.runpytest_subprocess(
        "--chimera-spec", "specs", "-rA", "-n", "2", "-p", "no:cacheprovider"
    )
    result.stdout.fnmatch_lines(["*ERROR collecting specs/broken.yaml*", "specs/broken.yaml:3:5:*"])
    assert "Traceback" not in result.stdout.str()
    assert parse_outcomes(result.outlines)["specs/app.yaml::widget-class"] == "PASSED"
    assert result.ret == pytest.ExitCode.TESTS_FAILED


# Each worker writes down which requirements it planned work for (and which it ran).
RECORDING_CONFTEST = """
import os

from pytest_chimera.plugin import get_state

RAN = []


def pytest_runtest_logreport(report):
    if report.when == "call":
        RAN.append(report.nodeid.split("::")[-1])


def pytest_sessionfinish(session):
    state = get_state(session.config)
    # Not the environment: an outer xdist run leaks PYTEST_XDIST_WORKER into this session.
    workerinput = getattr(session.config, "workerinput", None)
    worker = workerinput["workerid"] if workerinput else "serial"
    with open(f"planned-{worker}.txt", "w") as out:
        out.write(" ".join(sorted(state.planned)) + "\\n" + " ".join(sorted(RAN)) + "\\n")
"""


def _many_requirements(n: int) -> str:
    lines = ["requirements:"]
    for i in range(n):
        lines.append(f"  - id: r{i:03d}")
        pattern = "not in the readme" if i % 2 else "tiny"  # odd ones are red
        lines.append(f"    contains: {{path: README.md, pattern: '{pattern}'}}")
    # A red dependency and its dependent: the note must not depend on the distribution.
    lines.append("  - id: base")
    lines.append("    contains: {path: README.md, pattern: 'not in the readme'}")
    lines.append("  - id: dependent")
    lines.append("    depends_on: [base]")
    lines.append("    contains: {path: README.md, pattern: 'neither is this'}")
    return "\n".join(lines) + "\n"


def _planned(project: pytest.Pytester) -> dict[str, tuple[set[str], set[str]]]:
    out = {}
    for path in project.path.glob("planned-*.txt"):
        planned, ran = path.read_text(encoding="utf-8").split("\n")[:2]
        out[path.stem.removeprefix("planned-")] = (set(planned.split()), set(ran.split()))
    return out


@pytest.mark.slow
def test_xdist_each_worker_checks_only_its_own_items(
    project: pytest.Pytester, parse_outcomes: Outcomes
) -> None:
    (project.path / "specs" / "app.yaml").unlink()
    (project.path / "specs" / "many.yaml").write_text(_many_requirements(60), encoding="utf-8")
    project.makeconftest(RECORDING_CONFTEST)
    args = ("--chimera-spec", "specs", "-rA", "-p", "no:cacheprovider", "-p", "no:randomly")
    serial = project.runpytest_subprocess(*args)
    expected = parse_outcomes(serial.outlines)
    assert len(expected) == 62 + 2
    ((serial_planned, _),) = _planned(project).values()
    assert len(serial_planned) == 62  # a serial run plans the whole selection at once
    for path in project.path.glob("planned-*.txt"):
        path.unlink()

    parallel = project.runpytest_subprocess(*args, "-n", "2")
    assert parse_outcomes(parallel.outlines) == expected
    parallel.stdout.fnmatch_lines(["*neither is this* (depends on base, which failed)"])
    workers = _planned(project)
    assert workers.pop("serial")[0] == set()  # the controller checks nothing
    assert sorted(workers) == ["gw0", "gw1"]
    (planned0, ran0), (planned1, ran1) = workers.values()
    assert ran0 and ran1 and not ran0 & ran1
    # A worker plans what it runs (and a dependency it needs), never the other's items.
    for planned, ran, other in ((planned0, ran0, ran1), (planned1, ran1, ran0)):
        ran_spec = {r for r in ran if r.startswith("r") or r in ("base", "dependent")}
        assert ran_spec <= planned
        assert not (planned - {"base"}) & other


@pytest.mark.slow
def test_deselected_requirements_are_not_planned_under_xdist(project: pytest.Pytester) -> None:
    (project.path / "specs" / "many.yaml").write_text(_many_requirements(10), encoding="utf-8")
    project.makeconftest(RECORDING_CONFTEST)
    result = project.runpytest_subprocess(
        "--chimera-spec", "specs", "-n", "2", "-p", "no:cacheprovider", "-k", "r001 or r002"
    )
    result.assert_outcomes(passed=1, failed=1)
    planned = set().union(*(p for p, _ in _planned(project).values()))
    assert planned == {"r001", "r002"}


def _commands(n: int) -> str:
    # Each evaluation appends "<id> <worker>" itself: evidence from outside the plugin.
    lines = ["requirements:"]
    for i in range(n):
        lines.append(f"  - id: c{i:03d}")
        lines.append(f"    command: {{run: 'echo c{i:03d} $PYTEST_XDIST_WORKER >> evaluated.txt'}}")
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_xdist_each_requirement_is_evaluated_once_by_the_worker_that_runs_it(
    project: pytest.Pytester,
) -> None:
    (project.path / "specs" / "app.yaml").unlink()
    (project.path / "specs" / "cmds.yaml").write_text(_commands(40), encoding="utf-8")
    project.makeconftest(
        RECORDING_CONFTEST
        + "\n    with open(f'evaluated-{worker}.txt', 'w') as out:\n"
        + "        out.write(str(state.evaluated))\n"
    )
    result = project.runpytest_subprocess(
        "--chimera-spec", "specs", "-n", "2", "-p", "no:cacheprovider", "-p", "no:randomly"
    )
    result.assert_outcomes(passed=40 + 2)
    lines = (project.path / "evaluated.txt").read_text(encoding="utf-8").split("\n")
    evaluated = [tuple(line.split()) for line in lines if line]
    assert sorted(rid for rid, _ in evaluated) == [f"c{i:03d}" for i in range(40)]  # once each
    workers = _planned(project)
    assert workers.pop("serial")[0] == set()  # the controller checks nothing
    assert (project.path / "evaluated-serial.txt").read_text(encoding="utf-8") == "0"
    assert sorted(workers) == ["gw0", "gw1"]
    for worker, (_, ran) in workers.items():
        mine = {rid for rid, where in evaluated if where == worker}
        assert mine == {r for r in ran if r.startswith("c")}
        count = (project.path / f"evaluated-{worker}.txt").read_text(encoding="utf-8")
        assert int(count) == len(mine)
    assert all(ran for _, ran in workers.values())  # both workers took part
