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
