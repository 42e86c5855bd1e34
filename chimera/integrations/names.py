"""Tool names every provider accepts: ``^[a-zA-Z0-9_-]{1,64}$``, prefixed by the connector.

The strictest common rule (OpenAI's function names; Anthropic's and Gemini's are no looser):
letters, digits, ``_`` and ``-``, 1 to 64 characters. A remote name is prefixed with its
connector (``docs__search``), every other character becomes ``_``, and a name still too long
is cut and given an 8-hex-digit suffix hashed from the full name, so two long names that share
a prefix stay distinct and the same remote name always maps to the same tool name.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_TOOL_NAME", "TOOL_NAME", "tool_name"]

MAX_TOOL_NAME = 64
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}\Z")
_BAD = re.compile(r"[^a-zA-Z0-9_-]+")
SEPARATOR = "__"


def tool_name(connector: str, remote: str) -> str:
    """The provider-safe name of ``remote`` (a tool of ``connector``).

    >>> tool_name("docs", "search.pages")
    'docs__search_pages'
    """
    body = _BAD.sub("_", remote).strip("_") or "tool"
    name = f"{connector}{SEPARATOR}{body}"
    if len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha256(f"{connector}\0{remote}".encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME - 9]}_{digest}"
