"""Untrusted text placed in a PR body or a comment: made inert before GitHub renders it.

Text that came from a model, a tool, an issue or the agent job's artifact (the audit summary,
evidence, review feedback) can try three things once it sits in a Chimera-written body: hide
content or forge Chimera's state (HTML comments, ``<!-- chimera:... -->`` markers), escape its
code block (a longer backtick fence inside), and reach people or other threads (``@login``
pings and ``#123`` cross-references). :func:`fence_block` removes every HTML comment and
Chimera marker, defuses mentions and references, and wraps the rest in a fence longer than
any backtick run inside it. Markers are parsed only from the bot-written trailer
(:func:`chimera.github.trust.summary.parse_marker`), so a marker that slipped through anywhere else
is ignored anyway.
"""

from __future__ import annotations

import re

__all__ = ["defuse", "fence_block", "strip_comments"]

# An HTML comment, or an unterminated one running to the end (it would hide the rest).
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_MARKER_WORD = re.compile(r"chimera:[a-z]+", re.IGNORECASE)
# GitHub links @login and @org/team; a zero-width joiner after the @ keeps the text readable.
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
# #123, GH-123 and owner/repo#123 become cross-references (and notify the other thread).
_REFERENCE = re.compile(r"(#|\bGH-)(?=\d)", re.IGNORECASE)
_BACKTICKS = re.compile(r"`+")
_ZWJ = "\u2060"


def strip_comments(text: str) -> str:
    """``text`` without HTML comments (an unterminated one is cut to the end) and without any
    ``chimera:<kind>`` marker word left over."""
    text = _COMMENT.sub("", text)
    return _MARKER_WORD.sub("chimera\u2060:marker", text)


def defuse(text: str) -> str:
    """``text`` with ``@``-mentions and ``#``-references made inert (a word joiner after the
    sign; the text still reads the same)."""
    return _REFERENCE.sub(lambda m: m.group(1) + _ZWJ, _MENTION.sub("@" + _ZWJ, text))


def fence_block(text: str, *, info: str = "text", limit: int = 30_000) -> str:
    """``text`` (at most ``limit`` characters) as an inert fenced code block: comments and
    markers removed, mentions and references defused, the fence one backtick longer than the
    longest run inside (at least three)."""
    clean = defuse(strip_comments(text.replace("\r\n", "\n").replace("\r", "\n")))
    if len(clean) > limit:
        clean = clean[: limit - 1] + "…"
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(clean)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{clean.rstrip()}\n{fence}"
