"""Keep sandboxed output from speaking to the GitHub Actions runner.

The runner reads *workflow commands* from every line a step prints on stdout or stderr:
``::set-output name=verdict::passed``, ``::add-mask::``, ``::stop-commands::``,
``::error file=...::``. It trims the line and looks for a leading ``::`` (the current syntax)
or for ``##[`` anywhere in it (the old ``##[set-output name=x;]value`` syntax), and its line
reader also ends a line at a lone carriage return. Output of a sandboxed command (a test the
model wrote) reaches Chimera's own stdout through evidence tails, summaries and logs, so it is
neutralised where it is produced (:func:`neutralize`, applied by the Sandbox to every
:class:`~chimera.runner.CommandResult`), and a surface that prints untrusted text wholesale
can also wrap it in :func:`stop_commands` (the runner ignores every command until the random
token closes the block).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

ZWSP = "\u200b"
"""Zero-width space: invisible when shown, not whitespace to the runner's ``Trim()``, so a line
starting with it does not start with ``::``."""

_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")
# What .NET's String.Trim() removes (Char.IsWhiteSpace), which the runner applies per line.
_WS = " \t\f\v\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)


def neutralize(text: str) -> str:
    """``text`` with every workflow command made inert, unchanged to a reader's eye.

    A line whose first non-blank characters are ``::`` gets a zero-width space before them;
    every ``##[`` becomes ``##<ZWSP>[``. Lines are split as the runner splits them (``\\n``,
    ``\\r\\n`` and a lone ``\\r``).
    """
    if "::" not in text and "##[" not in text:
        return text
    out: list[str] = []
    for match in _LINE.finditer(text):
        line, end = match.group(1), match.group(2)
        if not line and not end:
            continue
        stripped = line.lstrip(_WS)
        if stripped.startswith("::"):
            cut = len(line) - len(stripped)
            line = line[:cut] + ZWSP + stripped
        out.append(line.replace("##[", "##" + ZWSP + "[") + end)
    return "".join(out)


def parse_workflow_commands(text: str) -> list[tuple[str, str]]:
    """The workflow commands the runner would act on in ``text``: ``(name, rest)`` pairs.

    A model of the runner's parser (``ActionCommand.TryParseV2`` and ``TryParse``) used by
    tests and by callers that want to check a text before printing it.
    """
    found: list[tuple[str, str]] = []
    for match in _LINE.finditer(text):
        line = match.group(1).strip(_WS)
        if line.startswith("::"):
            end = line.find("::", 2)
            if end > 2:
                name = line[2:end].split(" ", 1)[0]
                found.append((name, line[end + 2 :]))
                continue
        start = line.find("##[")
        if start >= 0:
            close = line.find("]", start)
            if close > start:
                name = line[start + 3 : close].split(" ", 1)[0].split(";", 1)[0]
                found.append((name, line[close + 1 :]))
    return found


@contextmanager
def stop_commands(stream: TextIO) -> Iterator[str]:
    """Print ``::stop-commands::<token>`` before the block and ``::<token>::`` after it.

    The token is random (32 hex characters), so text inside cannot end the block early.
    Yields the token.
    """
    token = secrets.token_hex(16)
    stream.write(f"::stop-commands::{token}\n")
    try:
        yield token
    finally:
        stream.write(f"::{token}::\n")
