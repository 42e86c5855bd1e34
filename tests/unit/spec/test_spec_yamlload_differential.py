"""The three readers of spec YAML agree: libyaml's events, libyaml's node graph, pure Python.

Every text here is read three ways — :func:`~chimera.spec.yamlevents.read_events` (when it
takes the text), the libyaml node-graph path (events turned off) and the pure parser — and
the values (types included), marks, key marks, issues and flags must be identical.
"""

from __future__ import annotations

import gc
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.errors import SpecError
from chimera.spec import loader, reqfields, yamlevents, yamlload
from chimera.spec.yamlload import YamlDocument, parse_yaml

pytestmark = pytest.mark.skipif(
    getattr(yaml, "CSafeLoader", None) is None, reason="PyYAML without libyaml"
)


def _view(doc: YamlDocument | None) -> tuple[Any, ...] | None:
    if doc is None:
        return None
    issues = [(i.mark, i.message) for i in doc.issues]
    return (repr(doc.value), doc.marks, doc.key_marks, issues, doc.broken, doc.empty,
            doc.syntax_error)  # fmt: skip


def _composed(text: str) -> tuple[Any, ...] | None:
    """The libyaml node-graph reading (``None``: it hands the text to the pure parser)."""
    assert yamlload._C_LOADER is not None
    saved = vars(yamlload)["read_events"]
    setattr(yamlload, "read_events", lambda *_: yamlevents.COMPOSE)  # noqa: B010
    try:
        return _view(yamlload._parse_with(yamlload._C_LOADER, text, flow_guard=True))
    finally:
        setattr(yamlload, "read_events", saved)  # noqa: B010


def _assert_agree(text: str) -> str:
    """All readers agree on ``text``; returns the path the event reader chose."""
    pure = _view(parse_yaml(text, fast=False))
    assert _view(parse_yaml(text)) == pure, text
    if yamlload.pure_only(text):
        return "pure only"  # a tab, a byte order mark past the start, `%YAML 1.1#`
    assert yamlload._C_LOADER is not None
    found = yamlevents.read_events(yamlload._C_LOADER, text)
    composed = _composed(text)
    if composed is not None:
        assert composed == pure, text
    if isinstance(found, YamlDocument):
        assert _view(found) == pure, text
        assert not found.issues  # the event reader leaves every issue to the node graph
        return "events"
    if found == yamlevents.PURE:
        return "pure"
    return "compose"


EDGE_CASES = {
    "duplicate keys": "a: 1\nb: 2\na: 3\n",
    "duplicate keys in flow": "a: {x: 1, x: 2}\n",
    "duplicate nested": "r:\n  - id: a\n    id: b\n",
    "tab indentation": "a:\n\tb: c\n",
    "tab in a value": "a: 'x\ty'\n",
    "bad indentation": "a:\n  b: 1\n c: 2\n",
    "bad indentation in a list": "a:\n  - x\n   - y\n",
    "anchor and alias": "a: &x {p: 1}\nb: *x\n",
    "anchor unused": "a: &x 1\nb: 2\n",
    "alias to a scalar": "a: &x hello\nb: [*x, *x]\n",
    "undefined alias": "a: *nope\n",
    "recursive alias": "a: &x [*x]\n",
    "merge key": "base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\n",
    "merge list": "a: &a {x: 1}\nb: &b {y: 2}\nc: {<<: [*a, *b], z: 3}\n",
    "merge inline": "<<: {a: 1}\nb: 2\n",
    "merge of a scalar": "<<: 1\n",
    "integer key": "1: a\n",
    "bool key": "yes: a\n",
    "null key": "~: a\n",
    "empty key": ": a\n",
    "float key": "1.5: a\n",
    "list as key": "? [a, b]\n: c\n",
    "mapping as key": "? {a: 1}\n: c\n",
    "yaml 1.1 booleans": "a: [yes, no, on, off, Yes, NO, On, OFF, y, n, true, False]\n",
    "numbers": "a: [0x1f, 1_000, .inf, -.inf, .NaN, 0o17, 017, 1e3, +12, -0, 1_0.5, 0b101]\n",
    "sexagesimal": "a: [1:30, 190:20:30]\n",
    "timestamps": "a: [2024-01-02, 2024-01-02 10:20:30, 2024-01-02T10:20:30.5Z]\n",
    "bad timestamp": "a: 2020-13-45\n",
    "empty values": "a:\nb: ~\nc: null\nd: ''\ne: []\nf: {}\n",
    "empty flow value": "a: {x: , y: 1}\n",
    "empty flow item": "a: [x, , y]\n",
    "value tag": "a: =\n",
    "explicit tags": "a: !!str 1\nb: !!int '7'\nc: !!float x\n",
    "custom tag": "a: !custom x\n",
    "unicode": "é: ü\nb: {€: 1, c: [ä, ö, 日本語]}\nd: '\U0001f600'\n",
    "bom": "\ufeffa: 1\n",
    "very long line": "a: " + "x" * 20000 + "\nb: [" + ", ".join(["y"] * 3000) + "]\n",
    "very long quoted": "a: '" + "é" * 10000 + "'\n",
    "block scalars": "a: |\n  x\n  y\nb: >-\n  p\n  q\nc: |2+\n   z\n",
    "block header comment": "a: |#\n  x\n",
    "question mark in flow": "a: [x, ?y]\n",
    "question mark key in flow": "a: {run?: x}\n",
    "quoted question mark in flow": "a: ['(?:a|b)', \"x?\"]\n",
    "second document": "a: 1\n---\nb: 2\n",
    "explicit document": "---\na: 1\n...\n",
    "only a document marker": "---\n",
    "only a document marker at the end": "---",
    "a document marker and a comment": "--- #c",
    "a directive and a document marker": "%YAML 1.1\n---",
    "explicit key at the end": "? a",
    "explicit key at the end of a mapping": "x:\n? a",
    "explicit key in a list at the end": "- ? a",
    "empty value at the end": "a: 1\nb:",
    "empty item at the end": "a:\n  -",
    "directive": "%YAML 1.1\n---\na: yes\n",
    "control character": "a: \x07\n",
    "lone surrogate": "a: \udcff\n",
    "crlf": "a: 1\r\nb:\r\n  - x\r\n",
    "comments": "# c\na: 1  # d\n# e\n",
    "deep nesting": "a: " + "[" * 60 + "]" * 60 + "\n",
    "very deep nesting": "a: " + "[" * 400 + "]" * 400 + "\n",
    "scalar document": "just text\n",
    "list document": "- a\n- b\n",
    "unterminated flow": "a: [1, 2\n",
    "unterminated quote": "a: 'x\n",
    "colon in plain": "a: b: c\n",
    "double-quoted escapes": 'a: "\\t\\u00e9\\x41\\n"\n',
    "crlf in flow": "a: [x,\r\n  y]\r\nb: {p: '?',\r\n q: 1}\r\n",
    "next line break": "a: x\x85b: y\n",
    "line separators": "a: 'p\u2028q'\nb: [1,\u2028 2]\nc: x\u2029d: {e: f}\n",
    "astral characters": "a: '\U0001f600'\nb: {\U0001f600: [x, y]}\nc: [\U0001f600, ?z]\n",
    "bom and flow": "\ufeffa: [x, '?']\n",
    "bom inside a key": "a:\n  pat\ufefftern: x\n  paths: [y]\n",
    "bom starting a line": "a: 1\n\ufeffb: 2\n",
    "bom alone on a line": "a: >+\n  p\n\ufeff\nc: x\n",
    "bom after the document end": "a: b\n...\n\ufeff",
    "two concatenated files": "\ufeffa: 1\n\ufeffb: [x, y]\n",
    "directive with a glued comment": "%YAML 1.1#\n---\na: 1\n",
    "directive with a spaced comment": "%YAML 1.1 #c\n---\na: 1\n",
    "tag handle with an odd character": "a: !!int 3\nb: !@!str x\n",
    "tag handle of dots": "a: !...!int 3\n",
    "tag handle at a line start in flow": "b: {p: q,\n!~!int r: s}\n",
    "tag handle with a colon": "a: !:!int 3\n",
    "negated glob is not a tag": "paths: ['src/**', '!gen/', \"!a!b\"]\n",
    "empty scalar tagged !": "a: !\nb: [!, x]\nc: [!]\n",
    "empty value tagged !": "a: !\nb: 1\n",
    "empty key tagged !": "k: v\n! : w\n",
    "empty explicit key tagged !": "? !\n: v\n",
    "escape past U+10FFFF": 'a: "x\\U00110000"\n',
    "escape past 2**31": 'a: ["\\UFFFFFFFF"]\n',
    "explicit key": "? a\n: b\n",
    "tag without a value": "a: !!str\nb: 1\n",
    "yaml 1.2 directive": "%YAML 1.2\n---\na: 1\n",
    "yaml 2.0 directive": "%YAML 2.0\n---\na: 1\n",
    "repeated directive": "%YAML 1.1\n%YAML 1.1\n---\na: 1\n",
    "tag directive": "%TAG ! tag:x,2000:\n---\na: 1\n",
    "unknown directive": "%FOO bar\n---\na: 1\n",
    "document end then start": "a: 1\n...\n---\n",
    "scalar after marker": "--- a\n",
    "nested block sequences": "- - - x\n",
    "multi-line plain": "a: b\n  c\n",
    "multi-line quoted": "a: 'b\n  c'\n",
    "flow then text": "a: [x]y\n",
    "flow sequence as key": "[a]: b\n",
    "single pair in flow sequence": "a: [b: c]\n",
    "dash as value": "a: -\n",
    "null key after null": "a: ~\n~: a\n",
}


@pytest.mark.parametrize("text", list(EDGE_CASES.values()), ids=list(EDGE_CASES))
def test_all_readers_agree_on_edge_cases(text: str) -> None:
    _assert_agree(text)


def test_the_event_reader_takes_plain_files_and_leaves_the_rest() -> None:
    assert _assert_agree("requirements:\n  - id: a\n    contains: {path: x, pattern: y}\n") == (
        "events"
    )
    assert _assert_agree(EDGE_CASES["numbers"]) == "events"
    assert _assert_agree(EDGE_CASES["yaml 1.1 booleans"]) == "events"
    for name in ("duplicate keys", "anchor and alias", "merge key", "integer key", "bad timestamp"):
        assert _assert_agree(EDGE_CASES[name]) == "compose", name
    for name in ("empty flow value", "question mark in flow", "block header comment"):
        assert _assert_agree(EDGE_CASES[name]) == "pure", name


# --------------------------------------------------------------------------- generated

_WORDS = [
    "a", "r0001", "src/**/*.py", "yes", "no", "on", "Off", "TRUE", "null", "~", "", "0x1f",
    "1_000", ".inf", "-.nan", "0o17", "017", "1e3", "1.5", "+12", "2024-01-02",
    "2024-01-02 10:20:30", "2020-13-45", "=", "<<", "é", "€uro", "a b", "a: b", "- x", "#x",
    "x #y", "[x]", "{x}", "?x", "x?", "!x", "&x", "*x", "|x", ">x", "@x", "%x", "x'y", 'x"y',
    "a\\b", "print\\(.*DEBUG", "(?:a|b)", "^ {40,}\\S", "x" * 300, "line\nbreak", "日本",
]  # fmt: skip
_CLEAN = ["a", "r0001", "src/**/*.py", "yes", "Off", "null", "0x1f", "1_000", ".inf", "1.5",
          "2024-01-02", "é", "a b", "print\\(.*DEBUG", "(?:a|b)", "x" * 300, "日本"]  # fmt: skip
_CLEAN_KEYS = ["id", "title", "owner", "contains", "path", "paths", "pattern", "regex", "é"]
_KEYS = ["id", "title", "risk", "owner", "depends_on", "contains", "absent", "defines",
         "command", "path", "paths", "pattern", "regex", "match", "run", "timeout", "yes",
         "1", "null", "<<", "é", "a b", "x?", ""]  # fmt: skip


def _word(rng: random.Random) -> str:
    return rng.choice(_WORDS if rng.random() < 0.1 else _CLEAN)


def _key(rng: random.Random) -> str:
    return rng.choice(_KEYS if rng.random() < 0.1 else _CLEAN_KEYS)


def _scalar(rng: random.Random, word: str, flow: bool) -> str:
    style = rng.random()
    if style < 0.55:
        return word  # plain, whatever that makes of it
    if style < 0.75:
        return "'" + word.replace("'", "''") + "'"
    if style < 0.9:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if flow:
        return word
    return "|\n" + "".join(f"    {line}\n" for line in (word or "x").split("\n"))


def _value(rng: random.Random, depth: int, indent: int, flow: bool) -> str:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return _scalar(rng, _word(rng), flow)
    if flow or roll < 0.6:
        if rng.random() < 0.5:
            items = [_value(rng, depth + 1, indent, True) for _ in range(rng.randint(0, 3))]
            return "[" + ", ".join(items) + "]"
        pairs = [
            f"{_scalar(rng, _key(rng), True)}: {_value(rng, depth + 1, indent, True)}"
            for _ in range(rng.randint(0, 3))
        ]
        return "{" + ", ".join(pairs) + "}"
    pad = " " * (indent + 2)
    if roll < 0.8:
        return "".join(
            f"\n{pad}- {_value(rng, depth + 1, indent + 4, False)}"
            for _ in range(rng.randint(1, 3))
        )
    return "".join(
        f"\n{pad}{_scalar(rng, _key(rng), True)}: {_value(rng, depth + 1, indent + 2, False)}"
        for _ in range(rng.randint(1, 3))
    )


def _spec_text(rng: random.Random) -> str:
    lines = ["requirements:"]
    for i in range(rng.randint(1, 4)):
        lines.append(f"  - id: r{i}")
        if rng.random() < 0.5:
            lines.append(f"    title: {_scalar(rng, _word(rng), False)}")
        kind = rng.choice(["contains", "absent", "defines", "command"])
        if rng.random() < 0.4:
            lines.append(f"    {kind}: {_value(rng, 1, 4, True)}")
        else:
            lines.append(f"    {kind}:")
            for key in {_key(rng): 0 for _ in range(rng.randint(1, 3))}:
                lines.append(f"      {_scalar(rng, key, True)}: {_value(rng, 2, 6, False)}")
    return "\n".join(lines) + "\n"


def _mutate(rng: random.Random, text: str) -> str:
    pieces = [*":-?[]{},#&*!|>'\" \n\t", "\n  ", ": ", "- ", "&a ", "*a", "é", "\r\n", "<<: "]
    for _ in range(rng.randint(1, 3)):
        pos = rng.randrange(len(text) + 1)
        if rng.random() < 0.7:
            text = text[:pos] + rng.choice(pieces) + text[pos:]
        else:
            text = text[:pos] + text[pos + rng.randint(1, 4) :]
    return text


def test_all_readers_agree_on_generated_spec_files() -> None:
    rng = random.Random(2026)
    paths: dict[str, int] = {}
    for _ in range(300):
        text = _spec_text(rng)
        if rng.random() < 0.3:
            text = _mutate(rng, text)
        chosen = _assert_agree(text)
        paths[chosen] = paths.get(chosen, 0) + 1
    # The generator reaches every path, the event reader most of all.
    assert set(paths) >= {"events", "compose", "pure"}, paths
    assert paths["events"] >= 100, paths


def test_generated_spec_files_load_with_the_same_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    spec = tmp_path / "s.yaml"
    original = yamlload.parse_yaml

    def outcome(fast: bool) -> list[str]:
        monkeypatch.setattr(loader, "parse_yaml", lambda t: original(t, fast=fast))
        try:
            loaded = loader.load_spec([spec])
        except SpecError as exc:
            return [str(p) for p in exc.problems]
        return [repr(r) for r in loaded.requirements]

    for _ in range(60):
        text = _spec_text(rng)
        if rng.random() < 0.5:
            text = _mutate(rng, text)
        spec.write_text(text, encoding="utf-8")
        assert outcome(True) == outcome(False), text


@pytest.mark.parametrize("fast", [True, False])
def test_a_loaded_spec_leaves_no_cyclic_garbage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    """Everything a load builds is freed by reference counting: a reference cycle per
    requirement left thousands of objects to the cyclic GC, whose full passes then cost
    more than the libyaml parse itself."""
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "requirements:\n"
        + "".join(
            f"  - id: r{i}\n    title: t\n    contains: {{path: a.py, pattern: 'x{i}'}}\n"
            for i in range(40)
        ),
        encoding="utf-8",
    )
    original = yamlload.parse_yaml
    monkeypatch.setattr(loader, "parse_yaml", lambda t: original(t, fast=fast))
    assert len(loader.load_spec([spec]).requirements) == 40
    gc.collect()
    gc.disable()
    try:
        loader.load_spec([spec])
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "common",
    [
        {"id": "r1"},
        {"id": "r1", "title": "t"},
        {"id": "r1", "title": None},
        {"id": "r1", "title": ""},
        {"id": "r1", "title": 5},
        {"id": "r1", "title": ["x"]},
        {"id": "r1", "title": True},
        {"id": "r1", "risk": "high"},
        {"id": "r1", "owner": "src/"},
        {"id": "r1", "depends_on": ["a", "a"]},
    ],
)
def test_plain_common_fields_read_as_pydantic_reads_them(common: dict[str, Any]) -> None:
    plain = reqfields.plain_fields(common)
    try:
        fields = reqfields.RequirementFields.model_validate(common)
    except ValueError:
        assert plain is None
        return
    if plain is not None:
        assert type(plain.title) is type(fields.title)
        assert plain == (fields.id, fields.title, fields.risk, (), ())


@pytest.mark.parametrize("fast", [True, False])
def test_positions_are_plain_tuples_read_as_marks(fast: bool) -> None:
    """The tables hold exact ``(line, col)`` tuples, which the cyclic GC stops tracking
    (a large spec holds tens of thousands); ``mark``/``key_mark`` hand out :class:`Mark`."""
    doc = parse_yaml("requirements:\n  - id: a\n    contains: {path: x, pattern: y}\n", fast=fast)
    gc.collect()
    for table in (doc.marks, doc.key_marks):
        assert table and all(type(p) is tuple and not gc.is_tracked(p) for p in table.values())
    mark = doc.key_mark(("requirements", 0, "contains", "pattern"))
    assert isinstance(mark, yamlload.Mark) and (mark.line, mark.col) == (3, 25)
    assert doc.mark(("requirements", 0, "id")) == yamlload.Mark(2, 9)
