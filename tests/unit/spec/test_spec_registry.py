"""Kind registration through pluggy: built-ins, a third-party kind, entry points, clashes."""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path
from typing import Any, ClassVar

import pluggy
import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator

from chimera.errors import PluginError, SpecError
from chimera.spec.hookspecs import PROJECT_NAME, hookimpl
from chimera.spec.kinds import Absent, Command, Contains, Defines
from chimera.spec.kinds.fields import RelPath
from chimera.spec.loader import load_spec, load_spec_files
from chimera.spec.model import Check, CheckOutcome, Status
from chimera.spec.registry import BuiltinKinds, KindRegistry, get_registry


class FileExists(Check):
    """A file exists under the root (a third-party kind, as a plugin would ship it)."""

    kind_name: ClassVar[str] = "file_exists"

    path: RelPath = Field(description="File that must exist, relative to the root.")
    min_bytes: int = Field(default=0, ge=0, description="Smallest acceptable size.")

    def check(self, ctx: Any) -> CheckOutcome:
        target = Path(ctx.root) / self.path
        if target.is_file() and target.stat().st_size >= self.min_bytes:
            return CheckOutcome(Status.PASSED, f"{self.path} exists")
        return CheckOutcome(Status.FAILED, f"{self.path} is missing or too small")


class FileExistsPlugin:
    @hookimpl
    def chimera_requirement_kinds(self) -> list[type[Check]]:
        return [FileExists]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_builtins_arrive_only_through_the_hook() -> None:
    registry = KindRegistry.create(entry_points=False)
    assert dict(registry.kinds) == {
        "defines": Defines,
        "contains": Contains,
        "absent": Absent,
        "command": Command,
    }
    pm = registry.plugin_manager
    assert pm is not None and pm.project_name == PROJECT_NAME
    [impl] = pm.hook.chimera_requirement_kinds.get_hookimpls()
    assert isinstance(impl.plugin, BuiltinKinds)
    # Without the built-in plugin there is nothing: no kind is wired in any other way.
    assert dict(KindRegistry.create(entry_points=False, builtins=False).kinds) == {}


def test_registry_is_read_only_and_answers_lookups() -> None:
    registry = KindRegistry.create(entry_points=False)
    assert registry.get("contains") is Contains
    assert registry.get("nope") is None
    assert "absent" in registry and "nope" not in registry
    assert registry.names == ("defines", "contains", "absent", "command")
    with pytest.raises(TypeError):
        registry.kinds["x"] = Contains  # type: ignore[index]


def test_default_registry_is_cached() -> None:
    assert get_registry() is get_registry()
    assert {"defines", "contains", "absent", "command"} <= set(get_registry().names)


def test_third_party_kind_loads_and_validates_from_yaml(root: Path) -> None:
    registry = KindRegistry.create(plugins=[FileExistsPlugin()], entry_points=False)
    assert registry.names[-1] == "file_exists"
    (root / "s.yaml").write_text(
        textwrap.dedent(
            """\
            requirements:
              - id: license
                file_exists: {path: LICENSE, min_bytes: 10}
              - id: readme
                depends_on: license
                contains: {path: README.md, pattern: Quickstart}
            """
        ),
        encoding="utf-8",
    )
    spec = load_spec("s.yaml", registry=registry)
    first = spec.requirements[0]
    assert isinstance(first.check, FileExists)
    assert first.kind == "file_exists" and first.check.min_bytes == 10

    # The kind really works through its own check().
    (root / "LICENSE").write_text("MIT License, a long enough text\n", encoding="utf-8")
    outcome = first.check.check(types.SimpleNamespace(root=root))
    assert outcome.status is Status.PASSED

    # Without the plugin the same file is invalid, with a suggestion for the unknown key.
    with pytest.raises(SpecError) as info:
        load_spec("s.yaml", registry=KindRegistry.create(entry_points=False))
    assert [str(p) for p in info.value.problems] == [
        "s.yaml:3:5: unknown check kind 'file_exists' (installed kinds: defines, contains, "
        "absent, command); is the plugin that provides it installed?"
    ]


def test_third_party_kind_problems_map_to_yaml_nodes(root: Path) -> None:
    registry = KindRegistry.create(plugins=[FileExistsPlugin()], entry_points=False)
    (root / "s.yaml").write_text(
        "requirements:\n"
        "  - id: a\n"
        "    file_exists: {pth: LICENSE}\n"
        "  - id: b\n"
        "    file_exists: {path: 'a\\b', min_bytes: -1}\n",
        encoding="utf-8",
    )
    loaded = load_spec_files(["s.yaml"], registry=registry)
    assert [str(p) for p in loaded.all_problems()] == [
        "s.yaml:3:19: unknown field 'pth' in 'file_exists'; did you mean 'path'?",
        "s.yaml:5:25: file_exists.path: backslash in 'a\\\\b': paths and globs use '/' "
        "(gitignore syntax) on every OS",
        "s.yaml:5:43: file_exists.min_bytes: Input should be greater than or equal to 0, got -1",
    ]


def test_plugin_as_a_module_object() -> None:
    module = types.ModuleType("chimera_test_kinds_module")

    @hookimpl
    def chimera_requirement_kinds() -> list[type[Check]]:
        return [FileExists]

    module.chimera_requirement_kinds = chimera_requirement_kinds  # type: ignore[attr-defined]
    registry = KindRegistry.create(plugins=[module], entry_points=False)
    assert registry.get("file_exists") is FileExists


def _install_distribution(site: Path, module_name: str, body: str) -> None:
    """A real installed distribution: a module plus dist-info with a 'chimera' entry point."""
    (site / f"{module_name}.py").write_text(textwrap.dedent(body), encoding="utf-8")
    info = site / f"{module_name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {module_name}\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[chimera]\n{module_name} = {module_name}\n", encoding="utf-8"
    )


PLUGIN_MODULE = """
from typing import ClassVar

from chimera.spec.hookspecs import hookimpl
from chimera.spec.model import Check


class Changelog(Check):
    kind_name: ClassVar[str] = "changelog_entry"
    version: str


@hookimpl
def chimera_requirement_kinds():
    return [Changelog]
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    return directory


def _module_name(tmp_path: Path, stem: str) -> str:
    # Unique per test: sys.modules outlives a test, so names are never reused.
    return f"{stem}_{abs(hash(tmp_path)) % 10**8}"


def test_entry_point_plugins_are_loaded(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _module_name(tmp_path, "chimera_changelog_kind")
    _install_distribution(site, name, PLUGIN_MODULE)
    monkeypatch.delitem(sys.modules, name, raising=False)

    with_eps = KindRegistry.create(entry_points=True)
    kind = with_eps.get("changelog_entry")
    assert kind is not None and kind.__module__ == name
    assert with_eps.plugin_manager is not None
    assert with_eps.plugin_manager.get_plugin(name) is sys.modules[name]

    assert KindRegistry.create(entry_points=False).get("changelog_entry") is None

    # The same module both installed and passed explicitly is registered once.
    again = KindRegistry.create(plugins=[sys.modules[name]], entry_points=True)
    assert again.get("changelog_entry") is kind


def test_broken_entry_point_is_a_plugin_error(site: Path, tmp_path: Path) -> None:
    name = _module_name(tmp_path, "chimera_broken_kind")
    _install_distribution(site, name, "raise RuntimeError('boom at import')\n")
    with pytest.raises(PluginError) as info:
        KindRegistry.create(entry_points=True)
    assert "'chimera' entry-point group" in str(info.value)
    assert "boom at import" in str(info.value)


def test_two_kinds_with_one_name_is_a_clear_error() -> None:
    class OtherFileExists(Check):
        kind_name: ClassVar[str] = "file_exists"

    class Other:
        @hookimpl
        def chimera_requirement_kinds(self) -> list[type[Check]]:
            return [OtherFileExists]

    with pytest.raises(PluginError) as info:
        KindRegistry.create(plugins=[FileExistsPlugin(), Other()], entry_points=False)
    message = str(info.value)
    assert message.startswith("requirement kind 'file_exists' is registered twice: ")
    assert "FileExists by plugin" in message and "OtherFileExists by plugin" in message


def test_a_plugin_cannot_take_a_builtin_name() -> None:
    class MyContains(Check):
        kind_name: ClassVar[str] = "contains"

    class Shadow:
        @hookimpl
        def chimera_requirement_kinds(self) -> list[type[Check]]:
            return [MyContains]

    with pytest.raises(
        PluginError,
        match=r"'contains' is registered twice: .*Contains by "
        r"plugin 'chimera.builtin_kinds' and .*MyContains",
    ):
        KindRegistry.create(plugins=[Shadow()], entry_points=False)


class _Returns:
    def __init__(self, value: object) -> None:
        self.value = value

    @hookimpl
    def chimera_requirement_kinds(self) -> object:
        return self.value


class NoName(Check):
    pass


class BadName(Check):
    kind_name: ClassVar[str] = "has space"


class CommonName(Check):
    kind_name: ClassVar[str] = "owner"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (FileExists, "must return a list of Check subclasses, got ModelMetaclass"),
        ([str], "is not a subclass of chimera.spec.model.Check"),
        ([NoName], "NoName.kind_name must be an identifier-like string"),
        ([BadName], "got 'has space'"),
        ([CommonName], "takes the name 'owner', which is a common requirement field"),
    ],
)
def test_invalid_hook_results_are_plugin_errors(value: object, expected: str) -> None:
    with pytest.raises(PluginError, match="plugin .*" + expected.replace("(", r"\(")):
        KindRegistry.create(plugins=[_Returns(value)], entry_points=False)


def test_a_failing_hook_is_a_plugin_error() -> None:
    class Crashes:
        @hookimpl
        def chimera_requirement_kinds(self) -> list[type[Check]]:
            raise ValueError("cannot list kinds")

    with pytest.raises(PluginError, match="failed in chimera_requirement_kinds: ValueError"):
        KindRegistry.create(plugins=[Crashes()], entry_points=False)


def test_hookimpl_with_unknown_arguments_is_a_plugin_error() -> None:
    class WrongSignature:
        @hookimpl
        def chimera_requirement_kinds(self, config: object) -> list[type[Check]]:
            return []

    with pytest.raises(PluginError, match="invalid chimera plugin"):
        KindRegistry.create(plugins=[WrongSignature()], entry_points=False)


def test_unknown_hook_name_is_a_plugin_error() -> None:
    class Typo:
        @hookimpl
        def chimera_requirement_kind(self) -> list[type[Check]]:
            return []

    with pytest.raises(PluginError, match="chimera_requirement_kind"):
        KindRegistry.create(plugins=[Typo()], entry_points=False)


def test_a_kind_validator_that_crashes_is_a_problem_not_a_traceback(root: Path) -> None:
    class Fragile(Check):
        kind_name: ClassVar[str] = "fragile"
        value: str

        @field_validator("value")
        @classmethod
        def _explode(cls, value: str) -> str:
            raise KeyError(value)

    class Plugin:
        @hookimpl
        def chimera_requirement_kinds(self) -> list[type[Check]]:
            return [Fragile]

    registry = KindRegistry.create(plugins=[Plugin()], entry_points=False)
    (root / "s.yaml").write_text(
        "requirements:\n  - id: a\n    fragile: {value: x}\n", encoding="utf-8"
    )
    [problem] = load_spec_files(["s.yaml"], registry=registry).all_problems()
    assert str(problem) == ("s.yaml:3:14: 'fragile': the kind's validation failed: KeyError: 'x'")


def test_hookspec_marker_is_pluggys() -> None:
    assert isinstance(hookimpl, pluggy.HookimplMarker)
    assert hookimpl.project_name == PROJECT_NAME == "chimera"


class _Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")
    depth: int = 1
    files: list[str] = Field(default_factory=list)


class Nested(Check):
    kind_name: ClassVar[str] = "nested"
    limits: _Limits | None = None
    per_file: dict[str, _Limits] = Field(default_factory=dict)


def test_unknown_fields_in_nested_models_get_suggestions(root: Path) -> None:
    class Plugin:
        @hookimpl
        def chimera_requirement_kinds(self) -> list[type[Check]]:
            return [Nested]

    registry = KindRegistry.create(plugins=[Plugin()], entry_points=False)
    (root / "s.yaml").write_text(
        "requirements:\n"
        "  - id: a\n"
        "    nested:\n"
        "      limits: {dept: 2}\n"
        "      per_file:\n"
        "        x.py: {depth: 1, filez: []}\n",
        encoding="utf-8",
    )
    assert [str(p) for p in load_spec_files(["s.yaml"], registry=registry).all_problems()] == [
        "s.yaml:4:16: unknown field 'dept' in 'nested.limits'; did you mean 'depth'?",
        "s.yaml:6:26: unknown field 'filez' in 'nested.per_file.x.py'; did you mean 'files'?",
    ]
