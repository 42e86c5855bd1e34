"""The ``mcp`` kind: an MCP server over stdio (under bubblewrap) or Streamable HTTP.

::

    - name: docs
      mcp:
        command: python            # stdio: the server runs under bubblewrap, with network
        args: [tools/docs_server.py]
        env: [DOCS_TOKEN]          # variables passed in (names only; values at start)
    - name: tracker
      mcp:
        url: https://tracker.example/mcp
        headers: {Authorization: TRACKER_AUTH}   # header -> variable holding its value

Each server tool becomes a :class:`McpTool`; a call that fails on the server (``is_error``),
times out or finds the server dead returns ``ToolResult(ok=False)`` with the text, for the
model to read, never an exception.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from chimera.errors import ConnectorError
from chimera.integrations.mcp_client import McpConnection, RemoteTool
from chimera.integrations.model import ConnectorContext, ConnectorKind, Egress, OpenConnector
from chimera.protocols import ToolResult

__all__ = ["McpConnector", "McpTool", "mcp_tools"]


class McpTool:
    """One MCP server tool as a Chimera tool (metadata as instance attributes).

    Attributes:
        sends: whether a call carries data out (``egress``; ``auto``: not ``readOnlyHint``).
    """

    def __init__(self, connection: McpConnection, remote: RemoteTool, *, egress: Egress) -> None:
        self.connection = connection
        self.remote = remote
        self.name: str = remote.name
        self.description: str = remote.description or f"MCP tool {remote.name}"
        self.parameters: dict[str, Any] = remote.input_schema
        self.sends: bool = egress == "send" or (egress == "auto" and remote.read_only is not True)

    def __call__(self, **kwargs: Any) -> ToolResult:
        outcome = self.connection.call(self.remote.name, kwargs)
        meta: dict[str, Any] = {"connector_tool": self.remote.name}
        if outcome.structured is not None:
            meta["structured"] = outcome.structured
        if outcome.is_error:
            return ToolResult(output=outcome.text or "the tool failed", ok=False, meta=meta)
        return ToolResult(output=outcome.text, ok=True, meta=meta)


def mcp_tools(connection: McpConnection, *, egress: Egress = "auto") -> OpenConnector:
    """Start ``connection`` and wrap its tools (the in-process and stdio paths share this).

    Raises:
        ConnectorError: the server cannot start or list its tools.
    """
    connection.start()
    try:
        tools = [McpTool(connection, r, egress=egress) for r in connection.list_tools()]
    except ConnectorError:
        connection.close()
        raise
    return OpenConnector(tools=list(tools), close=connection.close)


class McpConnector(ConnectorKind):
    """An MCP server: ``command`` (+ ``args``, ``env``) for stdio, or ``url`` (+ ``headers``)."""

    kind_name = "mcp"

    command: str | None = Field(default=None, min_length=1)
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    url: str | None = Field(default=None, pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(default=60.0, gt=0, le=3600)

    @model_validator(mode="after")
    def _one_transport(self) -> McpConnector:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' (a stdio server) or 'url'")
        if self.url is not None and (self.args or self.env):
            raise ValueError("'args' and 'env' belong to a stdio server ('command')")
        if self.command is not None and self.headers:
            raise ValueError("'headers' belong to an HTTP server ('url')")
        return self

    def credentials(self) -> tuple[str, ...]:
        return (*self.env, *self.headers.values())

    def describe(self) -> str:
        if self.url is not None:
            return f"MCP over HTTP to {self.url} (leaves the machine unless local)"
        shown = " ".join([str(self.command), *self.args])
        return f"MCP stdio server `{shown}` (under bubblewrap, with network)"

    def open(self, ctx: ConnectorContext) -> OpenConnector:
        from chimera.integrations.server_sandbox import server_command

        env = ctx.env()
        if self.url is not None:
            missing = [v for v in self.headers.values() if v not in env]
            if missing:
                raise ConnectorError(f"header credential(s) not set: {', '.join(missing)}")
            headers = {h: env[v] for h, v in self.headers.items()}
            connection = McpConnection(self.url, headers=headers, timeout_s=self.timeout_s)
        else:
            argv, environment = server_command(
                [str(self.command), *self.args],
                root=ctx.root,
                env_names=self.env,
                environ=env,
                mode=ctx.sandbox,
                hidden=ctx.hidden,
            )
            connection = McpConnection(
                argv=argv, env=environment, cwd=ctx.root, timeout_s=self.timeout_s
            )
        return mcp_tools(connection)
