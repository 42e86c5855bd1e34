"""The MCP client on the SDK's 2.x Client: in-process servers and a stdio server under bwrap."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from chimera.integrations.hub import ConnectorHub
from chimera.integrations.kinds.mcp import McpConnector, mcp_tools
from chimera.integrations.loader import load_connectors
from chimera.integrations.mcp_client import McpConnection, object_schema
from chimera.integrations.model import ConnectorContext
from chimera.integrations.registry import ConnectorKindRegistry
from chimera.sandbox.bwrap import bwrap_available

from .conftest import SERVERS, declare, demo_server

DATA = Path(__file__).resolve().parents[2] / "data" / "integrations"


def paged_server(pages: int = 3) -> Any:
    """A low-level server listing two tools per page, ``next_cursor`` chaining the pages."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        page = int(getattr(params, "cursor", None) or 0)
        tools = [
            types.Tool(name=f"t{page}_{i}", description="", input_schema={"type": "object"})
            for i in range(2)
        ]
        return types.ListToolsResult(
            tools=tools, next_cursor=str(page + 1) if page + 1 < pages else None
        )

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    return Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)


def test_tools_are_listed_across_pages() -> None:
    conn = McpConnection(paged_server(3), label="paged")
    try:
        opened = mcp_tools(conn)
        assert [t.name for t in opened.tools] == ["t0_0", "t0_1", "t1_0", "t1_1", "t2_0", "t2_1"]
        assert opened.tools[3]().output == "t1_1"
    finally:
        conn.close()


def test_a_failing_tool_comes_back_as_an_error_result() -> None:
    server = demo_server()
    opened = mcp_tools(McpConnection(server, label="demo"))
    try:
        by_name = {t.name: t for t in opened.tools}
        assert by_name["read_page"].sends is False  # readOnlyHint
        assert by_name["post_message"].sends is True
        assert by_name["read_page"].parameters["required"] == ["url"]
        ok = by_name["post_message"](text="hi")
        assert ok.ok and ok.output == "sent" and server.sent == ["hi"]
        failed = by_name["broken"](x=3)
        assert not failed.ok and "broken" in failed.output
    finally:
        opened.close()
    # After close the connection is gone: a call is an error result, not an exception.
    dead = by_name["post_message"](text="again")
    assert not dead.ok


def test_schemas_are_read_defensively() -> None:
    assert object_schema(None) == {"type": "object", "properties": {}}
    assert object_schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert object_schema({"$schema": "x", "properties": [1]}) == {
        "type": "object",
        "properties": {},
    }


def test_the_hub_names_filters_and_closes(tmp_path: Path, registry: ConnectorKindRegistry) -> None:
    SERVERS["hub"] = demo_server()
    declare(
        tmp_path,
        "a.yaml",
        "connectors:\n  - name: web\n    inproc: {server: hub}\n    tools: {exclude: [broken]}\n"
        "  - name: gone\n    mcp: {command: /nonexistent/server}\n",
    )
    load = load_connectors(tmp_path, registry=registry)
    ctx = ConnectorContext(root=tmp_path, sandbox="scrubbed")
    with ConnectorHub(load.connectors, ctx) as hub:
        result = hub.tools()
        assert [t.name for t in result.tools] == ["web__read_page", "web__post_message"]
        described = result.tools[0].tool.description
        assert described.startswith("[connector web] <<<UNTRUSTED-DATA tool description")
        assert "Read a web page" in described
        assert len(result.problems) == 1
        assert result.problems[0].startswith("connector 'gone' (.chimera.d/connectors/a.yaml:5:5):")
        assert hub.tools() is result  # opened once


def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from chimera.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(MissingExtraError, match=r"pytest-chimera\[mcp\]"):
        McpConnection(object(), label="x").start()


needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not usable here")


@needs_bwrap
@pytest.mark.bwrap
def test_a_stdio_server_runs_under_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(DATA / "stdio_server.py", tmp_path / "server.py")
    (tmp_path / ".env").write_text("LLM_KEY=sk-in-dotenv-marker\n", encoding="utf-8")
    marker = "sk-parent-secret-marker-123"
    monkeypatch.setenv("OPENAI_API_KEY", marker)
    monkeypatch.setenv("DEMO_TOKEN", "demo-token-value")
    kind = McpConnector(command=sys.executable, args=("server.py",), env=("DEMO_TOKEN",))
    opened = kind.open(ConnectorContext(root=tmp_path, sandbox="bwrap", timeout_s=60))
    try:
        [probe] = opened.tools
        result = probe(marker=marker)
        assert result.ok, result.output
        seen = json.loads(result.output)
    finally:
        opened.close()
    assert seen["seen"] == []  # the LLM key is nowhere: not in its env, not in any /proc
    assert seen["pid"] < 10 and "1" in seen["pids"]  # its own pid namespace
    assert seen["token"] == "demo-token-value"  # its declared credential only
    assert seen["project_writable"] is False
    assert seen["dotenv"] == ""  # dotenv files are masked


@needs_bwrap
@pytest.mark.bwrap
def test_a_plain_child_would_see_the_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The control for the test above: without bubblewrap the parent's key is readable.
    shutil.copy(DATA / "stdio_server.py", tmp_path / "server.py")
    marker = "sk-parent-secret-marker-456"
    monkeypatch.setenv("OPENAI_API_KEY", marker)
    kind = McpConnector(command=sys.executable, args=("server.py",))
    opened = kind.open(ConnectorContext(root=tmp_path, sandbox="scrubbed", timeout_s=60))
    try:
        seen = json.loads(opened.tools[0](marker=marker).output)
    finally:
        opened.close()
    # The parent's /proc/PID/environ (its environment at exec, the LLM key included when
    # it was set then) is readable from a plain child: the hole bubblewrap closes.
    assert str(os.getpid()) in seen["pids"]


HELDOUT_SERVER = '''
import json
from pathlib import Path
from mcp.server.mcpserver import MCPServer

server = MCPServer("heldout-probe")


@server.tool()
def probe(marker: str) -> str:
    """What the server can read of the held-out folder."""
    try:
        text = Path("specs-heldout/hidden.yaml").read_text(encoding="utf-8")
    except OSError:
        text = ""
    try:
        names = sorted(p.name for p in Path("specs-heldout").iterdir())
    except OSError:
        names = []
    return json.dumps({"text": text, "names": names})


if __name__ == "__main__":
    server.run("stdio")
'''


def _read_heldout(root: Path, hidden: tuple[Path, ...]) -> dict[str, Any]:
    kind = McpConnector(command=sys.executable, args=("server.py",))
    opened = kind.open(ConnectorContext(root=root, sandbox="bwrap", timeout_s=60, hidden=hidden))
    try:
        result = opened.tools[0](marker="x")
        assert result.ok, result.output
        seen: dict[str, Any] = json.loads(result.output)
        return seen
    finally:
        opened.close()


@needs_bwrap
@pytest.mark.bwrap
def test_a_stdio_server_cannot_see_the_held_out_folder(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(HELDOUT_SERVER, encoding="utf-8")
    folder = tmp_path / "specs-heldout"
    folder.mkdir()
    (folder / "hidden.yaml").write_text("HELDOUT-CANARY-e5\n", encoding="utf-8")
    # The control: without the session's hidden paths the server reads it.
    assert _read_heldout(tmp_path, ())["text"] == "HELDOUT-CANARY-e5\n"
    seen = _read_heldout(tmp_path, (folder,))
    assert seen == {"text": "", "names": []}
