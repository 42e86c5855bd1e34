"""Profiles as data: one-pass validation at file:line:col, kinds through pluggy, isolation."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import ClassVar

import pytest

from chimera.cli import main
from chimera.errors import PluginError, ProfileError
from chimera.meta.designer import parse_candidates
from chimera.meta.hookspecs import hookimpl
from chimera.meta.loader import check_profile_text, load_profile
from chimera.meta.profile import AGENT_TOOLS, ProfileKind, isolate, render_profile
from chimera.meta.registry import ProfileKindRegistry

GOOD = """\
profile: careful
description: Reads first.
instructions: Never special-case an input.
tools: [read_file, write_file]
model: scripted:m.yaml
budget: {tokens: 9000}
skills: [slug-rules]
solver: {max_attempts: 2, max_steps: 7}
"""


def test_a_valid_profile_loads_and_renders_back_to_the_same_profile(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(GOOD, encoding="utf-8")
    profile = load_profile(path)
    assert profile.tools == ("read_file", "write_file")
    assert profile.overrides() == {
        "model": "scripted:m.yaml",
        "budget_tokens": 9000,
        "budget_usd": None,
        "max_attempts": 2,
        "max_steps": 7,
        "diff_feedback": None,
    }
    again = tmp_path / "again.yaml"
    again.write_text(render_profile(profile, "a header\nline two"), encoding="utf-8")
    assert again.read_text(encoding="utf-8").startswith("# a header\n# line two\n")
    assert load_profile(again).to_data() == profile.to_data()


def test_every_problem_is_reported_in_one_pass_at_line_and_column() -> None:
    text = """\
profile: 9bad
tools: [read_file, run_comand]
model: m
rung: 1
budgett: {tokens: 5}
solver: {max_attempts: 0}
"""
    checked = check_profile_text(text, "p.yaml")
    shown = [str(p) for p in checked.problems]
    assert checked.profile is None
    assert shown == [
        "p.yaml:1:10: profile: invalid name '9bad': a letter, then up to 39 letters, digits, "
        "'_' or '-'",
        "p.yaml:2:20: unknown tool 'run_comand' in 'tools'; did you mean 'run_command'?",
        "p.yaml:4:1: a profile names a 'model' or a 'rung', not both",
        "p.yaml:5:1: unknown field 'budgett' at the top level; did you mean 'budget'?",
        "p.yaml:6:24: solver.max_attempts: Input should be greater than or equal to 1, got 0",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("profile: a\n", "p.yaml:1:1: the profile has no kind: add exactly one of solver"),
        ("profile: a\nsolver: {}\nsolver2: {}\n", "p.yaml:3:1: unknown field 'solver2'"),
        ("[1, 2]\n", "p.yaml:1:1: a profile must be a mapping, got a list"),
        ("profile: a\nprofile: b\nsolver: {}\n", "p.yaml:2:1: duplicate key 'profile'"),
        ("", "p.yaml:1:1: empty profile"),
        ("solver: {}\n", "p.yaml:1:1: missing required field 'profile' in the profile"),
    ],
)
def test_structural_problems_name_the_place(text: str, expected: str) -> None:
    problems = [str(p) for p in check_profile_text(text, "p.yaml").problems]
    assert problems and problems[0].startswith(expected), problems


def test_a_misspelt_kind_is_one_problem_not_two() -> None:
    problems = check_profile_text("profile: a\nsolvr: {}\n", "p.yaml").problems
    assert [str(p) for p in problems] == [
        "p.yaml:2:1: unknown field 'solvr' at the top level; did you mean 'solver'?"
    ]


def test_an_invalid_file_raises_with_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("profile: a\ntools: [x, y]\nsolver: {}\n", encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert len(caught.value.problems) == 2


class Explorer(ProfileKind):
    kind_name: ClassVar[str] = "explorer"
    depth: int = 1


class ExplorerPlugin:
    @hookimpl
    def chimera_profile_kinds(self) -> list[type[ProfileKind]]:
        return [Explorer]


def test_a_plugin_kind_is_selected_by_its_key() -> None:
    registry = ProfileKindRegistry.create([ExplorerPlugin()], entry_points=False)
    checked = check_profile_text("profile: a\nexplorer: {depth: 3}\n", "p", registry=registry)
    assert checked.profile is not None and isinstance(checked.profile.kind, Explorer)
    assert checked.profile.kind.depth == 3


def test_plugins_cannot_take_a_field_name_or_a_name_twice() -> None:
    class Twice:
        @hookimpl
        def chimera_profile_kinds(self) -> list[type[ProfileKind]]:
            class Other(ProfileKind):
                kind_name: ClassVar[str] = "explorer"

            return [Other]

    class FieldName:
        @hookimpl
        def chimera_profile_kinds(self) -> list[type[ProfileKind]]:
            class Tools(ProfileKind):
                kind_name: ClassVar[str] = "tools"

            return [Tools]

    with pytest.raises(PluginError, match="registered twice"):
        ProfileKindRegistry.create([ExplorerPlugin(), Twice()], entry_points=False)
    with pytest.raises(PluginError, match="not a profile field"):
        ProfileKindRegistry.create([FieldName()], entry_points=False)


def test_isolation_never_grants_a_tool_outside_the_ceiling() -> None:
    base = check_profile_text("profile: a\nsolver: {}\n", "p").profile
    assert base is not None
    for n in range(len(AGENT_TOOLS) + 1):
        for asked in itertools.combinations(AGENT_TOOLS, n):
            for ceiling in (("read_file",), ("read_file", "write_file", "edit_file"), ()):
                fields = base.fields.model_copy(update={"tools": list(asked)})
                got, denied = isolate(type(base)(fields, base.kind), ceiling)
                assert set(got.tools) <= set(ceiling)
                assert set(got.tools) | set(denied) == set(asked)


def test_the_designer_answer_is_data_with_positions_in_the_answer() -> None:
    answer = (
        "Here.\n\n```yaml\nprofile: a\nsolver: {}\n```\n\n```yaml\nprofile: b\n"
        "tools: [shell]\nsolver: {}\n```\n```yaml\nprofile: a\nsolver: {}\n```\n"
        "```yaml\nprofile: c\nsolver: {}\n```\n```yaml\nprofile: d\nsolver: {}\n```\n"
    )
    design = parse_candidates(answer, max_candidates=2)
    assert [p.name for p in design.candidates] == ["a", "c"]
    assert design.rejected[0][0] == "designer answer, block 2"
    assert design.rejected[0][1][0].startswith("10:9: unknown tool 'shell'")
    assert design.rejected[1][1] == ["duplicate profile 'a'"]
    assert design.rejected[2][1] == ["past the family's max_candidates (2)"]


def test_chimera_meta_check_lists_problems_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(GOOD, encoding="utf-8")
    bad.write_text("profile: a\ntools: [sh]\nsolver: {}\n", encoding="utf-8")
    assert main(["meta", "check", str(good)]) == 0
    assert "ok (careful: solver (max_attempts=2, max_steps=7)" in capsys.readouterr().out
    assert main(["meta", "check", str(good), str(bad)]) == 1
    assert "bad.yaml:2:9: unknown tool 'sh'" in capsys.readouterr().err
