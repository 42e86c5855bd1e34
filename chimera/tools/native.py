"""The native tools, with the names agents and models are used to.

``read_file``, ``write_file``, ``edit_file``, ``list_dir``, ``search`` and ``run_command``
(the set mini-swe-agent, SWE-agent and OpenHands converge on). Every path goes through
:meth:`chimera.tools.workspace.Workspace.resolve`; ``run_command`` goes through the
:class:`chimera.runner.CommandRunner` it is given — the :class:`chimera.sandbox.Sandbox` in an
autonomous run. Tools raise :class:`chimera.errors.ToolError` for refusals; the registry turns
those into ``ToolResult(ok=False)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chimera.errors import RunnerError, SandboxError, ToolError
from chimera.protocols import ToolResult
from chimera.runner import CommandRunner
from chimera.tools.file_tools import EditFile, ListDir, ReadFile, Search, WriteFile
from chimera.tools.native_base import DEFAULT_OUTPUT_LIMIT, MAX_READ_BYTES, NativeTool
from chimera.tools.registry import ToolRegistry
from chimera.tools.workspace import Workspace


class RunCommand(NativeTool):
    def __init__(
        self,
        workspace: Workspace,
        output_limit: int,
        runner: CommandRunner,
        command_timeout: float,
    ) -> None:
        super().__init__(workspace, output_limit)
        self.runner = runner
        self.command_timeout = command_timeout
        self.name = "run_command"
        self.description = (
            "Run a shell command in the workspace (sandboxed: no network). Returns the exit "
            f"code and combined output (long output is truncated). Timeout at most "
            f"{command_timeout:.0f}s."
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Shell command line."},
                "cwd": {"type": "string", "description": "Folder relative to the root."},
                "timeout": {"type": "number", "exclusiveMinimum": 0},
            },
            "required": ["command"],
            "additionalProperties": False,
        }

    def __call__(self, **kwargs: Any) -> ToolResult:
        command = kwargs["command"]
        if not command.strip():
            raise ToolError("command is empty")
        named = _names_hidden(command, self.workspace)
        if named:
            # The sandbox masks held-out paths anyway; naming one is refused before it runs.
            raise ToolError(f"the command names {named}, which is held out; tools may not touch it")
        cwd = self.workspace.resolve(kwargs.get("cwd") or ".")
        if not cwd.is_dir():
            raise ToolError(f"cwd {kwargs.get('cwd')} is not a folder")
        timeout = min(float(kwargs.get("timeout") or self.command_timeout), self.command_timeout)
        try:
            result = self.runner.run(
                command, cwd=cwd, timeout=timeout, output_limit=self.output_limit
            )
        except (RunnerError, SandboxError) as exc:
            raise ToolError(str(exc)) from exc
        if result.timed_out:
            status = f"timed out after {timeout:g}s (the command and its children were killed)"
        else:
            status = f"exit code {result.exit_code} ({result.duration_s:.1f}s)"
        output = result.output if result.output.strip() else "(no output)"
        return ToolResult(
            output=f"{status}\n{output}",
            ok=result.ok,
            meta={
                "exit_code": result.exit_code,
                "timed_out": result.timed_out,
                "truncated": result.truncated,
                "duration_s": round(result.duration_s, 3),
                "mode": result.mode,
            },
        )


def _names_hidden(command: str, workspace: Workspace) -> str:
    """The first hidden path ``command`` names (by its path from the root or its folder
    name), or ``""``."""
    for path in workspace.hidden:
        names = [path.name]
        if path.is_relative_to(workspace.root):
            names.append(path.relative_to(workspace.root).as_posix())
        for name in names:
            if name and name in command:
                return name
    return ""


def native_tools(
    workspace: Path,
    runner: CommandRunner,
    *,
    command_timeout: float = 120.0,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    hidden: Sequence[Path] = (),
) -> ToolRegistry:
    """A registry holding the six native tools over ``workspace``.

    Args:
        workspace: the root every path is confined to.
        runner: runs ``run_command`` (pass the run's :class:`chimera.sandbox.Sandbox`).
        command_timeout: the longest a command may run, in seconds (the model may ask less).
        output_limit: characters (bytes, for command output) returned per call.
        hidden: paths no tool reads, lists, searches or writes, and no command may name
            (held-out requirements; see :class:`Workspace`).
    """
    ws = Workspace(workspace, hidden=hidden)
    registry = ToolRegistry()
    for tool in (
        ReadFile(ws, output_limit),
        WriteFile(ws, output_limit),
        EditFile(ws, output_limit),
        ListDir(ws, output_limit),
        Search(ws, output_limit),
        RunCommand(ws, output_limit, runner, command_timeout),
    ):
        registry.register(tool)
    return registry


__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "MAX_READ_BYTES",
    "EditFile",
    "ListDir",
    "ReadFile",
    "RunCommand",
    "Search",
    "WriteFile",
    "native_tools",
]
