"""YAML with positions: marks by path, duplicate keys, merges, aliases, bad tags."""

from __future__ import annotations

import pytest

from chimera.spec.yamlload import Mark, max_nodes, parse_yaml, type_name

SAMPLE = """\
requirements:
  - id: audit-log
    title: "The audit log"
    defines: {path: chimera/governance/audit.py, symbol: AuditLog.append}
  - id: no-eval
    depends_on: [audit-log]
    absent:
      pattern: '\\beval\\('
      paths:
        - 'chimera/**/*.py'
"""


def test_values_and_marks_by_path() -> None:
    doc = parse_yaml(SAMPLE)
    assert not doc.issues and not doc.syntax_error and not doc.empty
    assert doc.value["requirements"][1]["absent"]["paths"] == ["chimera/**/*.py"]
    assert doc.mark(()) == Mark(1, 1)
    assert doc.mark(("requirements",)) == Mark(2, 3)
    assert doc.mark(("requirements", 0)) == Mark(2, 5)
    assert doc.key_mark(("requirements", 0, "title")) == Mark(3, 5)
    assert doc.mark(("requirements", 0, "title")) == Mark(3, 12)
    assert doc.mark(("requirements", 0, "defines", "symbol")) == Mark(4, 58)
    assert doc.mark(("requirements", 1, "depends_on", 0)) == Mark(6, 18)
    assert doc.mark(("requirements", 1, "absent", "paths", 0)) == Mark(10, 11)
    assert doc.has(("requirements", 1, "absent"))
    assert not doc.has(("requirements", 1, "contains"))


def test_missing_paths_fall_back_to_the_nearest_ancestor() -> None:
    doc = parse_yaml(SAMPLE)
    assert doc.mark(("requirements", 0, "defines", "kind")) == Mark(4, 14)
    assert doc.mark(("requirements", 7, "x")) == Mark(2, 3)
    # A key mark falls back to the value mark when there is no key (list items).
    assert doc.key_mark(("requirements", 1)) == Mark(5, 5)


def test_duplicate_key_keeps_the_first_value_and_names_its_line() -> None:
    doc = parse_yaml("a: 1\nb: 2\na: 3\n")
    assert doc.value == {"a": 1, "b": 2}
    assert [(i.mark, i.message) for i in doc.issues] == [
        (
            Mark(3, 1),
            "duplicate key 'a' (first defined at line 1, col 1); "
            "YAML would silently keep only the last value",
        )
    ]


def test_merge_keys_follow_yaml_semantics() -> None:
    doc = parse_yaml(
        "base: &base {a: 1, b: 1}\n"
        "more: &more {b: 2, c: 2}\n"
        "one:\n  <<: *base\n  a: 9\n"
        "two:\n  <<: [*base, *more]\n"
        "three:\n  <<: {<<: *more, d: 3}\n"
    )
    assert not doc.issues
    assert doc.value["one"] == {"a": 9, "b": 1}  # explicit keys win
    assert doc.value["two"] == {"a": 1, "b": 1, "c": 2}  # earlier sources win
    assert doc.value["three"] == {"d": 3, "b": 2, "c": 2}  # nested merges
    assert doc.key_mark(("one", "b")) == Mark(1, 20)  # merged keys point at their source


def test_merge_of_a_scalar_is_an_issue() -> None:
    doc = parse_yaml("a:\n  <<: 5\n  b: 1\n")
    assert [(i.mark, i.message) for i in doc.issues] == [
        (Mark(2, 7), "a merge key '<<' takes a mapping or a list of mappings")
    ]
    assert doc.value == {"a": {"b": 1}}


def test_non_string_and_complex_keys() -> None:
    doc = parse_yaml("1: a\nnull: b\n? [x]\n: c\nok: d\n")
    assert doc.value == {"ok": "d"}
    assert [i.message for i in doc.issues] == [
        "mapping key '1' is read as an integer, not a string; quote it",
        "mapping key 'null' is read as null, not a string; quote it",
        "mapping keys must be plain strings, not a list or mapping",
    ]


def test_unsupported_collection_tags() -> None:
    doc = parse_yaml("a: !!set {x}\nb: !custom [1]\n")
    assert [(i.mark, i.message) for i in doc.issues] == [
        (
            Mark(1, 4),
            "unsupported tag 'tag:yaml.org,2002:set' on a mapping; spec files use plain YAML",
        ),
        (Mark(2, 4), "unsupported tag '!custom' on a list; spec files use plain YAML"),
    ]


def test_empty_and_comment_only_documents() -> None:
    assert parse_yaml("").empty
    assert parse_yaml("# nothing\n\n").empty
    assert not parse_yaml("~\n").empty and parse_yaml("~\n").value is None


def test_bom_is_ignored() -> None:
    doc = parse_yaml("\ufeffa: 1\n")
    assert doc.value == {"a": 1} and doc.mark(("a",)) == Mark(1, 4)


def test_alias_bomb_stops_fast() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    text = "\n".join(lines) + "\n"
    # 10**10 nodes if expanded: without the limit this would not finish (no timing needed).
    doc = parse_yaml(text)
    assert doc.value is None and not doc.marks
    assert doc.issues[0].message == (
        f"document expands to more than {max_nodes(len(text))} nodes through its aliases "
        "(an alias bomb?); refusing to read it"
    )


def test_moderate_anchor_reuse_is_fine() -> None:
    items = "\n".join(f"  - {{id: r{i}, absent: {{paths: *py, pattern: x}}}}" for i in range(300))
    doc = parse_yaml("defaults: {paths: &py ['src/**/*.py', 'tests/**/*.py']}\nr:\n" + items)
    assert not doc.issues
    assert doc.value["r"][299]["absent"]["paths"] == ["src/**/*.py", "tests/**/*.py"]


@pytest.mark.parametrize(
    "value,name",
    [
        (None, "null"),
        (True, "a boolean"),
        (3, "an integer"),
        (1.5, "a float"),
        ("s", "a string"),
        ({}, "a mapping"),
        ([], "a list"),
        (b"x", "a bytes"),
    ],
)
def test_type_names(value: object, name: str) -> None:
    assert type_name(value) == name


def _corpus() -> list[str]:
    insertions = [":", "- ", "{", "]", "'", '"', "\t", "&a ", "*a", "!!int ", "\\", "\n  ", "<<: "]
    texts = [SAMPLE]
    for i in range(0, len(SAMPLE), 5):
        for j, extra in enumerate(insertions):
            if (i + j) % 2 == 0:
                texts.append(SAMPLE[:i] + extra + SAMPLE[i + 1 :])
    return texts


def test_mutated_documents_never_raise() -> None:
    for text in _corpus():
        doc = parse_yaml(text)
        assert doc.syntax_error or doc.value is not None or doc.empty or doc.issues, text


@pytest.mark.parametrize("text", ["a: !!int ''\n", "a: !!float x\n", "a: !!bool maybe\n"])
def test_explicit_tags_that_cannot_convert_are_issues(text: str) -> None:
    doc = parse_yaml(text)
    assert doc.value == {"a": None}
    assert doc.broken == {("a",)}
    assert doc.issues[0].message.startswith("invalid value ")


def test_non_ascii_columns_count_characters() -> None:
    doc = parse_yaml("t: 'héllo wörld'\nu: x\nv: [ä, ö]\n")
    assert doc.mark(("v", 1)) == Mark(3, 8)
    assert doc.mark(("u",)) == Mark(2, 4)


def test_pathological_nesting_is_an_issue_not_a_crash() -> None:
    depth = 5000
    doc = parse_yaml("a: " + "[" * depth + "]" * depth + "\n")
    assert doc.syntax_error
    assert doc.issues[0].message.startswith("invalid YAML: the document nests too deeply")
    shallow = parse_yaml("a: " + "[" * 50 + "]" * 50 + "\n")
    assert not shallow.issues


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("escape", ["\\U00110000", "\\UFFFFFFFF"])
def test_an_escape_past_the_last_code_point_is_an_issue_at_its_backslash(
    fast: bool, escape: str
) -> None:
    """PyYAML's scanner raised (ValueError, OverflowError): an internal error, no line:col."""
    doc = parse_yaml(f'a: 1\nb: ["x{escape}"]\n', fast=fast)
    assert doc.syntax_error and doc.value is None
    assert [(i.mark, i.message) for i in doc.issues] == [
        (Mark(2, 7), "invalid YAML: escape beyond U+10FFFF in a double-quoted scalar")
    ]


@pytest.mark.parametrize("fast", [True, False])
def test_an_empty_scalar_tagged_only_bang_is_null(fast: bool) -> None:
    """libyaml calls ``a: !`` not implicit (read as ""), the pure parser plain (null)."""
    doc = parse_yaml("a: !\nb:\n  - !\n  - x\n", fast=fast)
    assert doc.value == {"a": None, "b": [None, "x"]}
