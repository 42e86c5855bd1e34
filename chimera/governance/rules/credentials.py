"""Family ``credentials``: credential files, stores and formats outside the environment.

Reads of ``~/.netrc``, ``.env``, SSH keys, keychains and the cloud metadata service, and
writes of text carrying a known token format or a private key block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from chimera.governance.actions import ActionKind
from chimera.governance.redactor import cut_redacted
from chimera.governance.rules.facts import ActionFacts
from chimera.governance.rules.model import Rule, Verdict
from chimera.governance.rules.paths import (
    KEY_MATERIAL,
    TEXT_SECRETS,
    secret_dir_reason,
    secret_file_reason,
)


def _secret_file(f: ActionFacts) -> Iterable[str]:
    for op in f.reads:
        reason = secret_file_reason(f.action, op.resolved)
        if reason:
            yield f"reads {reason}"
    for op in f.writes:
        if op.command is not None and op.command.program == "mv":
            reason = secret_file_reason(f.action, op.resolved)
            if reason and op.raw in op.command.args[:-1]:
                yield f"moves {reason}"
    for text in f.scan_texts:
        m = TEXT_SECRETS.search(text)
        if m and not text.rstrip().endswith(".pub"):
            yield f"mentions the credential path {m.group(0)}"
    for interp, code in f.inline_code:
        for literal in _code_path_literals(code):
            reason = secret_file_reason(f.action, f.action.resolve(literal))
            if reason:
                yield f"{interp} code opens {reason}"


_STRING_LITERAL = re.compile(r"""(?<![A-Za-z0-9_])(['"])([^'"\s]{1,200})\1""")


def _code_path_literals(code: str) -> list[str]:
    """String literals in inline code that look like paths (``'.env'``, ``"~/.netrc"``)."""
    return [
        m.group(2)
        for m in _STRING_LITERAL.finditer(code)
        if "/" in m.group(2) or m.group(2).startswith((".", "~"))
    ]


def _secret_dir(f: ActionFacts) -> Iterable[str]:
    for op in (*f.reads, *f.writes):
        reason = secret_dir_reason(f.action, op.resolved)
        if reason:
            yield f"touches {reason}"


def _key_material(f: ActionFacts) -> Iterable[str]:
    for op in f.reads:
        base = op.resolved.rsplit("/", 1)[-1]
        if KEY_MATERIAL.search(base) and f.action.in_workspace(op.resolved):
            yield f"reads {op.raw}, which may be key material (fine for test fixtures)"


_KEYCHAIN = re.compile(
    r"^(security (find-(generic|internet)-password|dump-keychain|export)"
    r"|secret-tool (lookup|search)|pass show|keyring get|gpg .*--export-secret"
    r"|gh auth token|gh auth status .*(-t|--show-token)|git credential(-store|-cache)? (fill|get)"
    r"|op (read|item get)|vault (read|kv get)|aws (configure (get|export-credentials)"
    r"|sts get-session-token|secretsmanager get-secret-value)|gcloud auth print-access-token)"
)


def _keychain(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        line = " ".join(cmd.argv)
        if _KEYCHAIN.search(line):
            yield f"`{cut_redacted(line, 60)}` reads stored credentials"  # redacted, then cut


@dataclass(frozen=True)
class _Format:
    """One known credential format.

    ``pattern`` has no left word boundary: a token glued to other word characters
    (``TOKEN_ghp_…``, ``key=abcghp_…``, ``%3Aghs_…``, JSON's ``\\nsk-…``) is still a token. A
    format whose prefix also ends ordinary words (``task-`` holds ``sk-``, ``EASTASIA`` holds
    ``ASIA``) is ``common``: glued to a letter or digit, its ``body`` group must look random
    (see :func:`_looks_random`).
    """

    label: str
    pattern: re.Pattern[str]
    common: bool = False


_SECRET_FORMATS: tuple[_Format, ...] = (
    _Format("a GitHub fine-grained token", re.compile(r"github_pat_(?P<body>[A-Za-z0-9_]{60,})")),
    _Format("a GitHub token", re.compile(r"gh[pousr]_(?P<body>[A-Za-z0-9]{36,})")),
    _Format(
        "an AWS access key id", re.compile(r"A(?:KI|SI)A(?P<body>[0-9A-Z]{16})(?![0-9A-Z])"), True
    ),
    # Real Slack tokens carry numeric ids: ``xoxo-hugs-and-kisses`` is not one.
    _Format(
        "a Slack token",
        re.compile(r"xox[abposr]-(?P<body>(?=[A-Za-z-]*[0-9])[A-Za-z0-9-]{10,})"),
        True,
    ),
    _Format("an Anthropic key", re.compile(r"sk-ant-(?P<body>[A-Za-z0-9_-]{20,})"), True),
    _Format("an OpenAI key", re.compile(r"sk-(?:proj-)?(?P<body>[A-Za-z0-9_-]{40,})"), True),
    _Format("a Google API key", re.compile(r"AIza(?P<body>[0-9A-Za-z_-]{35})(?![0-9A-Za-z])")),
    _Format("a Stripe live key", re.compile(r"[sr]k_live_(?P<body>[0-9A-Za-z]{20,})"), True),
    _Format("a GitLab token", re.compile(r"glpat-(?P<body>[0-9A-Za-z_-]{20})(?![0-9A-Za-z])")),
    _Format("an npm token", re.compile(r"npm_(?P<body>[A-Za-z0-9]{36})(?![A-Za-z0-9])"), True),
    _Format("a PyPI token", re.compile(r"pypi-AgEIcHlwaS5vcmc(?P<body>[A-Za-z0-9_-]{50,})")),
)
_PRIVATE_KEY_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----")


def _looks_random(body: str) -> bool:
    """Whether ``body`` mixes digits and upper case (and lower case, when it has letters of
    both cases' alphabet): a generated key almost always does, a word or a slug does not."""
    digit = any(c.isdigit() for c in body)
    upper = any(c.isupper() for c in body)
    lower = any(c.islower() for c in body)
    return digit and upper and (lower or body.upper() == body)


def find_secret_formats(text: str) -> list[tuple[str, str]]:
    """``(label, match)`` for every known credential format in ``text`` (AWS, GitHub, Slack,
    OpenAI, Anthropic, Google, Stripe, GitLab, npm, PyPI tokens), in text order, wherever it
    sits: alone, quoted, in a URL, JSON-escaped or glued to other characters. Matches do not
    overlap (at one position the longest wins, then the earlier format: ``sk-ant-…`` is an
    Anthropic key, not also an OpenAI one). AWS's documented ``...EXAMPLE`` keys are not
    reported.

    This is the one detector: the redactor, the ``secret-in-content`` rule, the patch scan and
    the memory store's check all call it.
    """
    spans: list[tuple[int, int, int, str]] = []
    for rank, fmt in enumerate(_SECRET_FORMATS):
        for m in fmt.pattern.finditer(text):
            if "EXAMPLE" in m.group(0).upper():
                continue
            glued = m.start() > 0 and text[m.start() - 1].isalnum()
            if fmt.common and glued and not _looks_random(m.group("body")):
                continue
            spans.append((m.start(), -len(m.group(0)), rank, fmt.label))
    found: list[tuple[str, str]] = []
    end = 0
    for start, negative_length, _, label in sorted(spans):
        if start >= end:
            end = start - negative_length
            found.append((label, text[start:end]))
    return found


def has_private_key_block(text: str) -> bool:
    """Whether ``text`` holds a PEM private-key header (``-----BEGIN … PRIVATE KEY-----``)."""
    return "PRIVATE KEY" in text and _PRIVATE_KEY_BLOCK.search(text) is not None


def _secret_formats(text: str) -> Iterable[str]:
    # The format's name only: even four characters of a token are a piece of it, and a
    # reason reaches the audit log, trajectories and PR comments.
    for label in dict.fromkeys(label for label, _ in find_secret_formats(text)):
        yield f"contains {label}"


def _secret_in_content(f: ActionFacts) -> Iterable[str]:
    texts = [f.action.content or "", f.action.command or "", f.action.url or ""]
    for text in texts:
        yield from _secret_formats(text)


def _private_key_content(f: ActionFacts) -> Iterable[str]:
    for text in (f.action.content or "", f.action.command or ""):
        if has_private_key_block(text):
            yield "writes a PEM private key block"


_METADATA = re.compile(
    r"169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200|fd00:ec2::254"
)


def _cloud_metadata(f: ActionFacts) -> Iterable[str]:
    for text in (*f.scan_texts, f.action.command or ""):
        if _METADATA.search(text):
            yield "reaches the cloud instance-metadata service (credentials)"
            return


def _generic_tool_strings(f: ActionFacts) -> Iterable[str]:
    if f.action.kind is not ActionKind.TOOL:
        return
    for text in f.action.iter_strings():
        if text.startswith(("/", "~", ".")) and "\n" not in text:
            resolved = f.action.resolve(text)
            reason = secret_file_reason(f.action, resolved) or secret_dir_reason(f.action, resolved)
            if reason:
                yield f"a tool argument names {reason}"


CREDENTIAL_RULES: tuple[Rule, ...] = (
    Rule("secret-file-read", "reads a credential file or .env", Verdict.BLOCK, _secret_file),
    Rule("secret-keychain", "reads a credential store", Verdict.BLOCK, _keychain),
    Rule("secret-dir", "touches a credential directory", Verdict.REVIEW, _secret_dir),
    Rule("secret-in-content", "writes a known secret format", Verdict.BLOCK, _secret_in_content),
    Rule("secret-private-key", "writes a private key block", Verdict.REVIEW, _private_key_content),
    Rule(
        "key-material-read",
        "reads a key-like file inside the workspace",
        Verdict.WARN,
        _key_material,
    ),
    Rule(
        "secret-tool-argument",
        "a tool argument names a credential path",
        Verdict.BLOCK,
        _generic_tool_strings,
    ),
    Rule("cloud-metadata", "reaches the instance metadata service", Verdict.BLOCK, _cloud_metadata),
)
"""Credential files, stores, formats and metadata, in precedence order."""


__all__ = ["CREDENTIAL_RULES", "find_secret_formats", "has_private_key_block"]
