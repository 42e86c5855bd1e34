"""The spec file's JSON Schema: generated from the models, valid, and in step with the loader."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from pydantic import Field

from chimera.spec.hookspecs import hookimpl
from chimera.spec.loader import load_spec_files
from chimera.spec.model import Check
from chimera.spec.registry import KindRegistry
from chimera.spec.schema import SCHEMA_DIALECT, spec_json_schema

REPO = Path(__file__).resolve().parents[3]

DESIGN_EXAMPLE = r"""
requirements:
  - id: audit-log
    title: The audit log is an append-only JSONL writer
    risk: low
    defines: {path: chimera/governance/audit.py, symbol: AuditLog.append, kind: method}
  - id: no-eval
    absent: {pattern: '\beval\(', paths: ['chimera/**/*.py'], exclude: ['chimera/sandbox/**']}
  - id: quickstart-documented
    depends_on: [audit-log]
    owner: README.md
    contains: {path: README.md, pattern: 'pytest --chimera-spec specs/', regex: false}
  - id: strict-types
    command: {run: 'mypy --strict chimera', timeout: 600}
"""


def _repo_spec_files() -> list[Path]:
    found: list[Path] = []
    for pattern in ("specs/**/*.y*ml", "examples/**/specs/**/*.y*ml"):
        found.extend(p for p in sorted(REPO.glob(pattern)) if p.suffix in (".yaml", ".yml"))
    return found


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return spec_json_schema(KindRegistry.create(entry_points=False))


def test_schema_shape(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == SCHEMA_DIALECT == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object"
    assert schema["required"] == ["requirements"]
    assert schema["additionalProperties"] is False
    requirement = schema["$defs"]["Requirement"]
    assert schema["properties"]["requirements"]["items"] == {"$ref": "#/$defs/Requirement"}
    assert requirement["additionalProperties"] is False
    assert requirement["required"] == ["id"]
    assert requirement["oneOf"] == [
        {"required": ["defines"]},
        {"required": ["contains"]},
        {"required": ["absent"]},
        {"required": ["command"]},
    ]
    assert list(requirement["properties"]) == [
        "id",
        "title",
        "risk",
        "depends_on",
        "owner",
        "defines",
        "contains",
        "absent",
        "command",
    ]
    assert requirement["properties"]["contains"]["$ref"] == "#/$defs/Contains"
    json.dumps(schema)  # plain JSON all the way down


def test_every_property_has_a_description_for_editors(schema: dict[str, Any]) -> None:
    defs = schema["$defs"]
    for name in ("Requirement", "Defines", "Contains", "Absent", "Command"):
        assert defs[name].get("description"), name
        assert defs[name]["additionalProperties"] is False, name
        for prop, body in defs[name]["properties"].items():
            assert body.get("description"), f"{name}.{prop} has no description"
    assert defs["Risk"]["enum"] == ["low", "medium", "high"]
    assert defs["SymbolKind"]["enum"] == ["class", "function", "method", "variable", "any"]
    assert defs["MatchMode"]["enum"] == ["any", "all"]


def test_schema_is_generated_from_the_kind_models(schema: dict[str, Any]) -> None:
    """A field added to a kind model shows up without touching the schema module."""

    class FileExists(Check):
        """A file exists."""

        kind_name: ClassVar[str] = "file_exists"
        path: str = Field(description="The file.")
        min_bytes: int = Field(default=0, ge=0, description="Smallest size.")

    class Plugin:
        @hookimpl
        def chimera_requirement_kinds(self) -> list[type[Check]]:
            return [FileExists]

    extended = spec_json_schema(KindRegistry.create(plugins=[Plugin()], entry_points=False))
    requirement = extended["$defs"]["Requirement"]
    assert {"required": ["file_exists"]} in requirement["oneOf"]
    kind = extended["$defs"]["FileExists"]
    assert kind["properties"]["min_bytes"]["minimum"] == 0
    assert kind["required"] == ["path"]
    assert "file_exists" not in schema["$defs"]["Requirement"]["properties"]


def test_a_kind_class_named_requirement_does_not_clobber_the_requirement_def() -> None:
    class Requirement(Check):
        kind_name: ClassVar[str] = "requirement_doc"
        doc: str

    class Plugin:
        @hookimpl
        def chimera_requirement_kinds(self) -> list[type[Check]]:
            return [Requirement]

    schema = spec_json_schema(KindRegistry.create(plugins=[Plugin()], entry_points=False))
    item_ref = schema["properties"]["requirements"]["items"]["$ref"]
    item_def = schema["$defs"][item_ref.rsplit("/", 1)[1]]
    assert "oneOf" in item_def and "requirement_doc" in item_def["properties"]
    kind_ref = item_def["properties"]["requirement_doc"]["$ref"]
    assert schema["$defs"][kind_ref.rsplit("/", 1)[1]]["required"] == ["doc"]


# --------------------------------------------------------------------------- with jsonschema


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_design_example_is_valid(validator: Any) -> None:
    errors = list(validator.iter_errors(yaml.safe_load(DESIGN_EXAMPLE)))
    assert errors == []


@pytest.mark.parametrize(
    "spec_file",
    _repo_spec_files() or [None],
    ids=lambda p: p.relative_to(REPO).as_posix() if isinstance(p, Path) else "none",
)
def test_repository_spec_files_are_valid(validator: Any, spec_file: Path | None) -> None:
    if spec_file is None:
        pytest.skip("the repository has no spec files yet")
    document = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
    messages = [e.message for e in validator.iter_errors(document)]
    assert messages == [], spec_file


# Each case: (requirement YAML, loader accepts?, schema accepts?). The loader is stricter
# only where a per-file schema cannot follow (ids across files, cycles, blank strings).
CASES = [
    ("{id: a, command: {run: x}}", True, True),
    ("{id: a, depends_on: b, command: {run: x}}", False, True),  # unknown id: loader only
    ("{id: a, owner: [src/**], absent: {paths: ['**/*.py'], pattern: x}}", True, True),
    ("{id: a}", False, False),
    ("{id: a, command: {run: x}, absent: {path: a, pattern: y}}", False, False),
    ("{id: a, tittle: t, command: {run: x}}", False, False),
    ("{id: a, command: {run: x, qqq: 1}}", False, False),
    ("{id: a, risk: extreme, command: {run: x}}", False, False),
    ("{id: 'a b', command: {run: x}}", False, False),
    ("{command: {run: x}}", False, False),
    ("{id: a, contains: {path: 'a\\b', pattern: x}}", False, False),
    ("{id: a, owner: 'a\\b', command: {run: x}}", False, False),
    ("{id: a, absent: {paths: ['ok', 'a\\b'], pattern: x}}", False, False),
    ("{id: a, absent: {paths: [], pattern: x}}", False, False),
    ("{id: a, defines: {symbol: f, kind: klass, path: m.py}}", False, False),
    ("{id: a, contains: {path: R.md, pattern: x, match: all}}", True, True),
    ("{id: a, command: {run: x, timeout: 0}}", False, False),
    ("{id: a, command: 'ls'}", False, False),
]


@pytest.mark.parametrize(("requirement", "loader_ok", "schema_ok"), CASES)
def test_schema_and_loader_agree(
    validator: Any,
    tmp_path: Path,
    requirement: str,
    loader_ok: bool,
    schema_ok: bool,
) -> None:
    text = f"requirements:\n  - {requirement}\n"
    spec = tmp_path / "s.yaml"
    spec.write_text(text, encoding="utf-8")
    loaded = load_spec_files([spec], registry=KindRegistry.create(entry_points=False))
    assert loaded.ok is loader_ok, loaded.all_problems()
    assert validator.is_valid(yaml.safe_load(text)) is schema_ok


def test_top_level_rules_in_the_schema(validator: Any) -> None:
    assert not validator.is_valid({})
    assert not validator.is_valid({"requirements": [], "extra": 1})
    assert not validator.is_valid([])
    assert validator.is_valid({"requirements": []})


def test_schema_text_round_trips(schema: dict[str, Any]) -> None:
    text = json.dumps(schema, indent=2, sort_keys=True)
    assert json.loads(text) == schema
    assert textwrap.dedent(text) == text


@pytest.mark.parametrize(
    "spec_file",
    _repo_spec_files() or [None],
    ids=lambda p: p.relative_to(REPO).as_posix() if isinstance(p, Path) else "none",
)
def test_repository_spec_files_pass_the_loader_too(spec_file: Path | None) -> None:
    if spec_file is None:
        pytest.skip("the repository has no spec files yet")
    # Each directory is one unit (ids and depends_on are checked across its files).
    loaded = load_spec_files([spec_file.parent])
    assert loaded.all_problems() == []
