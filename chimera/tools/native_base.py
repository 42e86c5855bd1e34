"""What the native tools share: their limits (output characters, file size, search bounds),
the output cap and the base class holding the workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chimera.errors import ToolError
from chimera.runner import word_safe_head, word_safe_tail
from chimera.tools.workspace import Workspace

DEFAULT_OUTPUT_LIMIT = 20_000
"""Characters of tool output returned to the model."""


MAX_READ_BYTES = 1_000_000
"""Files larger than this are not read whole (``read_file`` refuses; ``search`` skips)."""


SEARCH_MAX_RESULTS = 200


SEARCH_FILE_TIMEOUT_S = 1.0


SEARCH_TOTAL_TIMEOUT_S = 20.0


LIST_MAX_ENTRIES = 1000


def cap_output(text: str, limit: int, hint: str = "") -> str:
    if len(text) <= limit:
        return text
    # Each cut falls on whitespace where it can: output is redacted after the cap, and a cut
    # through a token would keep a piece no redactor recognises (see word_safe_head).
    half = limit // 2
    head = text[:half] if text[half].isspace() else word_safe_head(text[:half])
    start = len(text) - (limit - half)
    tail = text[start:] if text[start - 1].isspace() else word_safe_tail(text[start:])
    dropped = len(text) - len(head) - len(tail)
    note = f"\n[... {dropped} characters truncated{hint} ...]\n"
    return head + note + tail


def read_text(path: Path, shown: str) -> str:
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; use list_dir")
    if not path.exists():
        raise ToolError(f"file not found: {shown}")
    size = path.stat().st_size
    if size > MAX_READ_BYTES:
        raise ToolError(
            f"{shown} is {size} bytes, over the {MAX_READ_BYTES}-byte limit; "
            "use search to find the lines you need"
        )
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise ToolError(f"{shown} is a binary file ({size} bytes); not shown")
    return data.decode("utf-8", errors="replace")


class NativeTool:
    """Shared plumbing: metadata as instance attributes, a workspace, an output cap."""

    name: str
    description: str
    parameters: dict[str, Any]

    def __init__(self, workspace: Workspace, output_limit: int) -> None:
        self.workspace = workspace
        self.output_limit = output_limit
