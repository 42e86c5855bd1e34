"""Spec loading and validation: every rejection, positions, suggestions, cross-file rules."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from chimera.errors import SpecError, SpecProblem, UsageError
from chimera.spec.kinds import Absent, Command, Contains, Defines, MatchMode, SymbolKind
from chimera.spec.loader import (
    discover_spec_files,
    display_path,
    load_spec,
    load_spec_files,
)
from chimera.spec.model import Risk, SourceLocation

DESIGN_EXAMPLE = r"""
requirements:
  - id: audit-log
    title: The audit log is an append-only JSONL writer
    risk: low
    defines: {path: chimera/governance/audit.py, symbol: AuditLog.append, kind: method}
  - id: no-eval
    absent: {pattern: '\beval\(', paths: ['chimera/**/*.py'], exclude: ['chimera/sandbox/**']}
  - id: quickstart-documented
    contains: {path: README.md, pattern: 'pytest --chimera-spec specs/', regex: false}
  - id: strict-types
    command: {run: 'mypy --strict chimera', timeout: 600}
"""


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def problems_of(root: Path, text: str, name: str = "spec.yaml") -> list[str]:
    path = write(root, name, text)
    loaded = load_spec_files([path])
    assert loaded.spec.files == ()
    return [str(p) for p in loaded.all_problems()]


def one_problem(root: Path, text: str) -> str:
    found = problems_of(root, text)
    assert len(found) == 1, found
    return found[0]


# --------------------------------------------------------------------------- valid input


def test_design_example_loads_with_locations_and_defaults(root: Path) -> None:
    write(root, "specs/main.yaml", DESIGN_EXAMPLE)
    spec = load_spec(["specs"])
    assert [r.id for r in spec] == ["audit-log", "no-eval", "quickstart-documented", "strict-types"]
    audit, no_eval, quick, types = spec.requirements

    assert isinstance(audit.check, Defines)
    assert audit.check.symbol == "AuditLog.append"
    assert audit.check.kind is SymbolKind.METHOD
    assert audit.title == "The audit log is an append-only JSONL writer"
    assert audit.location == SourceLocation("specs/main.yaml", 2, 5)
    assert audit.field_locations == {
        "id": SourceLocation("specs/main.yaml", 2, 5),
        "title": SourceLocation("specs/main.yaml", 3, 5),
        "risk": SourceLocation("specs/main.yaml", 4, 5),
        "defines": SourceLocation("specs/main.yaml", 5, 5),
    }

    assert isinstance(no_eval.check, Absent)
    assert no_eval.check.pattern == r"\beval\("
    assert no_eval.check.exclude == ["chimera/sandbox/**"]
    assert no_eval.risk is Risk.LOW and no_eval.title is None and no_eval.depends_on == ()

    assert isinstance(quick.check, Contains)
    assert quick.check.regex is False and quick.check.match is MatchMode.ANY

    assert isinstance(types.check, Command)
    assert types.check.timeout == 600
    assert types.location == SourceLocation("specs/main.yaml", 10, 5)
    assert spec.files[0].path == Path("specs/main.yaml")


def test_single_strings_for_depends_on_and_owner_become_tuples(root: Path) -> None:
    write(
        root,
        "s.yaml",
        """
        requirements:
          - id: base
            owner: [chimera/spec/**, tests/unit/spec/**]
            command: {run: 'true'}
          - id: top
            risk: high
            depends_on: base
            owner: chimera/core/**
            command: {run: 'true'}
        """,
    )
    base, top = load_spec("s.yaml").requirements
    assert base.owner == ("chimera/spec/**", "tests/unit/spec/**")
    assert top.depends_on == ("base",)
    assert top.owner == ("chimera/core/**",)
    assert top.risk is Risk.HIGH


def test_empty_requirements_list_is_a_valid_file(root: Path) -> None:
    write(root, "s.yaml", "requirements: []\n")
    loaded = load_spec_files(["s.yaml"])
    assert loaded.ok and len(loaded.spec) == 0 and len(loaded.spec.files) == 1


def test_bom_crlf_anchors_and_merge_keys_are_plain_yaml(root: Path) -> None:
    # Anchors live inside the list: a top-level helper key would be an unknown field.
    text = (
        "\ufeffrequirements:\r\n"
        "  - id: no-print\r\n"
        "    absent: &scope\r\n"
        "      paths: ['chimera/**/*.py']\r\n"
        "      pattern: 'print\\('\r\n"
        "  - id: no-breakpoint\r\n"
        "    absent:\r\n"
        "      <<: *scope\r\n"
        "      pattern: 'breakpoint\\('\r\n"
    )
    (root / "s.yaml").write_bytes(text.encode("utf-8"))
    first, second = load_spec("s.yaml").requirements
    assert isinstance(second.check, Absent)
    assert second.check.paths == ["chimera/**/*.py"]
    assert second.check.pattern == "breakpoint\\("
    assert first.location == SourceLocation("s.yaml", 2, 5)


# --------------------------------------------------------------------------- YAML-level


def test_malformed_yaml_points_at_the_parser_marker(root: Path) -> None:
    problem = one_problem(
        root,
        """
        requirements:
          - id: a
            command: {run: 'ls'
          - id: b
        """,
    )
    assert problem.startswith("spec.yaml:4:3: invalid YAML: ")
    assert "flow mapping" in problem


def test_tab_indentation_is_malformed_yaml(root: Path) -> None:
    (root / "spec.yaml").write_text("requirements:\n\t- id: a\n", encoding="utf-8")
    assert [str(p) for p in load_spec_files(["spec.yaml"]).all_problems()] == [
        "spec.yaml:2:1: invalid YAML: found character '\\t' that cannot start any token "
        "(while scanning for the next token)"
    ]


def test_second_document_is_rejected(root: Path) -> None:
    problem = one_problem(root, "requirements: []\n---\nrequirements: []\n")
    assert problem == "spec.yaml:2:1: a spec file holds one YAML document; a second one starts here"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "requirements:\n  - id: a\n    id: b\n    command: {run: x}\n",
            "spec.yaml:3:5: duplicate key 'id' (first defined at line 2, col 5); "
            "YAML would silently keep only the last value",
        ),
        (
            "requirements:\n  - id: a\n    command: {run: x, run: y}\n",
            "spec.yaml:3:23: duplicate key 'run' (first defined at line 3, col 15); "
            "YAML would silently keep only the last value",
        ),
        (
            "requirements: []\nrequirements:\n  - id: a\n    command: {run: x}\n",
            "spec.yaml:2:1: duplicate key 'requirements' (first defined at line 1, col 1); "
            "YAML would silently keep only the last value",
        ),
    ],
    ids=["in-requirement", "in-kind", "top-level"],
)
def test_duplicate_keys_anywhere_name_the_first_occurrence(
    root: Path, text: str, expected: str
) -> None:
    assert one_problem(root, text) == expected


def test_non_string_keys_unknown_tags_and_bad_scalars(root: Path) -> None:
    found = problems_of(
        root,
        """
        requirements:
          - id: a
            yes: 1
            command: {run: !shell ls, timeout: !!int ten}
        """,
    )
    assert found == [
        "spec.yaml:3:5: mapping key 'yes' is read as a boolean, not a string; quote it",
        "spec.yaml:4:20: invalid value 'ls' (!shell): could not determine a constructor "
        "for the tag '!shell'",
        "spec.yaml:4:40: invalid value 'ten' (tag:yaml.org,2002:int): invalid literal for "
        "int() with base 10: 'ten'",
    ]


def test_an_unreadable_value_is_reported_once(root: Path) -> None:
    assert problems_of(root, "requirements: !!int many\n") == [
        "spec.yaml:1:15: invalid value 'many' (tag:yaml.org,2002:int): invalid literal for "
        "int() with base 10: 'many'"
    ]


def test_alias_bomb_is_refused_quickly(root: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    found = problems_of(root, "\n".join(lines) + "\n")
    assert len(found) == 1
    assert found[0].startswith("spec.yaml:1:1: document expands to more than ")
    assert "alias bomb" in found[0]


def test_recursive_alias_is_a_problem_not_a_hang(root: Path) -> None:
    found = problems_of(root, "requirements: &r\n  - *r\n")
    # An alias is the anchored node itself, so the position is the anchor's.
    assert found == ["spec.yaml:1:15: recursive alias: a node contains itself"]


def test_not_utf8_names_line_and_column(root: Path) -> None:
    (root / "spec.yaml").write_bytes(b"requirements:\n  - id: caf\xe9\n")
    assert [str(p) for p in load_spec_files(["spec.yaml"]).all_problems()] == [
        "spec.yaml:2:12: not UTF-8 text: byte 0xe9 cannot be decoded"
    ]


def test_control_character_is_malformed_yaml(root: Path) -> None:
    (root / "spec.yaml").write_text("requirements:\n  - id: a\x07\n", encoding="utf-8")
    [problem] = problems_of_existing(root)
    assert problem.startswith("spec.yaml:2:10: invalid YAML: unacceptable character 0x0007")


def problems_of_existing(root: Path, name: str = "spec.yaml") -> list[str]:
    return [str(p) for p in load_spec_files([root / name]).all_problems()]


# --------------------------------------------------------------------------- file shape


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "spec.yaml:1:1: empty spec file: expected a mapping with 'requirements:' (a list)"),
        (
            "# only a comment\n",
            "spec.yaml:1:1: empty spec file: expected a mapping with 'requirements:' (a list)",
        ),
        (
            "- id: a\n",
            "spec.yaml:1:1: a spec file must be a mapping with 'requirements:', got a list",
        ),
        (
            "just text\n",
            "spec.yaml:1:1: a spec file must be a mapping with 'requirements:', got a string",
        ),
        ("other: 1\n", "spec.yaml:1:1: unknown field 'other' at the top level "),
        ("version: 1\nrequirements: []\n", "spec.yaml:1:1: unknown field 'version'"),
        (
            "requirement: []\n",
            "spec.yaml:1:1: unknown field 'requirement' at the top level; "
            "did you mean 'requirements'?",
        ),
        ("{}\n", "spec.yaml:1:1: missing 'requirements:' (a list of requirements)"),
        (
            "requirements:\n",
            "spec.yaml:1:14: 'requirements' must be a list of requirements, got null",
        ),
        (
            "requirements: {id: a}\n",
            "spec.yaml:1:15: 'requirements' must be a list of requirements, got a mapping",
        ),
        (
            "requirements:\n  - just-an-id\n",
            "spec.yaml:2:5: each requirement must be a mapping (id, one check, ...), got a string",
        ),
    ],
)
def test_file_shape_problems(root: Path, text: str, expected: str) -> None:
    (root / "spec.yaml").write_text(text, encoding="utf-8")
    found = problems_of_existing(root)
    assert len(found) == 1, found
    assert found[0].startswith(expected)


# --------------------------------------------------------------------------- requirement fields


def test_unknown_requirement_field_suggests_the_close_one(root: Path) -> None:
    assert (
        one_problem(
            root,
            """
        requirements:
          - id: a
            tittle: Hello
            command: {run: x}
        """,
        )
        == "spec.yaml:3:5: unknown field 'tittle' in requirement; did you mean 'title'?"
    )


def test_unknown_field_without_close_match_lists_the_fields(root: Path) -> None:
    assert one_problem(
        root,
        """
        requirements:
          - id: a
            zzz: 1
            command: {run: x}
        """,
    ) == (
        "spec.yaml:3:5: unknown field 'zzz' in requirement (expected one of: id, title, "
        "risk, depends_on, owner, defines, contains, absent, command)"
    )


def test_misspelt_check_is_one_problem_not_two(root: Path) -> None:
    assert (
        one_problem(
            root,
            """
        requirements:
          - id: a
            contain: {path: README.md, pattern: x}
        """,
        )
        == "spec.yaml:3:5: unknown field 'contain' in requirement; did you mean 'contains'?"
    )


def test_unknown_field_inside_a_kind_suggests(root: Path) -> None:
    assert one_problem(
        root,
        """
        requirements:
          - id: a
            defines:
              path: m.py
              sybmol: f
        """,
    ).startswith("spec.yaml:5:7: unknown field 'sybmol' in 'defines'; did you mean 'symbol'?")


def test_unknown_field_inside_a_kind_without_match_lists_fields(root: Path) -> None:
    found = problems_of(
        root,
        """
        requirements:
          - id: a
            command: {run: x, qqq: 1}
        """,
    )
    assert found == [
        "spec.yaml:3:23: unknown field 'qqq' in 'command' (expected one of: run, timeout, cwd)"
    ]


def test_zero_checks(root: Path) -> None:
    assert one_problem(
        root,
        """
        requirements:
          - id: lonely
            title: nothing to check
        """,
    ) == (
        "spec.yaml:2:5: requirement 'lonely' has no check: add exactly one of absent, "
        "command, contains, defines"
    )


def test_two_checks_names_both_and_points_at_the_second(root: Path) -> None:
    assert one_problem(
        root,
        """
        requirements:
          - id: both
            contains: {path: README.md, pattern: x}
            absent: {path: README.md, pattern: y}
        """,
    ) == (
        "spec.yaml:4:5: requirement 'both' has 2 checks ('contains' at line 3, "
        "'absent' at line 4): keep exactly one"
    )


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        (
            "risk",
            "critical",
            "4:11: risk: Input should be 'low', 'medium' or 'high', got 'critical'",
        ),
        ("title", "42", "4:12: title: Input should be a valid string, got 42"),
        ("depends_on", "{a: b}", "4:17: depends_on: Input should be a valid list"),
        ("owner", "[src/**, 7]", "4:21: owner[1]: Input should be a valid string, got 7"),
    ],
)
def test_common_field_types_and_enums(root: Path, field: str, value: str, expected: str) -> None:
    problem = one_problem(
        root,
        f"""
        requirements:
          - id: a
            command: {{run: x}}
            {field}: {value}
        """,
    )
    assert problem == f"spec.yaml:{expected}"


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        (
            "contains: {path: R.md, pattern: x, match: some}",
            "3:47: contains.match: Input should be 'any' or 'all', got 'some'",
        ),
        (
            "defines: {path: m.py, symbol: f, kind: klass}",
            "3:44: defines.kind: Input should be 'class', 'function', 'method', 'variable' "
            "or 'any', got 'klass'",
        ),
        (
            "contains: {path: R.md, pattern: x, regex: maybe}",
            "3:47: contains.regex: Input should be a valid boolean, unable to interpret "
            "input, got 'maybe'",
        ),
        (
            "command: {run: x, timeout: -1}",
            "3:32: command.timeout: Input should be greater than 0, got -1",
        ),
        ("absent: {paths: [], pattern: x}", "3:21: absent.paths: List should have at least 1 "),
        (
            "absent: {path: a.txt, pattern: [x]}",
            "3:36: absent.pattern: Input should be a valid string",
        ),
    ],
)
def test_kind_field_types_and_enums(root: Path, check: str, expected: str) -> None:
    problem = one_problem(root, f"requirements:\n  - id: a\n    {check}\n")
    assert problem.startswith(f"spec.yaml:{expected}")


def test_missing_required_kind_field_points_at_the_kind_mapping(root: Path) -> None:
    assert (
        one_problem(
            root,
            """
        requirements:
          - id: a
            contains:
              path: README.md
        """,
        )
        == "spec.yaml:4:7: missing required field 'pattern' in 'contains'"
    )


def test_kind_model_validator_error(root: Path) -> None:
    assert (
        one_problem(
            root,
            """
        requirements:
          - id: a
            defines: {path: m.py, module: m, symbol: f}
        """,
        )
        == "spec.yaml:3:14: defines: give exactly one of 'path' or 'module'"
    )


def test_kind_value_that_is_not_a_mapping(root: Path) -> None:
    assert (
        one_problem(
            root,
            """
        requirements:
          - id: a
            command: "pytest -q"
        """,
        )
        == "spec.yaml:3:14: 'command' must be a mapping of its fields (run, timeout, cwd), "
        "got a string"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  - command: {run: x}\n", "spec.yaml:2:5: requirement is missing its 'id'"),
        (
            "  - id: 'has space'\n    command: {run: x}\n",
            "spec.yaml:2:9: id: invalid id 'has space': an id starts with a letter or digit",
        ),
        (
            "  - id: -dash\n    command: {run: x}\n",
            "spec.yaml:2:9: id: invalid id '-dash'",
        ),
        (
            "  - id: 12\n    command: {run: x}\n",
            "spec.yaml:2:9: id: Input should be a valid string",
        ),
        ("  - id: a::b\n    command: {run: x}\n", "spec.yaml:2:9: id: invalid id 'a::b'"),
    ],
)
def test_id_rules(root: Path, text: str, expected: str) -> None:
    assert one_problem(root, "requirements:\n" + text).startswith(expected)


def test_ids_with_dots_dashes_and_underscores_are_fine(root: Path) -> None:
    write(
        root,
        "s.yaml",
        """
        requirements:
          - id: 0.fast_path-v2
            command: {run: x}
        """,
    )
    assert load_spec("s.yaml").requirements[0].id == "0.fast_path-v2"


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        ("absent: {paths: ['src\\**'], pattern: x}", "3:22: absent.paths[0]: backslash in"),
        (
            "absent: {paths: [a/**], exclude: [ok/**, 'b\\c'], pattern: x}",
            "3:46: absent.exclude[1]: backslash in",
        ),
        ("contains: {path: 'docs\\README.md', pattern: x}", "3:22: contains.path: backslash in"),
        ("defines: {path: 'a\\b.py', symbol: f}", "3:21: defines.path: backslash in"),
        ("command: {run: x, cwd: 'sub\\dir'}", "3:28: command.cwd: backslash in"),
    ],
)
def test_backslashes_in_paths_and_globs(root: Path, check: str, expected: str) -> None:
    problem = one_problem(root, f"requirements:\n  - id: a\n    {check}\n")
    assert problem.startswith(f"spec.yaml:{expected}")
    assert "use '/'" in problem


def test_backslash_in_owner(root: Path) -> None:
    problem = one_problem(
        root,
        """
        requirements:
          - id: a
            owner: ['src/**', 'lib\\**']
            command: {run: x}
        """,
    )
    assert problem.startswith("spec.yaml:3:23: owner[1]: backslash in")


def test_blank_paths_are_rejected(root: Path) -> None:
    problem = one_problem(root, "requirements:\n  - id: a\n    contains: {path: ' ', pattern: x}\n")
    assert problem == "spec.yaml:3:22: contains.path: must not be empty"


# --------------------------------------------------------------------------- across requirements


def test_duplicate_id_in_one_file_names_both_locations(root: Path) -> None:
    assert (
        one_problem(
            root,
            """
        requirements:
          - id: same
            command: {run: x}
          - id: same
            command: {run: y}
        """,
        )
        == "spec.yaml:4:9: duplicate id 'same': already defined at spec.yaml:2:9"
    )


def test_duplicate_id_across_files_is_reported_on_the_later_file(root: Path) -> None:
    write(root, "specs/a.yaml", "requirements:\n  - id: same\n    command: {run: x}\n")
    write(
        root,
        "specs/b.yaml",
        "requirements:\n  - {id: other, command: {run: x}}\n  - id: same\n    command: {run: y}\n",
    )
    loaded = load_spec_files(["specs"])
    assert list(loaded.problems) == [Path("specs/b.yaml")]
    assert [str(p) for p in loaded.problems[Path("specs/b.yaml")]] == [
        "specs/b.yaml:3:9: duplicate id 'same': already defined at specs/a.yaml:2:9"
    ]
    assert [r.id for r in loaded.spec] == ["same"]


def test_unknown_dependency_suggests_a_known_id(root: Path) -> None:
    found = problems_of(
        root,
        """
        requirements:
          - id: build-wheel
            command: {run: x}
          - id: publish
            depends_on: [build-whel, nothing-like-it]
            command: {run: y}
          - id: docs
            depends_on: publsh
            command: {run: z}
        """,
    )
    assert found == [
        "spec.yaml:5:18: depends_on names unknown id 'build-whel'; did you mean 'build-wheel'?",
        "spec.yaml:5:30: depends_on names unknown id 'nothing-like-it'",
        "spec.yaml:8:17: depends_on names unknown id 'publsh'; did you mean 'publish'?",
    ]


def test_self_dependency_is_a_cycle(root: Path) -> None:
    assert (
        one_problem(root, "requirements:\n  - id: a\n    depends_on: a\n    command: {run: x}\n")
        == "spec.yaml:3:17: dependency cycle: a -> a"
    )


def test_cycle_is_named_once_at_the_first_requirement(root: Path) -> None:
    found = problems_of(
        root,
        """
        requirements:
          - id: root
            command: {run: x}
          - id: a
            depends_on: [root, b]
            command: {run: x}
          - id: b
            depends_on: c
            command: {run: x}
          - id: c
            depends_on: [a]
            command: {run: x}
        """,
    )
    assert found == ["spec.yaml:5:24: dependency cycle: a -> b -> c -> a"]


def test_cycle_across_files_lands_on_the_first_file_only(root: Path) -> None:
    write(
        root, "specs/1.yaml", "requirements:\n  - id: a\n    depends_on: b\n    command: {run: x}\n"
    )
    write(
        root, "specs/2.yaml", "requirements:\n  - id: b\n    depends_on: a\n    command: {run: x}\n"
    )
    loaded = load_spec_files(["specs"])
    assert {p: [str(x) for x in v] for p, v in loaded.problems.items()} == {
        Path("specs/1.yaml"): ["specs/1.yaml:3:17: dependency cycle: a -> b -> a"]
    }
    # The file that is left is acyclic on its own (its dependency lives in the invalid file).
    assert [(r.id, r.depends_on) for r in loaded.spec] == [("b", ("a",))]


def test_diamond_dependencies_are_not_cycles(root: Path) -> None:
    write(
        root,
        "s.yaml",
        """
        requirements:
          - {id: top, depends_on: [left, right], command: {run: x}}
          - {id: left, depends_on: base, command: {run: x}}
          - {id: right, depends_on: [base], command: {run: x}}
          - {id: base, command: {run: x}}
        """,
    )
    assert [r.id for r in load_spec("s.yaml")] == ["top", "left", "right", "base"]


def test_long_dependency_chain_needs_no_recursion(root: Path) -> None:
    n = 1100  # past the default recursion limit: the cycle search must be iterative
    lines = ["requirements:"]
    lines += [f"  - {{id: r{i}, depends_on: r{i + 1}, command: {{run: x}}}}" for i in range(n)]
    lines.append(f"  - {{id: r{n}, depends_on: r0, command: {{run: x}}}}")
    (root / "s.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    [problem] = problems_of_existing(root, "s.yaml")
    assert problem.startswith("s.yaml:2:26: dependency cycle: r0 -> r1 -> r2 -> ")
    assert problem.endswith(f"-> r{n} -> r0")


def test_dependency_on_an_invalid_files_id_still_loads(root: Path) -> None:
    write(
        root,
        "specs/a.yaml",
        "requirements:\n  - id: base\n    risk: extreme\n    command: {run: x}\n",
    )
    write(
        root,
        "specs/b.yaml",
        "requirements:\n  - id: top\n    depends_on: base\n    command: {run: x}\n",
    )
    loaded = load_spec_files(["specs"])
    assert list(loaded.problems) == [Path("specs/a.yaml")]
    assert [r.id for r in loaded.spec] == ["top"]
    assert [f.path for f in loaded.spec.files] == [Path("specs/b.yaml")]


# --------------------------------------------------------------------------- many problems at once


MANY_PROBLEMS = """
requirements:
  - id: first
    tittle: Misspelt
    risk: urgent
    contains: {path: 'docs\\index.md', patern: x}
  - id: second
    depends_on: [frist]
    command: {run: x}
    absent: {path: a.txt, pattern: y}
  - id: first
    owner: 'src\\**'
    defines: {path: m.py, symbol: f, kind: klass}
  - id: third
    command: {run: x, run: y}
extra: true
"""


def test_multi_problem_file_reports_every_problem_in_line_order(root: Path) -> None:
    path = write(root, "many.yaml", MANY_PROBLEMS)
    with pytest.raises(SpecError) as info:
        load_spec([path])
    found = [str(p) for p in info.value.problems]
    assert found == [
        "many.yaml:3:5: unknown field 'tittle' in requirement; did you mean 'title'?",
        "many.yaml:4:11: risk: Input should be 'low', 'medium' or 'high', got 'urgent'",
        "many.yaml:5:22: contains.path: backslash in 'docs\\\\index.md': paths and globs use "
        "'/' (gitignore syntax) on every OS",
        "many.yaml:5:39: unknown field 'patern' in 'contains'; did you mean 'pattern'?",
        "many.yaml:7:18: depends_on names unknown id 'frist'; did you mean 'first'?",
        "many.yaml:9:5: requirement 'second' has 2 checks ('command' at line 8, "
        "'absent' at line 9): keep exactly one",
        "many.yaml:10:9: duplicate id 'first': already defined at many.yaml:2:9",
        "many.yaml:11:12: owner[0]: backslash in 'src\\\\**': paths and globs use '/' "
        "(gitignore syntax) on every OS",
        "many.yaml:12:44: defines.kind: Input should be 'class', 'function', 'method', "
        "'variable' or 'any', got 'klass'",
        "many.yaml:14:23: duplicate key 'run' (first defined at line 14, col 15); "
        "YAML would silently keep only the last value",
        "many.yaml:15:1: unknown field 'extra' at the top level (expected one of: requirements)",
    ]
    assert str(info.value) == f"{found[0]} (and {len(found) - 1} more)"
    assert all(isinstance(p, SpecProblem) for p in info.value.problems)


def test_load_spec_lists_problems_of_every_file_in_file_order(root: Path) -> None:
    write(root, "specs/a.yaml", "requirements:\n  - id: a\n")
    write(root, "specs/b.yaml", "requirements:\n  - {id: ok, command: {run: x}}\n")
    write(root, "specs/c.yaml", "requirements:\n  - id: c\n    command: {run: x}\n    risk: no\n")
    with pytest.raises(SpecError) as info:
        load_spec(["specs"])
    assert [(p.file, p.line, p.col) for p in info.value.problems] == [
        ("specs/a.yaml", 2, 5),
        ("specs/c.yaml", 4, 11),
    ]
    loaded = load_spec_files(["specs"])
    assert [r.id for r in loaded.spec] == ["ok"]
    assert loaded.files == [Path("specs/a.yaml"), Path("specs/b.yaml"), Path("specs/c.yaml")]
    assert not loaded.ok


def test_no_input_ever_raises_anything_but_problems(root: Path) -> None:
    """Mutate a valid spec byte by byte: every variant loads or reports problems."""
    base = DESIGN_EXAMPLE.lstrip("\n")
    insertions = [":", "- ", "{", "]", "'", "\t", "&a ", "*a", "!!int ", "\\", "\n  "]
    seen_problems = 0
    for i in range(0, len(base), 11):
        for j, extra in enumerate(insertions):
            if (i + j) % 3:
                continue
            variant = base[:i] + extra + base[i + 1 :]
            (root / "m.yaml").write_text(variant, encoding="utf-8")
            loaded = load_spec_files(["m.yaml"])
            for problem in loaded.all_problems():
                assert problem.line >= 1 and problem.col >= 1, problem
                assert "\n" not in problem.message, problem
                seen_problems += 1
    assert seen_problems > 30


# --------------------------------------------------------------------------- discovery and names


def test_discovery_walks_directories_sorted_and_skips_hidden(root: Path) -> None:
    for name in [
        "specs/b.yaml",
        "specs/a.yml",
        "specs/sub/c.yaml",
        "specs/notes.txt",
        "specs/.hidden.yaml",
        "specs/.git/x.yaml",
        "specs/.cache/deep/y.yaml",
    ]:
        write(root, name, "requirements: []\n")
    single = write(root, "other/extra.spec", "requirements: []\n")
    found = discover_spec_files(["specs", single, "specs/b.yaml"])
    assert found == [
        Path("specs/a.yml"),
        Path("specs/b.yaml"),
        Path("specs/sub/c.yaml"),
        single,
    ]
    assert discover_spec_files("specs") == found[:3]  # a lone path is accepted too


def test_missing_path_is_a_one_line_usage_error(root: Path) -> None:
    with pytest.raises(UsageError) as info:
        discover_spec_files(["nope/specs"])
    assert str(info.value) == "spec path not found: nope/specs"
    with pytest.raises(UsageError):
        load_spec(["nope"])


def test_empty_directory_gives_an_empty_spec(root: Path) -> None:
    (root / "specs").mkdir()
    assert discover_spec_files(["specs"]) == []
    assert len(load_spec(["specs"])) == 0


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_broken_link_in_a_spec_directory_is_a_problem(root: Path) -> None:
    (root / "specs").mkdir()
    (root / "specs" / "gone.yaml").symlink_to(root / "missing.yaml")
    loaded = load_spec_files(["specs"])
    [problem] = loaded.all_problems()
    assert str(problem).startswith("specs/gone.yaml: cannot read spec file: ")
    assert (problem.line, problem.col) == (0, 0)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinked_directory_loops_do_not_hang(root: Path) -> None:
    write(root, "specs/a.yaml", "requirements: []\n")
    (root / "specs" / "loop").symlink_to(root / "specs", target_is_directory=True)
    assert discover_spec_files(["specs"]) == [Path("specs/a.yaml")]


def test_display_path_relative_under_cwd_else_absolute(tmp_path: Path) -> None:
    inside = tmp_path / "proj" / "specs" / "a.yaml"
    assert display_path(inside, cwd=tmp_path / "proj") == "specs/a.yaml"
    outside = tmp_path / "elsewhere" / "b.yaml"
    assert display_path(outside, cwd=tmp_path / "proj") == outside.absolute().as_posix()
    assert display_path(Path("x/../y.yaml"), cwd=Path.cwd()) == "y.yaml"


def test_problems_outside_cwd_use_absolute_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = write(tmp_path / "repo", "spec.yaml", "requirements:\n  - id: a\n")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    [problem] = load_spec_files([spec]).all_problems()
    assert problem.file == spec.absolute().as_posix()
    assert problem.file.startswith("/") or ":" in problem.file
