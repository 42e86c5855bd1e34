"""Declarations: one validation pass, every problem at file:line:col; kinds through pluggy."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.errors import PluginError
from chimera.integrations.hookspecs import hookimpl
from chimera.integrations.kinds import McpConnector, OpenApiConnector
from chimera.integrations.loader import load_connectors
from chimera.integrations.model import ConnectorKind
from chimera.integrations.names import TOOL_NAME, tool_name
from chimera.integrations.registry import ConnectorKindRegistry

from .conftest import InProcessMcp, declare


def test_builtin_kinds_come_through_the_hook() -> None:
    registry = ConnectorKindRegistry.create(entry_points=False)
    assert registry.kinds == {"mcp": McpConnector, "openapi": OpenApiConnector}


def test_a_plugin_kind_is_selected_by_its_key(
    tmp_path: Path, registry: ConnectorKindRegistry
) -> None:
    declare(tmp_path, "a.yaml", "connectors:\n  - name: local\n    inproc: {server: s1}\n")
    load = load_connectors(tmp_path, registry=registry)
    assert load.ok, load.problems
    [decl] = load.connectors
    assert isinstance(decl.kind, InProcessMcp)
    assert str(decl.location) == ".chimera.d/connectors/a.yaml:2:5"


def test_two_plugins_with_one_kind_name_are_both_named() -> None:
    class Again(ConnectorKind):
        kind_name = "mcp"

    class Clash:
        @hookimpl
        def chimera_connector_kinds(self) -> list[type[ConnectorKind]]:
            return [Again]

    with pytest.raises(PluginError, match=r"'mcp' is registered twice: .*McpConnector.*Again"):
        ConnectorKindRegistry.create(plugins=[Clash()], entry_points=False)


def test_a_kind_may_not_take_a_common_field_name() -> None:
    class Named(ConnectorKind):
        kind_name = "tools"

    class Bad:
        @hookimpl
        def chimera_connector_kinds(self) -> list[type[ConnectorKind]]:
            return [Named]

    with pytest.raises(PluginError, match="common declaration field"):
        ConnectorKindRegistry.create(plugins=[Bad()], entry_points=False)


BROKEN = """\
connectors:
  - name: Docs
    mcp: {command: python, url: http://x}
  - name: ok_one
    mcp: {command: python}
    openapi: {document: a.yaml, base_url: http://127.0.0.1:1}
  - name: pets
    openapi: {document: ../outside.yaml, base_url: ftp://nope, colour: red}
  - name: third
    slack: {channel: x}
  - name: fourth
    description: no kind at all
"""


def test_every_problem_is_reported_at_its_node(tmp_path: Path) -> None:
    declare(tmp_path, "bad.yaml", BROKEN)
    declare(tmp_path, "dup.yaml", "connectors:\n  - name: docs_ok\n    mcp: {command: a}\n")
    declare(tmp_path, "dup2.yaml", "connectors:\n- name: docs_ok\n  mcp: {command: b}\n")
    load = load_connectors(tmp_path, registry=ConnectorKindRegistry.create(entry_points=False))
    lines = [str(p) for p in load.problems]
    f = ".chimera.d/connectors/bad.yaml"
    assert any(ln.startswith(f"{f}:2:11: name:") and "not a connector name" in ln for ln in lines)
    assert any(
        ln.startswith(f"{f}:3:10: mcp:") and "exactly one of 'command'" in ln for ln in lines
    )
    assert (
        f"{f}:6:5: connector has 2 kinds ('mcp' at line 5, 'openapi' at line 6): keep exactly one"
        in lines
    )
    assert any(ln.startswith(f"{f}:8:64: unknown field 'openapi.colour'") for ln in lines)
    assert any(ln.startswith(f"{f}:8:52: openapi.base_url:") for ln in lines)
    assert any(ln.startswith(f"{f}:10:5: unknown field or connector kind 'slack'") for ln in lines)
    assert f"{f}:11:5: connector has no kind: add exactly one of mcp, openapi" in lines
    assert (
        ".chimera.d/connectors/dup2.yaml:2:3: duplicate connector name 'docs_ok' "
        "(first declared at .chimera.d/connectors/dup.yaml:2:5)"
    ) in lines
    assert [d.name for d in load.connectors] == ["docs_ok"]


def test_yaml_errors_keep_their_marks(tmp_path: Path) -> None:
    declare(tmp_path, "a.yaml", "connectors:\n  - name: a\n    name: b\n    mcp: {command: x}\n")
    declare(tmp_path, "b.yaml", "connectors: [\n")
    declare(tmp_path, "c.yaml", "")
    load = load_connectors(tmp_path, registry=ConnectorKindRegistry.create(entry_points=False))
    text = "\n".join(str(p) for p in load.problems)
    assert ".chimera.d/connectors/a.yaml:3:5: duplicate key 'name'" in text
    assert ".chimera.d/connectors/b.yaml:2:1: invalid YAML" in text
    assert ".chimera.d/connectors/c.yaml:1:1: empty file" in text


def test_declarations_are_read_from_the_commit_not_the_tree(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    declare(tmp_path, "a.yaml", "connectors:\n  - name: base\n    mcp: {command: x}\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
    # An agent writes a connector of its own into the tree: the base commit does not have it.
    declare(tmp_path, "a.yaml", "connectors:\n  - name: evil\n    mcp: {command: curl}\n")
    registry = ConnectorKindRegistry.create(entry_points=False)
    assert [
        d.name for d in load_connectors(tmp_path, rev="HEAD", registry=registry).connectors
    ] == ["base"]
    assert [d.name for d in load_connectors(tmp_path, registry=registry).connectors] == ["evil"]
    missing = load_connectors(tmp_path, rev="nope", registry=registry)
    assert "no commit 'nope'" in str(missing.problems[0])


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("search", "docs__search"),
        ("search.pages/v2", "docs__search_pages_v2"),
        ("...", "docs__tool"),
    ],
)
def test_tool_names_follow_the_strictest_rule(remote: str, expected: str) -> None:
    assert tool_name("docs", remote) == expected


def test_long_names_get_a_stable_hashed_suffix() -> None:
    a = tool_name("connector", "x" * 80 + "a")
    b = tool_name("connector", "x" * 80 + "b")
    assert len(a) == len(b) == 64 and a != b
    assert TOOL_NAME.match(a) and TOOL_NAME.match(b)
    assert a == tool_name("connector", "x" * 80 + "a")
