"""Crew files: every problem in one pass at file:line:col with suggestions; kinds from pluggy."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from chimera.crews.hookspecs import hookimpl
from chimera.crews.kinds import Parallel
from chimera.crews.loader import check_crew_file, load_crew, resolve_crew
from chimera.crews.model import CrewDefinition, CrewKind
from chimera.crews.registry import CrewKindRegistry
from chimera.errors import CrewError, PluginError, UsageError

GOOD = """\
crew: review
roles:
  - name: tests
    goal: Decide whether the change is tested.
    tools: [read_file, search]
    budget: {tokens: 4000}
  - name: lead
    goal: Decide.
supervisor: {role: lead, rounds: 3}
consolidate: {tokens: 800}
"""

BAD = """\
crew: review
roles:
  - name: tests
    goal: Check tests
    tools: [read_file, write_file, serch]
    modle: x
  - name: tests
    goal: ""
supervisor:
  role: lead
  workers: [tests]
paralel: {}
"""


def _write(tmp_path: Path, text: str, name: str = "crew.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_crew_file_loads_typed(tmp_path: Path) -> None:
    d = load_crew(_write(tmp_path, GOOD))
    assert isinstance(d, CrewDefinition)
    assert [r.name for r in d.roles] == ["tests", "lead"]
    assert d.role("tests").tools == ["read_file", "search"]
    assert d.role("tests").budget.tokens == 4000
    assert d.process.kind_name == "supervisor"
    assert d.consolidate.tokens == 800


def test_every_problem_of_a_file_in_one_pass_at_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, BAD)
    checked = check_crew_file(path)
    assert checked.definition is None
    shown = [
        str(p).split(": ", 1)[0].rsplit("/", 1)[-1] + ": " + p.message for p in checked.problems
    ]
    assert shown == [
        "crew.yaml:5:24: tool 'write_file' changes the workspace; crew roles read and answer "
        "(read_file, list_dir, search): changes go through 'chimera solve'",
        "crew.yaml:5:36: unknown tool 'serch' in 'roles[0].tools'; did you mean 'search'?",
        "crew.yaml:6:5: unknown field 'modle' in 'roles[0]'; did you mean 'model'?",
        "crew.yaml:7:11: duplicate role 'tests' (first defined at line 3)",
        "crew.yaml:8:11: roles[1].goal: String should have at least 1 character, got ''",
        "crew.yaml:12:1: unknown field 'paralel' at the top level; did you mean 'parallel'?",
    ]
    with pytest.raises(CrewError) as info:
        load_crew(path)
    assert len(info.value.problems) == 6
    assert "(and 5 more)" in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "1:1: empty crew file"),
        ("- a\n", "1:1: a crew file must be a mapping, got a list"),
        ("roles: [{name: a, goal: g}]\n", "the crew has no kind: add exactly one of"),
        (
            "roles: [{name: a, goal: g}]\nparallel: {}\nsequential: {}\n",
            "3:1: the crew has 2 kinds (parallel, sequential): keep exactly one",
        ),
        ("parallel: {}\n", "missing 'roles:'"),
        (
            "roles: [{name: a, goal: g, model: m, rung: 1}]\nparallel: {}\n",
            "a role names a 'model' or a 'rung', not both",
        ),
        (
            "roles: [{name: a, goal: g}, {name: b, goal: g}]\nsupervisor: {role: lead}\n",
            "'role' names unknown role 'lead'",
        ),
        (
            "roles: [{name: a, goal: g, tools: [search]}, {name: b, goal: g}]\n"
            "supervisor: {role: a}\n",
            "a supervisor delegates and synthesises, so it takes none",
        ),
        (
            "roles: [{name: a, goal: g}]\nsupervisor: {role: a}\n",
            "needs at least one worker besides the supervisor",
        ),
        (
            "roles: [{name: tests, goal: g}]\nsequential: {order: [test]}\n",
            "'order' names unknown role 'test'; did you mean 'tests'?",
        ),
        ("roles: [{name: a, goal: g}]\nparallel: {}\nparallel: {}\n", "duplicate key 'parallel'"),
        ("roles: [{name: '1bad', goal: g}]\nparallel: {}\n", "invalid name '1bad'"),
    ],
)
def test_crew_file_problems(tmp_path: Path, text: str, expected: str) -> None:
    problems = [str(p) for p in check_crew_file(_write(tmp_path, text)).problems]
    assert any(expected in p for p in problems), problems


def test_resolve_crew_by_name_or_path(tmp_path: Path) -> None:
    folder = tmp_path / ".chimera.d" / "crews"
    folder.mkdir(parents=True)
    (folder / "review.yaml").write_text(GOOD)
    assert resolve_crew(tmp_path, "review") == folder / "review.yaml"
    assert resolve_crew(tmp_path, ".chimera.d/crews/review.yaml") == folder / "review.yaml"
    with pytest.raises(UsageError, match="crews here: review"):
        resolve_crew(tmp_path, "reveiw")


class Debate(CrewKind):
    kind_name: ClassVar[str] = "debate"
    turns: int = 2


class DebatePlugin:
    @hookimpl
    def chimera_crew_kinds(self) -> list[type[CrewKind]]:
        return [Debate]


def test_a_plugin_kind_is_selected_by_its_key_and_validated(tmp_path: Path) -> None:
    registry = CrewKindRegistry.create(plugins=[DebatePlugin()], entry_points=False)
    assert registry.names == ("sequential", "parallel", "supervisor", "debate")
    good = _write(tmp_path, "roles: [{name: a, goal: g}]\ndebate: {turns: 3}\n")
    assert load_crew(good, registry=registry).process == Debate(turns=3)
    bad = _write(tmp_path, "roles: [{name: a, goal: g}]\ndebate: {turn: 3}\n", "bad.yaml")
    (problem,) = check_crew_file(bad, registry=registry).problems
    assert (problem.line, problem.col) == (2, 10)
    assert "did you mean 'turns'?" in problem.message
    # Without the plugin the key is unknown.
    assert any("unknown field 'debate'" in p.message for p in check_crew_file(good).problems)


def test_two_kinds_with_one_name_are_refused() -> None:
    class Clash:
        @hookimpl
        def chimera_crew_kinds(self) -> list[type[CrewKind]]:
            class Other(Parallel):
                pass

            return [Other]

    with pytest.raises(PluginError, match="registered twice"):
        CrewKindRegistry.create(plugins=[Clash()], entry_points=False)


def test_a_kind_may_not_take_a_crew_field_name() -> None:
    class Roles(CrewKind):
        kind_name: ClassVar[str] = "roles"

    class Bad:
        @hookimpl
        def chimera_crew_kinds(self) -> list[type[CrewKind]]:
            return [Roles]

    with pytest.raises(PluginError, match="not a crew field"):
        CrewKindRegistry.create(plugins=[Bad()], entry_points=False)
