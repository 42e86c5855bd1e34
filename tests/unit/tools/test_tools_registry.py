"""ToolRegistry: model mistakes come back as ToolResult(ok=False), never as exceptions."""

from __future__ import annotations

from typing import Any

import pytest

from chimera.errors import PathEscapeError, ToolError
from chimera.protocols import Tool, ToolResult
from chimera.tools import ToolRegistry


class Echo:
    """A generated-style tool: all metadata live on the instance."""

    def __init__(self, name: str = "echo") -> None:
        self.name = name
        self.description = "Echo a message."
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {"message": {"type": "string"}, "times": {"type": "integer"}},
            "required": ["message"],
            "additionalProperties": False,
        }

    def __call__(self, **kwargs: Any) -> ToolResult:
        if kwargs["message"] == "refuse":
            raise ToolError("refused on purpose")
        if kwargs["message"] == "escape":
            raise PathEscapeError("path '../x' leaves the workspace")
        if kwargs["message"] == "oserror":
            raise FileNotFoundError(2, "No such file or directory", "missing.txt")
        if kwargs["message"] == "bug":
            raise RuntimeError("a real bug")
        return ToolResult(output=kwargs["message"] * kwargs.get("times", 1))


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(Echo())
    return reg


def test_metadata_and_schemas(registry: ToolRegistry) -> None:
    assert isinstance(Echo(), Tool)
    assert registry.names() == ["echo"]
    assert "echo" in registry
    assert len(registry) == 1
    assert registry.get("echo").name == "echo"
    [schema] = registry.schemas()
    assert schema["type"] == "function"
    assert schema["function"]["name"] == "echo"
    assert schema["function"]["description"] == "Echo a message."
    assert schema["function"]["parameters"]["required"] == ["message"]


def test_successful_calls(registry: ToolRegistry) -> None:
    assert registry.call("echo", '{"message": "hi", "times": 2}').output == "hihi"
    assert registry.call("echo", {"message": "ok"}).ok


@pytest.mark.parametrize(
    ("name", "arguments", "kind", "message"),
    [
        ("nope", "{}", "unknown_tool", "unknown tool 'nope'; available tools: echo"),
        ("echo", '{"message": ', "invalid_json", "not valid JSON"),
        ("echo", "[1, 2]", "invalid_arguments", "must be a JSON object"),
        ("echo", "{}", "invalid_arguments", "'message' is a required property"),
        ("echo", '{"message": 3}', "invalid_arguments", "message: 3 is not of type 'string'"),
        ("echo", '{"message": "a", "x": 1}', "invalid_arguments", "Additional properties"),
        ("echo", "", "invalid_arguments", "required property"),
        ("echo", '{"message": "refuse"}', "tool_error", "echo: refused on purpose"),
        ("echo", '{"message": "escape"}', "tool_error", "leaves the workspace"),
        ("echo", '{"message": "oserror"}', "tool_error", "No such file or directory"),
    ],
)
def test_mistakes_become_failed_results(
    registry: ToolRegistry, name: str, arguments: str, kind: str, message: str
) -> None:
    result = registry.call(name, arguments)
    assert not result.ok
    assert result.meta["error"] == kind
    assert message in result.output


def test_genuine_bugs_propagate(registry: ToolRegistry) -> None:
    with pytest.raises(RuntimeError):
        registry.call("echo", {"message": "bug"})


def test_get_unknown_raises(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError, match="unknown tool"):
        registry.get("nope")


def test_registration_is_checked(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError, match="already registered"):
        registry.register(Echo())
    bad = Echo("bad")
    bad.parameters = {"type": "array"}
    with pytest.raises(ToolError, match="type object"):
        registry.register(bad)
    broken = Echo("broken")
    broken.parameters = {"type": "object", "properties": {"x": {"type": "no-such-type"}}}
    with pytest.raises(ToolError, match="invalid parameters schema"):
        registry.register(broken)
    nameless = Echo("")
    with pytest.raises(ToolError, match="without a name"):
        registry.register(nameless)
