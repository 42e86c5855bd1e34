"""Secrets recognised by their shape in text, with no value known in advance: PEM private-key
blocks, and values assigned to credential-named keys.

The redactor (:class:`~chimera.governance.redactor.SecretRedactor`) knows the values of the
environment's credential variables and of the workspace's secret files; what it cannot know
is a password in a file it never read (``DB_PASSWORD=…`` in a ``prod.env`` that someone
printed, ``password: …`` in a committed YAML file). Those are found here by shape:

* a PEM private-key block, ``-----BEGIN … PRIVATE KEY-----`` to its ``END`` line (or to the
  end of the text, when it is cut), whole;
* the value of an assignment whose key names a credential (:func:`is_credential_key`) in the
  spellings that persisted text shows: dotenv and shell (``DB_PASSWORD=x``, ``export
  TOKEN="x"``), YAML (``password: x``), JSON (``"client_secret": "x"``), TOML and code
  (``api_key = "x"``), query strings and flags (``?access_token=x``, ``--password=x``). Only the
  value is replaced: ``DB_PASSWORD=[REDACTED:DB_PASSWORD]`` still says what was there.

A bare (unquoted) value counts only when it is a literal — not a reference (``$X``,
``${X}``, ``%(x)s``, ``{{ x }}``), not a call or an attribute (``os.environ["X"]``,
``get_key()``), not a number, a boolean or ``null`` — so code shown to a model keeps its
meaning. Lower-case names ending in ``_key`` (``sort_key``, ``cache_key``) are code, not
credentials: only upper-case ``*_KEY`` names (an environment variable's spelling) count.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["PRIVATE_KEY_LABEL", "find_secret_spans", "is_credential_key"]

PRIVATE_KEY_LABEL = "a private key"

_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"
    r"(?:.*?-----END \1-----|.*\Z)",
    re.DOTALL,
)
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# Words (of a key split at ``_ . -`` and camelCase) that make it a credential's.
_CREDENTIAL_WORDS = frozenset(
    {"token", "tokens", "secret", "secrets", "password", "passwd", "pwd", "passphrase"}
    | {"credential", "credentials", "dsn", "auth", "apikey", "accesskey", "privatekey"}
    | {"secretkey", "authtoken", "accesstoken", "connstr", "pat"}
)
_CREDENTIAL_PAIRS = frozenset(
    {("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key")}
    | {("conn", "str"), ("connection", "string"), ("signing", "key"), ("client", "key")}
)
# ``max_tokens``, ``prompt_tokens``: counts of tokens, not tokens.
_COUNT_WORDS = frozenset(
    {"max", "min", "num", "count", "limit", "total", "prompt", "completion", "input"}
    | {"output", "usage", "per", "budget", "cached", "reasoning", "tokenizer"}
)
_ENV_KEY = re.compile(r"[A-Z][A-Z0-9_]*_KEY\Z")
# A key (not glued to a longer word), an optional closing quote of a JSON/YAML key, the
# separator; then, matched only after a credential key, the value: quoted or bare.
_KEY_SEP = re.compile(
    r"""(?<![A-Za-z0-9_.])(?P<key>[A-Za-z_][A-Za-z0-9_.\-]{0,80})\\?["']?[ \t]*(?:=|:)[ \t]*"""
)
_VALUE = re.compile(
    r"""(?P<quote>\\?["'])(?P<quoted>(?:(?!(?P=quote)).){1,512}?)(?P=quote)"""
    r"""|(?P<bare>[^\s"'`,;&#(){}\[\]<>]{1,512}+)(?![(\[])"""
)
_REFERENCE = re.compile(r"\$|%\(|\{\{|\A<|\A\*+\Z|\A\[REDACTED")
_LITERAL_WORDS = frozenset({"true", "false", "null", "none", "nil", "yes", "no", "undefined"})
_CODE_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+\Z")


def is_credential_key(name: str) -> bool:
    """Whether an assignment to ``name`` holds a credential (module docstring): ``TOKEN``,
    ``*_SECRET``, ``password``, ``api_key``, ``client_secret``, ``oauth_*``, ``DSN``...;
    ``STRIPE_KEY`` but not ``sort_key``; never ``max_tokens``."""
    bare = name.strip("-.")
    words = [w.lower() for w in _WORDS.findall(bare)]
    if any(w.startswith("oauth") for w in words):
        return True
    found = {w for w in words if w in _CREDENTIAL_WORDS}
    if found <= {"token", "tokens"} and found and _COUNT_WORDS.intersection(words):
        return False
    if found or _ENV_KEY.fullmatch(bare) is not None:
        return True
    return any(pair in _CREDENTIAL_PAIRS for pair in itertools.pairwise(words))


def _literal(value: str, quoted: bool) -> bool:
    if _REFERENCE.search(value) or value.lower() in _LITERAL_WORDS:
        return False
    if quoted:
        return True
    return not value.isdigit() and _CODE_VALUE.fullmatch(value) is None


def find_secret_spans(text: str, min_length: int = 6) -> list[tuple[str, int, int]]:
    """``(label, start, end)`` of every secret found by its shape in ``text``, in text order,
    not overlapping: PEM private-key blocks (label :data:`PRIVATE_KEY_LABEL`) and the values
    of credential-named assignments of at least ``min_length`` characters (label: the key).
    """
    spans: list[tuple[str, int, int]] = []
    if "PRIVATE KEY" in text:
        spans += [(PRIVATE_KEY_LABEL, m.start(), m.end()) for m in _PEM.finditer(text)]
    if "=" in text or ":" in text:
        for m in _KEY_SEP.finditer(text):
            key = m.group("key")
            if not is_credential_key(key):
                continue
            v = _VALUE.match(text, m.end())
            if v is None:
                continue
            group = "quoted" if v.group("quoted") is not None else "bare"
            value = v.group(group)
            if len(value) < min_length or not _literal(value, group == "quoted"):
                continue
            spans.append((key.strip("-."), v.start(group), v.end(group)))
    spans.sort(key=lambda s: (s[1], -s[2]))
    kept: list[tuple[str, int, int]] = []
    end = -1
    for span in spans:
        if span[1] >= end:
            kept.append(span)
            end = span[2]
    return kept
