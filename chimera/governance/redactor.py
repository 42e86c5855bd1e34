"""SecretRedactor: secret values (credential-named environment variables, the workspace's
secret files), known credential formats and secrets recognised by their shape (PEM private-key
blocks, values of credential-named keys: :mod:`chimera.governance.secret_text`) replaced by
``[REDACTED:<name>]`` in text bound for a model, a transcript or the audit log.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from chimera.governance.secret_detectors import find_secret_formats, is_secret_name
from chimera.governance.secret_text import PRIVATE_KEY_LABEL, find_secret_spans


class SecretRedactor:
    """Remove secrets from tool output before the model sees it.

    Lexical rules cannot see every way a secret can be read — ``grep -r KEY .`` or the
    ``search`` tool may walk into a ``.env`` file, a test may print its environment. Output
    redaction is the second line: every value of a credential-named environment variable
    (``*_TOKEN``, ``*_API_KEY``, ``*PASSWORD*`` ... of at least ``min_length`` characters),
    every value in the workspace's secret files at any depth (``.env``, ``config/.env.local``,
    ``prod.env``, ``secrets.yaml`` ...: :mod:`chimera.sandbox.secret_files`; examples and
    templates excepted), every known credential format (AWS, GitHub, OpenAI, Anthropic, Slack
    ... tokens), every PEM private-key block and every value assigned to a credential-named key
    (``DB_PASSWORD=…``, ``password: …``, ``"client_secret": "…"``, ``oauth_*``) is replaced by
    ``[REDACTED:<name>]`` in the tool's output, so it reaches neither the provider, the
    transcript nor the audit log.

    Args:
        values: secret values by name.
        min_length: shorter values are not redacted (they would match ordinary text).
    """

    def __init__(self, values: Mapping[str, str] | None = None, *, min_length: int = 8) -> None:
        self.min_length = min_length
        self._values: dict[str, str] = {}
        self._secrets: set[str] = set()
        for name, value in (values or {}).items():
            self.add(name, value)

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        workspace: Path | str | None = None,
        min_length: int = 8,
    ) -> SecretRedactor:
        """Secrets from ``environ`` (default ``os.environ``) and, when given, the workspace's
        secret files at any depth (:func:`chimera.sandbox.secret_files.secret_files`): every
        value of a dotenv-shaped one (``.env``, ``prod.env``; read with python-dotenv when
        installed), every assigned value of a ``credentials.*`` / ``secrets.*`` data file. A
        file that cannot be read is skipped; key files need no value: their PEM blocks are
        found by shape."""
        env = os.environ if environ is None else environ
        redactor = cls(min_length=min_length)
        for name, value in env.items():
            if is_secret_name(name):
                redactor.add(name, value)
        if workspace is not None:
            # Imported here: it needs pathspec, which the CLI's parser and the plugin never load.
            from chimera.sandbox.secret_files import is_dotenv_shaped, secret_files

            root = Path(workspace)
            # Every depth (config/.env too): the same files the sandbox masks.
            for path in secret_files(root):
                label = (
                    path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
                )
                if is_dotenv_shaped(path.name):
                    values = _dotenv_values(path)
                else:
                    values = _assigned_values(path)
                for name, value in values.items():
                    redactor.add(f"{label}:{name}", value)
        return redactor

    def add(self, name: str, value: str | None) -> None:
        """Redact ``value`` as ``name``, and its reversed, hex and base64 forms (a test that
        copies a secret can encode it first; base64 at each of the three byte alignments,
        without the edge characters the surrounding bytes change)."""
        if not value or len(value.strip()) < self.min_length:
            return
        secret = value.strip()
        self._values.setdefault(secret, name)
        self._secrets.add(secret)
        raw = secret.encode("utf-8", "surrogateescape")
        variants = {
            f"{name} (reversed)": [secret[::-1]],
            f"{name} (hex)": [raw.hex(), raw.hex().upper()],
            f"{name} (base64)": [_b64_core(raw, shift) for shift in range(3)],
        }
        for label, forms in variants.items():
            for form in forms:
                if len(form) >= self.min_length and form not in self._values:
                    self._values[form] = label

    def __len__(self) -> int:
        """The number of secret values (their encoded forms not counted)."""
        return len(self._secrets)

    def redact(self, text: str) -> tuple[str, list[str]]:
        """``text`` with secrets replaced, and the names of what was redacted (never values)."""
        text, found = self._redact(text)
        return text, [name for name, _ in found]

    def detect(self, text: str) -> list[str]:
        """What :meth:`redact` would replace in ``text``, described and never quoted: a known
        format's name (``a GitHub token``) or ``the value of <name>`` (``the value of
        GITHUB_TOKEN``, ``the value of .env:API_KEY (base64)``); in the order redact finds
        them, ``[]`` when the text holds no secret."""
        return [name if known else f"the value of {name}" for name, known in self._redact(text)[1]]

    def _redact(self, text: str) -> tuple[str, list[tuple[str, bool]]]:
        """The redacted text and ``(name, is a known format)`` for each thing replaced."""
        found: list[tuple[str, bool]] = []
        for value in sorted(self._values, key=len, reverse=True):
            if value in text:
                name = self._values[value]
                text = text.replace(value, f"[REDACTED:{name}]")
                found.append((name, False))
        for label, match in find_secret_formats(text):
            if match in text:
                text = text.replace(match, f"[REDACTED:{label}]")
                found.append((label, True))
        # Found by shape, last: a value or format already replaced reads [REDACTED:...], which
        # is no literal any more. Replaced from the end so earlier offsets stay valid.
        marks = [(m.start(), m.end()) for m in _MARK.finditer(text)]
        spans = [
            (label, start, end)
            for label, start, end in find_secret_spans(text, min(self.min_length, 6))
            if not any(start < m_end and m_start < end for m_start, m_end in marks)
        ]
        for label, start, end in reversed(spans):
            text = f"{text[:start]}[REDACTED:{label}]{text[end:]}"
        found += [(label, label == PRIVATE_KEY_LABEL) for label, _, _ in spans]
        return text, found

    def redact_json(
        self, value: Any, *, default: Callable[[Any], Any] = str
    ) -> tuple[Any, list[str]]:
        """A copy of ``value`` with every string passed through :meth:`redact`, and the names
        redacted (never values).

        Dicts, lists and tuples are walked (tuples become lists, as JSON writes them; string
        keys are redacted too); ``None``, booleans and numbers are kept. Any other value (a
        ``Path``, a dataclass, bytes, a set, an enum) is first converted with ``default`` —
        pass the ``default`` the writer gives ``json.dumps`` (``str`` unless it says otherwise;
        :func:`chimera.governance.audit_chain.jsonable` for an audit event), so what is
        redacted is what would have been written — and the result is walked. A ``default``
        that returns another unknown value has it written as ``str``.
        """
        names: list[str] = []

        def walk(item: Any, converted: bool = False) -> Any:
            if isinstance(item, str):
                text, found = self.redact(item)
                names.extend(found)
                return text
            if item is None or isinstance(item, (bool, int, float)):
                return item
            if isinstance(item, Mapping):
                return {walk(k) if isinstance(k, str) else k: walk(v) for k, v in item.items()}
            if isinstance(item, (list, tuple)):
                return [walk(v) for v in item]
            return walk(str(item) if converted else default(item), converted=True)

        return walk(value), names

    def cut(self, text: str, limit: int, *, tail: bool = False) -> str:
        """The first (``tail``: last) ``limit`` characters of ``text`` after :meth:`redact`.

        Redacting first matters: a cut through a secret keeps a piece of it that no longer
        matches a known format or a whole value, yet is still most of the secret.
        """
        text, _ = self.redact(text)
        if limit <= 0:
            return ""
        return text[-limit:] if tail else text[:limit]


def cut_redacted(
    text: str, limit: int, *, redactor: SecretRedactor | None = None, tail: bool = False
) -> str:
    """:meth:`SecretRedactor.cut` with ``redactor``, else one built from the process
    environment (credential-named variables and known formats; a caller that knows the
    workspace passes a redactor that reads its dotenv files too)."""
    return (redactor or SecretRedactor.from_environment()).cut(text, limit, tail=tail)


def _b64_core(raw: bytes, shift: int) -> str:
    """The base64 characters of ``raw`` that do not depend on its neighbours, when it starts
    ``shift`` bytes into a 3-byte group."""
    import base64

    text = base64.b64encode(b"\0" * shift + raw).decode("ascii")
    start = 4 if shift else 0
    # The last group may mix in the following bytes (or padding): drop it.
    return text[start:-4]


_MAX_SECRET_FILE = 1024 * 1024
_MARK = re.compile(r"\[REDACTED:[^\]\n]*\]")


def _assigned_values(path: Path) -> dict[str, str]:
    """``{key: value}`` of every ``key: value`` / ``key = value`` / ``"key": "value"`` line of
    a data file (a ``secrets.yaml``, a ``credentials.json``), whatever the key's name: a file
    that holds secrets by what it is holds them under any key. Larger than 1 MiB, binary or
    unreadable: nothing."""
    try:
        if path.stat().st_size > _MAX_SECRET_FILE:
            return {}
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    pair = re.compile(
        r"""^\s*["']?([A-Za-z0-9_.\-]+)["']?\s*[:=]\s*["']?([^"'\s,#][^"'\n,#]*?)["']?\s*,?\s*$"""
    )
    values: dict[str, str] = {}
    for line in text.splitlines():
        m = pair.match(line)
        if m:
            values.setdefault(m.group(1), m.group(2).strip())
    return values


def _dotenv_values(path: Path) -> dict[str, str]:
    try:
        from dotenv import dotenv_values
    except ImportError:
        values: dict[str, str] = {}
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return {}
        for line in lines:
            key, sep, value = line.strip().removeprefix("export ").partition("=")
            if sep and key and not key.startswith("#"):
                values[key.strip()] = value.strip().strip("'\"")
        return values
    try:
        return {k: v for k, v in dotenv_values(path).items() if v}
    except (OSError, UnicodeDecodeError):
        return {}
