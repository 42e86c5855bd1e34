"""A stdio MCP server for the connector tests: reports what it can see of its host."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("stdio-probe")


@server.tool()
def probe(marker: str) -> str:
    """Where the marker shows up: this process's environment, or any /proc/*/environ."""
    seen = [name for name, value in os.environ.items() if marker in value]
    readable = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                data = (entry / "environ").read_bytes()
            except OSError:
                continue
            readable.append(entry.name)
            if marker.encode() in data:
                seen.append(f"/proc/{entry.name}/environ")
    try:
        Path("written-by-server").write_text("x", encoding="utf-8")
        project_writable = True
    except OSError:
        project_writable = False
    try:
        dotenv = Path(".env").read_text(encoding="utf-8")
    except OSError:
        dotenv = ""
    return json.dumps(
        {
            "pid": os.getpid(),
            "seen": seen,
            "pids": sorted(readable, key=int),
            "token": os.environ.get("DEMO_TOKEN"),
            "project_writable": project_writable,
            "dotenv": dotenv,
        }
    )


if __name__ == "__main__":
    server.run("stdio")
