"""What a red requirement, an invalid spec file and JUnit XML look like."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

Outcomes = Callable[[list[str]], dict[str, str]]

BROKEN = """\
requirements:
  - id: broken-one
    contians: {path: README.md, pattern: app}
  - id: broken-two
    absent: {pattern: 'x', paths: ['src\\\\*.py']}
"""


def test_run_reports_green_and_red(project: pytest.Pytester, parse_outcomes: Outcomes) -> None:
    result = project.runpytest("--chimera-spec", "specs", "-rA")
    assert parse_outcomes(result.outlines) == {
        "tests/test_app.py::test_one": "PASSED",
        "tests/test_app.py::test_two": "PASSED",
        "specs/app.yaml::widget-class": "PASSED",
        "specs/app.yaml::widget-render": "PASSED",
        "specs/app.yaml::no-todo": "FAILED",
        "specs/app.yaml::readme-install": "FAILED",
    }
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_all_green_exits_zero(project: pytest.Pytester) -> None:
    result = project.runpytest("--chimera-spec", "specs", "-k", "widget")
    result.assert_outcomes(passed=2, deselected=4)
    assert result.ret == 0


def test_failure_shows_title_check_and_capped_evidence(project: pytest.Pytester) -> None:
    result = project.runpytest("--chimera-spec", "specs", "-k", "no-todo")
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*absent: no-todo*",
            "No TODO is left in the sources",
            "  requirement: no-todo (failed, risk high) at specs/app.yaml:10:5",
            "  check:       absent /TODO/ from src/**/*.py",
            "",
            "*7 matches in 1 file*",
            "  src/app.py:5:11:*TODO: real rendering*",
            "  src/app.py:9:3:*TODO one*",
            "*",
            "*",
            "*",
            "  ... and 2 more locations",
        ]
    )
    assert "Traceback" not in out
    assert "plugin.py" not in out
    assert "RequirementFailed" not in out


def test_max_evidence_option(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "--chimera-spec", "specs", "-k", "no-todo", "--chimera-max-evidence", "2"
    )
    result.stdout.fnmatch_lines(["  src/app.py:9:3:*TODO one*", "  ... and 5 more locations"])


def test_short_summary_names_the_title(project: pytest.Pytester) -> None:
    result = project.runpytest("--chimera-spec", "specs", "-k", "readme")
    result.stdout.fnmatch_lines(
        ["FAILED specs/app.yaml::readme-install - The README says how to install the app"]
    )


def test_reportinfo_points_at_the_requirement_line(project: pytest.Pytester) -> None:
    items, _ = project.inline_genitems("--chimera-spec", "specs")
    located = {item.nodeid: item.location for item in items if "::" in item.nodeid}
    assert located["specs/app.yaml::widget-class"] == ("specs/app.yaml", 1, "defines: widget-class")
    assert located["specs/app.yaml::no-todo"] == ("specs/app.yaml", 9, "absent: no-todo")


def test_junitxml_locates_requirements(project: pytest.Pytester) -> None:
    project.runpytest(
        "--chimera-spec", "specs", "--junitxml=report.xml", "-o", "junit_family=xunit1"
    )
    tree = ET.parse(project.path / "report.xml")
    cases = {case.get("name"): case for case in tree.iter("testcase")}
    # Every spec item is listed, with its status.
    status = {n: "failed" if c.find("failure") is not None else "passed" for n, c in cases.items()}
    assert status == {
        "test_one": "passed",
        "test_two": "passed",
        "widget-class": "passed",
        "widget-render": "passed",
        "no-todo": "failed",
        "readme-install": "failed",
    }
    case = cases["no-todo"]
    assert case.get("file") == "specs/app.yaml"
    assert case.get("line") == "9"  # 0-based, as pytest writes it
    failure = case.find("failure")
    assert failure is not None
    assert "No TODO is left in the sources" in (failure.text or "")
    assert cases["widget-class"].find("failure") is None
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props == {"chimera_kind": "absent", "chimera_risk": "high"}


def test_invalid_spec_file_is_a_collection_error_and_others_still_run(
    project: pytest.Pytester, parse_outcomes: Outcomes
) -> None:
    (project.path / "specs" / "broken.yaml").write_text(BROKEN, encoding="utf-8")
    result = project.runpytest("--chimera-spec", "specs", "-rA")
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting specs/broken.yaml*",
            "invalid spec file (2 problems):",
            "specs/broken.yaml:3:5: *contians*contains*",
            "specs/broken.yaml:5:*backslash*",
        ]
    )
    assert "Traceback" not in out
    got = parse_outcomes(result.outlines)
    assert got["specs/app.yaml::widget-class"] == "PASSED"
    assert got["tests/test_app.py::test_one"] == "PASSED"
    assert got["specs/app.yaml::no-todo"] == "FAILED"
    result.assert_outcomes(passed=4, failed=2, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_invalid_spec_alone_is_still_red(project: pytest.Pytester) -> None:
    (project.path / "specs" / "broken.yaml").write_text(BROKEN, encoding="utf-8")
    result = project.runpytest("--chimera-spec", "specs", "-k", "widget")
    result.assert_outcomes(passed=2, errors=1, deselected=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_broken_test_module_still_interrupts(project: pytest.Pytester) -> None:
    (project.path / "tests" / "test_broken.py").write_text(
        "import nope_not_here\n", encoding="utf-8"
    )
    result = project.runpytest("--chimera-spec", "specs")
    result.stdout.fnmatch_lines(["*Interrupted: 1 error during collection*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_duplicate_ids_across_files_name_the_file(project: pytest.Pytester) -> None:
    (project.path / "specs" / "zz.yaml").write_text(
        "requirements:\n  - id: widget-class\n    contains: {path: README.md, pattern: app}\n",
        encoding="utf-8",
    )
    result = project.runpytest("--chimera-spec", "specs", "-k", "widget")
    result.stdout.fnmatch_lines(
        ["*ERROR collecting specs/zz.yaml*", "specs/zz.yaml:2:*widget-class*"]
    )
    result.assert_outcomes(passed=2, errors=1, deselected=4)


def test_error_status_fails_the_item_and_says_error(project: pytest.Pytester) -> None:
    (project.path / "specs" / "zero.yaml").write_text(
        "requirements:\n"
        "  - id: nothing-selected\n"
        "    absent: {pattern: x, paths: ['nowhere/**']}\n",
        encoding="utf-8",
    )
    result = project.runpytest("--chimera-spec", "specs", "-k", "nothing-selected")
    result.assert_outcomes(failed=1, deselected=6)
    result.stdout.fnmatch_lines(
        [
            "*selects zero files*",
            "  requirement: nothing-selected (error, risk low) at specs/zero.yaml:2:5",
        ]
    )
