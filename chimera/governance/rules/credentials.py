"""Family ``credentials``: credential files, stores and formats outside the environment.

Reads of ``~/.netrc``, ``.env``, SSH keys, keychains and the cloud metadata service, and
writes of text carrying a known token format or a private key block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
from chimera.governance.secret_detectors import find_secret_formats, has_private_key_block


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


__all__ = ["CREDENTIAL_RULES"]
