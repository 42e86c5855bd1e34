"""What a migration finds and what it does with it: :class:`Found` (one thing read from the
source), :class:`Outcome` (its status in the report), secret redaction and a JSON5 reader.

Statuses (the vocabulary Hermes' ``openclaw_to_hermes.py`` uses in its ``report.json``:
``migrated``/``archived``/``skipped``/``conflict``/``error``, plus Chimera's ``refused``):

* ``migrated`` — written to a Chimera target (tainted/provisional unless it came from a
  human-edited config file);
* ``skipped`` — already there (deduplicated by normalised text or identical content);
* ``archived`` — kept in the archive folder with the reason it does not map (or staged
  disabled for a person to promote);
* ``conflict`` — the target holds something different under the same name: never overwritten;
* ``refused`` — a secret, a path escaping the source, or text governance blocks;
* ``error`` — unreadable or malformed input (a broken JSON5 file, an invalid ``SKILL.md``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from chimera.errors import ConfigError

__all__ = [
    "Found",
    "MigrationResult",
    "Outcome",
    "Status",
    "json5_loads",
    "redact",
    "redact_lines",
]


class Status(StrEnum):
    MIGRATED = "migrated"
    SKIPPED = "skipped"
    ARCHIVED = "archived"
    CONFLICT = "conflict"
    REFUSED = "refused"
    ERROR = "error"


@dataclass(frozen=True)
class Found:
    """One thing read from a source home.

    Attributes:
        kind: ``memory``, ``persona``, ``persona-candidate``, ``skill``, ``connector``,
            ``schedule``, ``config``, ``archive``, ``secret`` or ``error``.
        source: the file it came from, relative to the source home (POSIX).
        text: the memory/persona text, the ``SKILL.md`` text, or the file to archive.
        name: a skill/connector/schedule name ('' otherwise).
        data: structured payload (a connector's or schedule's fields; a config suggestion).
        tier: ``semantic`` or ``episodic`` for memory.
        human_config: read from a human-edited config file (not agent-writable memory).
        reason: why it is archived/refused/an error (for those kinds).
    """

    kind: str
    source: str
    text: str = ""
    name: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    tier: str = ""
    human_config: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Outcome:
    """One line of the report: what happened to a :class:`Found` (dry run: what would)."""

    kind: str
    source: str
    status: Status
    target: str = ""
    reason: str = ""
    preview: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "source": self.source,
            "status": self.status.value,
            "target": self.target,
            "reason": self.reason,
            "preview": self.preview,
        }


@dataclass
class MigrationResult:
    """The outcomes (one per :class:`Found`, in source order) and, after an apply, the run
    folder holding ``report.json``, ``summary.md``, ``audit.jsonl`` and the backups."""

    tool: str
    applied: bool
    outcomes: list[Outcome] = field(default_factory=list)
    run_dir: Path | None = None

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for o in self.outcomes:
            out[o.status.value] += 1
        return out


# An opaque bearer/basic credential has no format for find_secret_formats to know: the HTTP
# auth scheme in front of it is what names it (``Authorization: Bearer …`` in an MCP config).
_AUTH_SCHEME_VALUE = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def secret_key(name: str) -> bool:
    """Whether a config key names a credential (``apiKey``, ``bot-token``, ``BOT_TOKEN``,
    ``password``, ``Authorization``...).

    The key is spelled as an environment variable (``apiKey`` → ``API_KEY``) and asked of
    governance's one list of credential names
    (:func:`chimera.governance.secret_detectors.is_secret_name`);
    ``Authorization`` (an HTTP header, not a variable name) is added here.
    """
    from chimera.governance.secret_detectors import is_secret_name

    env = re.sub(r"[^A-Za-z0-9]+", "_", _CAMEL.sub("_", name)).strip("_").upper()
    return is_secret_name(env) or env.endswith("AUTHORIZATION")


def _redact_formats(text: str) -> str:
    from chimera.governance.secret_detectors import find_secret_formats

    for _, match in find_secret_formats(text):
        text = text.replace(match, "[redacted]")
    return _AUTH_SCHEME_VALUE.sub("[redacted]", text)


def redact(text: str, limit: int = 120) -> str:
    """``text`` shortened to ``limit`` characters with credential-shaped values (governance's
    known formats, ``Bearer …``) replaced by ``[redacted]``: what the report and the audit log
    may show. A text that still holds a credential (an environment secret's value) is
    ``[redacted: holds a credential]`` as a whole."""
    from chimera.memory.items import secret_in

    out = _redact_formats(" ".join(text.split()))
    if secret_in(out):
        return "[redacted: holds a credential]"
    return out if len(out) <= limit else out[: limit - 1] + "…"


_ASSIGN = re.compile(r"""^(\s*[-"']?[\w.-]+["']?\s*[:=]\s*)(.+)$""")


def redact_lines(text: str) -> str:
    """``text`` with the value of every line that holds a credential, or assigns one to a
    credential-named key (``apiKey: ...``, ``TOKEN=...``), replaced by ``[redacted]``: what an
    archived copy of a config file keeps."""
    from chimera.memory.items import secret_in

    out: list[str] = []
    for line in text.splitlines(keepends=True):
        m = _ASSIGN.match(line.rstrip("\n"))
        named = m is not None and secret_key(m.group(1)) and m.group(2).strip() not in ("", "{")
        if named or secret_in(line) or _AUTH_SCHEME_VALUE.search(line):
            head = m.group(1) if m else ""
            line = f"{head}[redacted]" + ("\n" if line.endswith("\n") else "")
        out.append(line)
    return "".join(out)


_JSON5_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"'  # double-quoted string
    r"|'(?:[^'\\]|\\.)*'"  # single-quoted string
    r"|//[^\n]*"  # line comment
    r"|/\*.*?\*/"  # block comment
    r"|,(?=\s*(?://[^\n]*\s*|/\*.*?\*/\s*)*[}\]])"  # trailing comma
    r"|(?<=[{,\s])([A-Za-z_$][\w$]*)(?=\s*:)",  # unquoted key
    re.S,
)


def json5_loads(text: str, *, source: str) -> Any:
    """Parse the JSON5 subset OpenClaw's ``openclaw.json`` uses (comments, trailing commas,
    unquoted keys, single-quoted strings) by rewriting it to JSON.

    Raises:
        ConfigError: ``source:line:col: message`` for text that is not valid JSON5 (the line
            is exact; the column counts the text as rewritten to JSON).
    """

    def fix(m: re.Match[str]) -> str:
        tok = m.group(0)
        if m.group(1):
            return json.dumps(tok)
        if tok.startswith("'"):
            return json.dumps(tok[1:-1].replace("\\'", "'"))
        if tok.startswith("//") or tok.startswith("/*"):
            return " " * len(tok) if "\n" not in tok else "\n" * tok.count("\n")
        if tok == ",":
            return " "
        return tok

    try:
        return json.loads(_JSON5_TOKEN.sub(fix, text))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON5: {exc.msg}") from exc
