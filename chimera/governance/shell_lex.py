"""The lexer half of the shell parser: placeholders, heredocs, operators, shlex tokens.

:func:`prescan` flattens shell text for :mod:`shlex`: every ``$(...)``, backtick and process
substitution becomes a ``CHIMERASUBSTnX`` placeholder (:data:`PLACEHOLDER_RE`) and its body is
returned for a recursive parse, newlines become ``;``, comments are dropped and heredoc bodies
are cut out. :func:`tokenize` then yields ``(text, is_operator)`` tokens. Both raise
:class:`ScanError` (a ``ValueError``) on unbalanced quotes, parentheses or backticks; the
parser in :mod:`chimera.governance.shell` turns that into ``ParsedCommand.error``.
"""

from __future__ import annotations

import re
import shlex

PLACEHOLDER_RE = re.compile(r"CHIMERASUBST(\d+)X")
"""Marks where a ``$(...)``, backtick or process substitution stood in an argv token."""

_SEPARATORS = frozenset({";", "&&", "||", "&", ";;", "(", ")", "\n"})
PIPES = frozenset({"|", "|&"})
REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<", "<>", ">&", "<&", "<<", "<<<"})
_KNOWN_OPS = sorted(_SEPARATORS | PIPES | REDIRECTS, key=len, reverse=True)
_PUNCT = set("();<>|&")


class ScanError(ValueError):
    """Shell text no lexer can split (unbalanced quote, parenthesis or backtick)."""


def _find_closing_paren(text: str, start: int) -> int:
    """Index of the ``)`` closing the ``(`` just before ``start``, honouring quotes."""
    depth = 1
    i = start
    quote: str | None = None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch == "\\":
            i += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ScanError("unbalanced parenthesis in command substitution")


_HEREDOC_RE = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")


def prescan(text: str) -> tuple[str, list[str], dict[int, str]]:
    """Replace substitutions with placeholders, newlines with ``;``, drop comments.

    Returns the flattened text, the substitution bodies (by placeholder number) and the heredoc
    bodies keyed by the index of the ``<<`` operator's occurrence order.
    """
    out: list[str] = []
    subs: list[str] = []
    heredocs: dict[int, str] = {}
    pending: list[tuple[str, bool]] = []  # (delimiter, strip_tabs) awaiting a body
    heredoc_count = 0
    i = 0
    quote: str | None = None
    n = len(text)

    def placeholder(body: str) -> str:
        subs.append(body)
        return f"CHIMERASUBST{len(subs) - 1}X"

    while i < n:
        ch = text[i]
        if quote == "'":
            out.append(ch)
            if ch == "'":
                quote = None
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                i += 2
                continue
            out.append(text[i : i + 2])
            i += 2
            continue
        if quote == '"' and ch == '"':
            quote = None
            out.append(ch)
            i += 1
            continue
        if quote is None and ch in "'\"":
            quote = ch
            out.append(ch)
            i += 1
            continue
        if ch == "$" and text.startswith("$(", i):
            end = _find_closing_paren(text, i + 2)
            out.append(placeholder(text[i + 2 : end]))
            i = end + 1
            continue
        if ch == "`":
            end = text.find("`", i + 1)
            while end != -1 and text[end - 1] == "\\":
                end = text.find("`", end + 1)
            if end == -1:
                raise ScanError("unbalanced backtick")
            out.append(placeholder(text[i + 1 : end]))
            i = end + 1
            continue
        if quote is None and ch in "<>" and text.startswith("(", i + 1):
            end = _find_closing_paren(text, i + 2)
            out.append(placeholder(text[i + 2 : end]))
            i = end + 1
            continue
        if (
            quote is None
            and ch == "<"
            and text.startswith("<<", i)
            and not text.startswith("<<<", i)
        ):
            m = _HEREDOC_RE.match(text, i)
            if m:
                pending.append((m.group(3), m.group(1) == "-"))
                out.append(f" << {m.group(3)} ")
                i = m.end()
                continue
        if quote is None and ch == "#" and (not out or out[-1][-1:] in {" ", "\t", ";", "\n"}):
            end = text.find("\n", i)
            i = n if end == -1 else end
            continue
        if quote is None and ch == "\n":
            out.append(" ; ")
            i += 1
            while pending:
                delimiter, strip_tabs = pending.pop(0)
                body: list[str] = []
                while i < n:
                    end = text.find("\n", i)
                    line = text[i:] if end == -1 else text[i:end]
                    i = n if end == -1 else end + 1
                    check = line.lstrip("\t") if strip_tabs else line
                    if check == delimiter:
                        break
                    body.append(line)
                heredocs[heredoc_count] = "\n".join(body)
                heredoc_count += 1
            continue
        out.append(ch)
        i += 1
    if quote is not None:
        raise ScanError(f"unbalanced {quote} quote")
    return "".join(out), subs, heredocs


def _split_ops(token: str) -> list[str]:
    parts: list[str] = []
    i = 0
    while i < len(token):
        for op in _KNOWN_OPS:
            if token.startswith(op, i):
                parts.append(op)
                i += len(op)
                break
        else:
            parts.append(token[i])
            i += 1
    return parts


def tokenize(flat: str) -> list[tuple[str, bool]]:
    """shlex tokens as ``(text, is_operator)``."""
    tokens: list[tuple[str, bool]] = []
    lexer = shlex.shlex(flat, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        raw = list(lexer)
    except ValueError as exc:
        raise ScanError(str(exc)) from exc
    for tok in raw:
        if tok and set(tok) <= _PUNCT:
            tokens.extend((op, True) for op in _split_ops(tok))
        else:
            tokens.append((tok, False))
    return tokens


__all__ = ["PIPES", "PLACEHOLDER_RE", "REDIRECTS", "ScanError", "prescan", "tokenize"]
