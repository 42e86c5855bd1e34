"""Reading one file of a commit through the API (``GET /repos/{o}/{r}/contents/{path}``).

A free function over :class:`~chimera.github.client.client.GitHubClient` (the client stays small):
decide has no checkout, and reads what it validates — the agent profile the ``agent`` input
names — at the very base commit it hands on.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING
from urllib.parse import quote

from chimera.errors import GitHubError, GitHubNotFound

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient

__all__ = ["file_at"]


def file_at(client: GitHubClient, path: str, ref: str) -> str | None:
    """The UTF-8 text of ``path`` (relative to the repository root) at commit ``ref``.

    Returns:
        The text, or ``None`` when the commit has no file there (a folder counts as none).

    Raises:
        GitHubError: the API failed after retries, or the file is not UTF-8 text.
    """
    url = f"/repos/{client.repository}/contents/{quote(path.strip('/'))}?ref={quote(ref)}"

    def get() -> str | None:
        data = client._raw("GET", url)
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        try:
            raw = base64.b64decode(str(data.get("content") or ""))
            return raw.decode("utf-8-sig")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise GitHubError(f"{path} at {ref[:12]} is not UTF-8 text") from exc

    try:
        return client._call(f"GET {path} at {ref[:12]}", get)
    except GitHubNotFound:
        return None
