"""Collection: one item per requirement beside the tests, node ids, markers, selection."""

from __future__ import annotations

from collections.abc import Callable

import pytest

Outcomes = Callable[[list[str]], dict[str, str]]

APP_NODES = [
    "specs/app.yaml::widget-class",
    "specs/app.yaml::widget-render",
    "specs/app.yaml::no-todo",
    "specs/app.yaml::readme-install",
]
TEST_NODES = ["tests/test_app.py::test_one", "tests/test_app.py::test_two"]


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line and not line.startswith(" ")]


def test_without_the_option_the_plugin_collects_nothing(project: pytest.Pytester) -> None:
    result = project.runpytest("--co", "-q")
    assert collected(result) == TEST_NODES
    assert result.ret == 0


def test_markers_are_registered(project: pytest.Pytester) -> None:
    result = project.runpytest("--markers")
    for marker in ("chimera", "risk_low", "risk_medium", "risk_high"):
        result.stdout.fnmatch_lines([f"@pytest.mark.{marker}:*"])


def test_spec_items_are_collected_beside_testpaths(project: pytest.Pytester) -> None:
    result = project.runpytest("--chimera-spec", "specs/", "--co", "-q")
    assert collected(result) == TEST_NODES + APP_NODES
    assert result.ret == 0


def test_spec_items_join_explicit_test_arguments(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "tests/test_app.py::test_two", "--chimera-spec", "specs", "--co", "-q"
    )
    assert collected(result) == ["tests/test_app.py::test_two", *APP_NODES]


def test_a_single_spec_file_and_repeated_options(project: pytest.Pytester) -> None:
    (project.path / "more").mkdir()
    (project.path / "more" / "extra.yml").write_text(
        "requirements:\n  - id: extra\n    contains: {path: README.md, pattern: app}\n",
        encoding="utf-8",
    )
    result = project.runpytest(
        "--chimera-spec", "specs/app.yaml", "--chimera-spec", "more/extra.yml", "--co", "-q"
    )
    assert collected(result) == [*TEST_NODES, *APP_NODES, "more/extra.yml::extra"]


def test_node_id_selects_one_requirement(
    project: pytest.Pytester, parse_outcomes: Outcomes
) -> None:
    result = project.runpytest("specs/app.yaml::widget-render", "--chimera-spec", "specs", "-rA")
    assert parse_outcomes(result.outlines) == {"specs/app.yaml::widget-render": "PASSED"}
    assert result.ret == 0


def test_directory_argument_collects_the_spec_once(project: pytest.Pytester) -> None:
    result = project.runpytest(".", "--chimera-spec", "specs", "--co", "-q")
    assert collected(result) == APP_NODES + TEST_NODES


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("chimera", APP_NODES),
        ("not chimera", TEST_NODES),
        ("risk_high", ["specs/app.yaml::no-todo"]),
        ("risk_medium", ["specs/app.yaml::widget-render"]),
        ("risk_low", ["specs/app.yaml::widget-class", "specs/app.yaml::readme-install"]),
    ],
)
def test_marker_selection(project: pytest.Pytester, expression: str, expected: list[str]) -> None:
    result = project.runpytest("--chimera-spec", "specs", "-m", expression, "--co", "-q")
    assert collected(result) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("widget", ["specs/app.yaml::widget-class", "specs/app.yaml::widget-render"]),
        ("absent", ["specs/app.yaml::no-todo"]),
        ("app.yaml and not widget", ["specs/app.yaml::no-todo", "specs/app.yaml::readme-install"]),
    ],
)
def test_keyword_selection(project: pytest.Pytester, expression: str, expected: list[str]) -> None:
    result = project.runpytest("--chimera-spec", "specs", "-k", expression, "--co", "-q")
    assert collected(result) == expected


def test_missing_path_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--chimera-spec", "nowhere/")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --chimera-spec: nowhere/: no such file or directory"])
    assert "Traceback" not in result.stderr.str()


def test_directory_without_spec_files_is_a_usage_error(project: pytest.Pytester) -> None:
    (project.path / "empty").mkdir()
    result = project.runpytest("--chimera-spec", "empty")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --chimera-spec: no spec files (*.yaml, *.yml) in empty"])


def test_bad_root_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--chimera-spec", "specs", "--chimera-root", "nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --chimera-root: nope: not a directory"])


def test_options_share_one_help_group(project: pytest.Pytester) -> None:
    result = project.runpytest("--help")
    text = result.stdout.str()
    group = text[text.index("Chimera spec") :]
    group = group[: group.index("\n\n")]
    for option in ("--chimera-spec", "--chimera-root", "--chimera-max-evidence"):
        assert option in group


def test_root_option_moves_the_checked_tree(project: pytest.Pytester) -> None:
    sub = project.path / "sub"
    sub.mkdir()
    (sub / "README.md").write_text("pip install app\n", encoding="utf-8")
    result = project.runpytest("--chimera-spec", "specs", "--chimera-root", "sub", "-k", "readme")
    result.assert_outcomes(passed=1, deselected=5)
    result = project.runpytest("--chimera-spec", "specs", "-k", "readme")
    result.assert_outcomes(failed=1, deselected=5)
