"""libyaml and the pure parser give the same values, marks and errors for spec files."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.errors import SpecError
from chimera.spec import loader, yamlload
from chimera.spec.yamlload import YamlDocument, parse_yaml

pytestmark = pytest.mark.skipif(
    getattr(yaml, "CSafeLoader", None) is None, reason="PyYAML without libyaml"
)

ROOT = Path(__file__).resolve().parents[3]

TEXTS = [
    "requirements:\n  - id: a\n    contains: {path: x, pattern: y}\n",
    "requirements:\n  - id: a\n    contains: {path: x, pattern: }\n",  # empty flow value
    "requirements: ['a': , 'b']\n",
    "requirements: [a, ?b]\n",  # `?` in a flow collection
    "a: |#\n  x\n",  # block header then comment: only libyaml accepts it
    "a: |\n  x\n",
    "a: b\n\ta: c\n",  # a tab
    "a: 1\na: 2\n",  # duplicate key
    "a: [1, 2\n",  # unterminated flow sequence
    "a: 'x\n",  # unterminated quote
    "a: b: c\n",
    "- a\nb: c\n",
    "a: !!int abc\n",
    "a: !custom x\n",
    "a: &x [*x]\n",
    "a: *nope\n",
    "---\na: 1\n---\nb: 2\n",
    "a: \x07\n",  # control character
    "é: ü\nb: {€: 1, c: [ä, ö]}\n",
    "<<: {a: 1}\nb: 2\n",
    "",
    "# only a comment\n",
]


def _view(doc: YamlDocument) -> tuple[Any, ...]:
    issues = [(i.mark, i.message) for i in doc.issues]
    marks = (doc.marks, doc.key_marks)
    return (repr(doc.value), marks, issues, doc.broken, doc.empty, doc.syntax_error)


@pytest.mark.parametrize("text", TEXTS)
def test_both_parsers_agree(text: str) -> None:
    assert _view(parse_yaml(text)) == _view(parse_yaml(text, fast=False))


def test_both_parsers_agree_on_mutated_spec_files() -> None:
    seeds = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "specs").glob("*.yaml"))]
    pieces = [*":-?[]{},#&*!|>'\" \n\t", "\n  ", ": ", "- ", "&a ", "*a", "é", "\r\n"]
    rng = random.Random(17)
    for _ in range(120):
        text = rng.choice(seeds)[:1500]
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(text) + 1)
            if rng.random() < 0.7:
                text = text[:pos] + rng.choice(pieces) + text[pos:]
            else:
                text = text[:pos] + text[pos + rng.randint(1, 4) :]
        assert _view(parse_yaml(text)) == _view(parse_yaml(text, fast=False)), text


def test_a_plain_spec_takes_the_libyaml_path(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[str] = []
    original = yamlload._parse_with

    def spy(loader_class: type[Any], text: str, **kwargs: Any) -> YamlDocument | None:
        used.append(loader_class.__name__)
        return original(loader_class, text, **kwargs)

    monkeypatch.setattr(yamlload, "_parse_with", spy)
    parse_yaml((ROOT / "specs" / "architecture.yaml").read_text(encoding="utf-8"))
    assert used == ["CSafeLoader"]


@pytest.mark.parametrize(
    "text",
    [
        "requirements:\n  - id: a\n    contains: {path: x, pattern: y}\n  - id: a\n"
        "    absent: {path: x, pattern: z}\n",
        "requirements:\n  - id: a\n    contains: {path: x, patern: y}\n",
        "requirements:\n  - id: a\n    contains: [1, 2\n",
        "requirements:\n  - id: b\n    contains:\n      path: x\n      path: y\n      pattern: q\n",
        "requirements:\n  - id: c\n    contains: {path: x, pattern: '(' }\n",
    ],
)
def test_load_spec_reports_the_same_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(text, encoding="utf-8")

    def problems() -> list[str]:
        with pytest.raises(SpecError) as info:
            loader.load_spec([spec])
        return [p.render() if hasattr(p, "render") else str(p) for p in info.value.problems]

    fast = problems()
    original = yamlload.parse_yaml
    monkeypatch.setattr(loader, "parse_yaml", lambda t: original(t, fast=False))
    assert problems() == fast
    assert fast
