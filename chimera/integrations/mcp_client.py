"""The one module that touches the ``mcp`` SDK (2.x): a blocking client over its ``Client``.

Chimera's tools are synchronous; an MCP connection is an async session that must outlive
single calls (a stdio server is one process for the whole run). :class:`McpConnection` runs
the SDK's high-level ``mcp.Client`` inside an anyio blocking portal (an event loop on a
thread of its own) and exposes three blocking calls: :meth:`~McpConnection.start`,
:meth:`~McpConnection.list_tools` (every page, following ``next_cursor``) and
:meth:`~McpConnection.call` (never raises: a tool's own error, a protocol ``MCPError``, a
timeout or a dead server all come back as ``is_error``, for the model to read).

The SDK's 2.x line renamed fields to snake case (``input_schema``, ``is_error``,
``next_cursor``, ``structured_content``) and raises ``MCPError``; servers in the wild still
send odd shapes, so results are read defensively (``getattr`` with defaults, a schema that is
not an object schema replaced by an empty one). Any SDK change lands here and nowhere else.
"""

from __future__ import annotations

import contextlib
import functools
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.errors import ConnectorError, MissingExtraError
from chimera.governance.redactor import cut_redacted as _cut

__all__ = ["CallOutcome", "McpConnection", "RemoteTool", "object_schema"]

MAX_PAGES = 100
"""A server whose listing never ends is cut here (a paginator must not hang a run)."""


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """A tool as the server lists it (``read_only``: its ``readOnlyHint``, if given)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool | None = None


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One call's answer: the text for the model, and whether it is an error."""

    text: str
    is_error: bool
    structured: Any = None


def object_schema(raw: Any) -> dict[str, Any]:
    """``raw`` as a JSON Schema of type object (an unusable schema becomes an empty one)."""
    if not isinstance(raw, Mapping):
        return {"type": "object", "properties": {}}
    schema = {k: v for k, v in raw.items() if k != "$schema"}
    if schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}
    schema["type"] = "object"
    if not isinstance(schema.get("properties", {}), Mapping):
        schema["properties"] = {}
    return schema


def _import_mcp() -> Any:
    try:
        # anyio (the SDK's own dependency) runs the client's event loop beside the caller's.
        import anyio  # noqa: F401 - imported here so its absence says which extra to install
        import mcp
    except ImportError as exc:
        raise MissingExtraError("MCP connectors", "mcp") from exc
    return mcp


def _content_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind == "resource":
        resource = getattr(block, "resource", None)
        text = getattr(resource, "text", None)
        uri = getattr(resource, "uri", "")
        return str(text) if text is not None else f"[resource {uri}]"
    if kind == "resource_link":
        return f"[resource link {getattr(block, 'uri', '')}]"
    mime = getattr(block, "mime_type", None) or getattr(block, "mimeType", "")
    return f"[{kind or 'content'} {mime}]".replace(" ]", "]")


def outcome_of(result: Any) -> CallOutcome:
    """A ``CallToolResult`` read defensively."""
    blocks = getattr(result, "content", None) or []
    texts = [_content_text(b) for b in blocks]
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(t.strip() for t in texts):
        texts = [json.dumps(structured, ensure_ascii=False, sort_keys=True, default=str)]
    return CallOutcome("\n".join(texts), bool(getattr(result, "is_error", False)), structured)


class McpConnection:
    """A live MCP connection with a blocking API.

    Args:
        server: what ``mcp.Client`` connects to: a Streamable HTTP URL, an in-process server
            (``mcp.server.mcpserver.MCPServer`` or a low-level ``Server``), or ``None`` with
            ``argv`` for a stdio server.
        argv: the stdio server's full command line (already wrapped in bubblewrap).
        env: the stdio server's environment.
        cwd: the stdio server's working directory.
        headers: HTTP headers of a URL connection (credentials, read when it starts).
        timeout_s: limit of one request, in seconds.

    Raises (``start``):
        ConnectorError: the server cannot be started or does not answer (one line, with the
            tail of a stdio server's stderr).
        MissingExtraError: the ``mcp`` extra is not installed.
    """

    def __init__(
        self,
        server: Any = None,
        *,
        argv: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 60.0,
        label: str = "mcp",
    ) -> None:
        if server is None and not argv:
            raise ConnectorError(f"{label}: an MCP connection needs a server or a command")
        self.server = server
        self.argv = list(argv)
        self.env = dict(env or {})
        self.cwd = cwd
        self.headers = dict(headers or {})
        self.timeout_s = timeout_s
        self.label = label
        self._stack: contextlib.ExitStack | None = None
        self._portal: Any = None
        self._client: Any = None
        self._errlog: Any = None
        self._closed = False

    def start(self) -> None:
        """Connect (idempotent)."""
        if self._client is not None:
            return
        if self._closed:
            raise ConnectorError(f"{self.label}: the connection is closed")
        mcp = _import_mcp()
        from anyio.from_thread import start_blocking_portal

        target = self.server
        if target is None:
            target = mcp.StdioServerParameters(
                command=self.argv[0], args=self.argv[1:], env=self.env, cwd=self.cwd
            )
        stack = contextlib.ExitStack()
        try:
            errlog = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - on the stack
            self._errlog = stack.enter_context(errlog)
            portal = stack.enter_context(start_blocking_portal())
            if self.argv:
                # The stdio server's stderr goes to this file (its tail explains a failure).
                target = _StdioWithLog(target, self._errlog)
            elif isinstance(target, str) and self.headers:
                target = _HttpWithHeaders(target, self.headers)
            client = mcp.Client(target, read_timeout_seconds=self.timeout_s)
            self._client = stack.enter_context(portal.wrap_async_context_manager(client))
        except MissingExtraError:
            stack.close()
            raise
        except Exception as exc:
            tail = self._stderr_tail()
            stack.close()
            self._client = None
            raise ConnectorError(f"{self.label}: cannot connect: {_failure(exc, tail)}") from exc
        self._stack, self._portal = stack, portal

    def _stderr_tail(self) -> str:
        """The last line the stdio server wrote to stderr (``""``: none, or not stdio)."""
        if self._errlog is None:
            return ""
        with contextlib.suppress(Exception):
            self._errlog.seek(0)
            lines = [ln for ln in self._errlog.read().splitlines() if ln.strip()]
            if lines:
                return _cut(lines[-1].strip(), 300)
        return ""

    def _run(self, make: Callable[[], Any]) -> Any:
        if self._client is None:
            self.start()
        import anyio

        async def bounded() -> Any:
            with anyio.fail_after(self.timeout_s):
                return await make()

        return self._portal.call(bounded)

    def list_tools(self) -> list[RemoteTool]:
        """Every tool, page by page (at most :data:`MAX_PAGES` pages).

        Raises:
            ConnectorError: the listing failed.
        """
        tools: list[RemoteTool] = []
        cursor: str | None = None
        try:
            for _ in range(MAX_PAGES):
                page = self._run(functools.partial(self._client.list_tools, cursor=cursor))
                for tool in getattr(page, "tools", None) or []:
                    hints = getattr(tool, "annotations", None)
                    tools.append(
                        RemoteTool(
                            name=str(getattr(tool, "name", "")),
                            description=str(getattr(tool, "description", "") or ""),
                            input_schema=object_schema(getattr(tool, "input_schema", None)),
                            read_only=getattr(hints, "read_only_hint", None),
                        )
                    )
                cursor = getattr(page, "next_cursor", None)
                if not cursor:
                    break
        except Exception as exc:
            raise ConnectorError(
                f"{self.label}: cannot list tools: {_failure(exc, self._stderr_tail())}"
            ) from exc
        return [t for t in tools if t.name]

    def call(self, name: str, arguments: Mapping[str, Any]) -> CallOutcome:
        """Call tool ``name``; every failure is an ``is_error`` outcome (never raises)."""
        try:
            result = self._run(lambda: self._client.call_tool(name, dict(arguments)))
        except TimeoutError:
            return CallOutcome(f"{self.label}: {name} timed out after {self.timeout_s:g}s", True)
        except Exception as exc:  # the boundary: a dead server or protocol error is data
            return CallOutcome(
                f"{self.label}: {name} failed: {_failure(exc, self._stderr_tail())}",
                True,
            )
        return outcome_of(result)

    def close(self) -> None:
        """Disconnect and stop the server (idempotent; errors on the way out are dropped)."""
        self._closed = True
        stack, self._stack, self._client, self._portal = self._stack, None, None, None
        if stack is not None:
            with contextlib.suppress(Exception):
                stack.close()


class _StdioWithLog:
    """A ``Transport`` that starts the SDK's stdio client with our stderr file."""

    def __init__(self, params: Any, errlog: Any) -> None:
        from mcp.client.stdio import stdio_client

        self._cm = stdio_client(params, errlog=errlog)

    async def __aenter__(self) -> Any:
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._cm.__aexit__(*exc)


class _HttpWithHeaders:
    """A Streamable HTTP ``Transport`` whose requests carry ``headers``."""

    def __init__(self, url: str, headers: Mapping[str, str]) -> None:
        self.url = url
        self.headers = dict(headers)
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Any:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http = await self._stack.enter_async_context(create_mcp_http_client(headers=self.headers))
        return await self._stack.enter_async_context(
            streamable_http_client(self.url, http_client=http)
        )

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stack.__aexit__(*exc)


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups: anyio's task groups wrap the one
    error that matters in ``ExceptionGroup: unhandled errors in a TaskGroup``."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _failure(exc: BaseException, server_said: str) -> str:
    """Why a call failed, the useful line first: what the server wrote to stderr (when it
    did), then the underlying errors (never the wrapping group's own message)."""
    causes = "; ".join(
        dict.fromkeys(f"{type(leaf).__name__}: {_first_line(leaf)}" for leaf in _leaves(exc))
    )
    return f"the server said: {server_said} ({causes})" if server_said else causes


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    if not text and isinstance(exc, BaseExceptionGroup):
        text = "; ".join(_first_line(e) for e in exc.exceptions)
    return _cut(text.splitlines()[0], 300) if text else "no detail"
