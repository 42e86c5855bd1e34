"""ToolRegistry: the agent's tools by name, with argument validation that never raises.

A model's mistakes are data, not crashes: an unknown tool name, arguments that are not JSON,
arguments that break the tool's JSON Schema, and a tool's own refusal (:class:`ToolError`,
including path escapes) all come back as ``ToolResult(ok=False, output=<one clear
message>)`` for the agent loop to feed back. Only genuine bugs (an exception that is not a
ToolError or an OS error) propagate.

Schemas are checked with the ``jsonschema`` library (imported on first use); tool metadata are
read from instance attributes (:class:`chimera.protocols.Tool`), so generated tools (MCP,
OpenAPI) register like native ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from chimera.errors import MissingExtraError, ToolError
from chimera.protocols import Tool, ToolResult, ToolSchema

_MAX_ERRORS_SHOWN = 5


class ToolRegistry:
    """A name → tool table that validates and dispatches calls.

    Raises (``register`` only):
        ToolError: a tool's name is empty or already registered, or its ``parameters`` is
            not a JSON Schema object.
    """

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, Any] = {}

    def register(self, tool: Tool) -> Tool:
        """Add ``tool``; returns it (so it can be used as a decorator on instances)."""
        name = getattr(tool, "name", "")
        if not isinstance(name, str) or not name:
            raise ToolError(f"cannot register a tool without a name: {tool!r}")
        if name in self._tools:
            raise ToolError(f"a tool named {name!r} is already registered")
        params = getattr(tool, "parameters", None)
        if not isinstance(params, dict) or params.get("type", "object") != "object":
            raise ToolError(f"tool {name!r}: parameters must be a JSON Schema of type object")
        validator_cls = _jsonschema().validators.validator_for(params)
        try:
            validator_cls.check_schema(params)
        except _jsonschema().exceptions.SchemaError as exc:
            raise ToolError(f"tool {name!r}: invalid parameters schema: {exc.message}") from exc
        self._tools[name] = tool
        self._validators[name] = validator_cls(params)
        return tool

    def get(self, name: str) -> Tool:
        """The tool called ``name``.

        Raises:
            ToolError: no such tool.
        """
        try:
            return self._tools[name]
        except KeyError:
            raise ToolError(self._unknown(name)) from None

    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def schemas(self) -> list[ToolSchema]:
        """Every tool in OpenAI function-calling format (``{"type": "function", ...}``)."""
        return [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in self._tools.values()
        ]

    def _unknown(self, name: str) -> str:
        known = ", ".join(self._tools) or "none"
        return f"unknown tool {name!r}; available tools: {known}"

    def call(self, name: str, arguments: str | Mapping[str, Any]) -> ToolResult:
        """Validate ``arguments`` (JSON text or a mapping) and call tool ``name``.

        Returns:
            The tool's result; on any model-side mistake a ``ToolResult(ok=False)`` whose
            output says what was wrong and ``meta["error"]`` one of ``unknown_tool``,
            ``invalid_json``, ``invalid_arguments``, ``tool_error``.
        """
        tool = self._tools.get(name)
        if tool is None:
            return _failure(self._unknown(name), "unknown_tool", name)
        if isinstance(arguments, str):
            text = arguments.strip()
            try:
                parsed: Any = json.loads(text) if text else {}
            except json.JSONDecodeError as exc:
                return _failure(
                    f"arguments for {name!r} are not valid JSON: {exc.msg} "
                    f"(line {exc.lineno}, column {exc.colno})",
                    "invalid_json",
                    name,
                )
        else:
            parsed = dict(arguments)
        if not isinstance(parsed, dict):
            return _failure(
                f"arguments for {name!r} must be a JSON object, got {type(parsed).__name__}",
                "invalid_arguments",
                name,
            )
        errors = sorted(self._validators[name].iter_errors(parsed), key=lambda e: list(e.path))
        if errors:
            shown = "; ".join(_describe_error(e) for e in errors[:_MAX_ERRORS_SHOWN])
            more = len(errors) - _MAX_ERRORS_SHOWN
            suffix = f" (and {more} more)" if more > 0 else ""
            return _failure(
                f"invalid arguments for {name!r}: {shown}{suffix}", "invalid_arguments", name
            )
        try:
            return tool(**parsed)
        except ToolError as exc:
            return _failure(f"{name}: {exc}", "tool_error", name)
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            return _failure(f"{name}: {exc.strerror or exc}{where}", "tool_error", name)


def _failure(message: str, kind: str, tool: str) -> ToolResult:
    return ToolResult(output=message, ok=False, meta={"error": kind, "tool": tool})


def _describe_error(error: Any) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else str(error.message)


def _jsonschema() -> Any:
    # jsonschema costs tens of milliseconds to import; only agent runs need it.
    try:
        import jsonschema
        import jsonschema.validators
    except ImportError as exc:
        raise MissingExtraError("validating tool arguments", "agent") from exc
    return jsonschema
