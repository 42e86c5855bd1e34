"""Secrets in a patch: known formats in any spelling, secret-bearing files, high entropy.

Known formats are :func:`chimera.governance.secret_detectors.find_secret_formats` (AWS, GitHub,
Slack, OpenAI, Anthropic, Google, Stripe, GitLab, npm, PyPI tokens) plus PEM private-key blocks.
They **block** wherever they appear — added lines, file names, commit messages, PR titles —
and in every spelling the scan can undo:

* a line as written;
* a run of added lines squashed (whitespace, quotes, ``+``, ``.``, ``\\``, commas and
  parentheses removed) and the string literals of the run joined — a token split across lines
  or string concatenations;
* each of those reversed;
* ``%XX``, ``\\xXX`` and ``\\u00XX`` escapes undone;
* base64 (standard and URL-safe) and hex (``6768705f…``, ``\\x67\\x68…``, ``%67%68…``) runs,
  decoded, and their reversal.

A finding names the format and the spelling (``a GitHub token, base64-encoded``), never the
value. Files that hold secrets by their nature block at any depth: ``.env`` / ``.env.*`` /
``.envrc`` (``.env.example``-style templates go to review), SSH private keys, key stores,
credential files. Other high-entropy strings go to review, except in lock files and
integrity hashes, which are high-entropy by design.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator

from chimera.github.scan.model import Finding, finding
from chimera.governance.rules import Verdict
from chimera.governance.secret_detectors import find_secret_formats, has_private_key_block
from chimera.sandbox.layout import is_dotenv_name, is_example_dotenv
from chimera.sandbox.secret_files import is_secret_file

__all__ = [
    "LOCKFILES",
    "entropy_findings",
    "secret_file_findings",
    "secret_labels",
    "shannon_entropy",
    "text_findings",
]

B, R = Verdict.BLOCK, Verdict.REVIEW

_SQUASH = re.compile(r"""[\s"'`+\\,().]+""")
_LITERAL = re.compile(r""""((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'""")
_B64 = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){16,}|(?:(?:\\x|%)[0-9a-fA-F]{2}){16,}")
_ESCAPE = re.compile(r"%([0-9a-fA-F]{2})|\\x([0-9a-fA-F]{2})|\\u00([0-9a-fA-F]{2})")
# The alphabet of every format find_secret_formats knows, plus the separators around them.
_CANDIDATE = re.compile(r"[A-Za-z0-9_\-+/=.:@]{15,}")
_MAX_DECODE = 4096
_PRINTABLE = bytes(
    range(32, 127)
)  # a token is short: longer runs are data (images, bundles), not a spelling

LOCKFILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "Cargo.lock",
        "go.sum",
        "composer.lock",
        "Gemfile.lock",
        "packages.lock.json",
        "flake.lock",
    }
)
_INTEGRITY = re.compile(
    r"(sha(1|256|384|512)-[A-Za-z0-9+/=]{20,}|--hash=sha\d+:[0-9a-f]{32,}|\"integrity\"\s*:"
    r"|sha\d+[:=]\s*[0-9a-f]{32,}|\b[0-9a-f]{40}\b(?=.*\b(commit|rev|sha)\b))",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-]{24,}")
_KEY_FILE = re.compile(r"^id_(rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk)$")
_KEY_STORE = re.compile(r"\.(key|p12|pfx|jks|keystore|kdbx|ppk)$")
_CREDENTIAL_FILES = frozenset(
    {".netrc", "_netrc", ".git-credentials", ".pypirc", ".vault-token", ".htpasswd", ".pgpass"}
)
_CREDENTIAL_PATHS = (".aws/credentials", ".docker/config.json", ".kube/config", "gh/hosts.yml")


def secret_labels(text: str) -> list[str]:
    """Labels of the known secret formats in ``text`` (``"a GitHub token"``), in order."""
    labels = [label for label, _ in find_secret_formats(_candidates(text))]
    if has_private_key_block(text):
        labels.append("a private key block")
    return list(dict.fromkeys(labels))


def _candidates(text: str) -> str:
    """The distinct token-alphabet runs of ``text``, one per line: every known format lies in
    one run with its neighbours, so the formats match the same; repeated identifiers of code
    are looked at once."""
    return "\n".join(dict.fromkeys(_CANDIDATE.findall(text)))


def _decode_b64(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) > _MAX_DECODE:
        return None
    padded = body + "=" * (-len(body) % 4)
    alt = "-_" if ("-" in body or "_" in body) else None
    try:
        raw = base64.b64decode(padded, altchars=alt.encode() if alt else None, validate=True)
    except (binascii.Error, ValueError):
        return None
    unprintable = len(raw.translate(None, _PRINTABLE))
    return raw.decode("latin-1") if unprintable <= 0.2 * len(raw) else None


def _decode_hex(run: str) -> str | None:
    digits = re.sub(r"\\x|%", "", run)
    if len(digits) > _MAX_DECODE:
        return None
    return bytes.fromhex(digits).decode("latin-1")


def _spellings(text: str) -> Iterator[tuple[str, str]]:
    """``(how it was spelled, the text undone)`` for every spelling the scan undoes."""
    squashed = _SQUASH.sub("", text)
    joined = "".join(a or b for a, b in _LITERAL.findall(text))
    plain = {"as written": text, "split across lines or strings": squashed}
    if _ESCAPE.search(text):
        unescaped = _ESCAPE.sub(lambda m: chr(int(next(g for g in m.groups() if g), 16)), text)
        plain["percent- or backslash-escaped"] = unescaped
    if joined:
        plain["split across string literals"] = joined
    for how, view in plain.items():
        yield how, view
        yield ("reversed" if how == "as written" else f"{how}, reversed"), view[::-1]
    for base_view in dict.fromkeys((text, squashed)):
        for run in _B64.findall(base_view):
            decoded = _decode_b64(run)
            if decoded:
                yield "base64-encoded", decoded
                yield "base64-encoded, reversed", decoded[::-1]
        for run in _HEX.findall(base_view):
            decoded = _decode_hex(run)
            if decoded:
                yield "hex-encoded", decoded
                yield "hex-encoded, reversed", decoded[::-1]


def text_findings(text: str, where: str, line: int = 0) -> Iterator[Finding]:
    """Block findings for known secret formats in ``text`` in any spelling (module doc).

    ``where`` is the finding's path (a file path, ``<commit message>``, ``<PR title>``).
    """
    views = list(_spellings(text))
    # One pass over every spelling at once (a format never spans the newline between two);
    # the spelling is only looked up for the rare text that holds a secret.
    if not secret_labels("\n".join(view for _, view in views)):
        return
    seen: set[str] = set()
    for how, view in views:
        for label in secret_labels(view):
            if label not in seen:
                seen.add(label)
                suffix = "" if how == "as written" else f", {how}"
                rule = "secret-format" if how == "as written" else "secret-encoded"
                yield finding(B, rule, where, f"{label}{suffix}", line)


def runs(added: list[tuple[int, str]], limit: int = 200) -> Iterator[list[tuple[int, str]]]:
    """Consecutive added lines (no gap in line numbers), at most ``limit`` lines each; a run
    cut by the limit shares its last line with the next, so nothing splits unseen."""
    current: list[tuple[int, str]] = []
    for item in added:
        if current and (item[0] != current[-1][0] + 1 or len(current) >= limit):
            yield current
            current = current[-1:] if item[0] == current[-1][0] + 1 else []
        current.append(item)
    if current:
        yield current


def content_findings(path: str, added: list[tuple[int, str]]) -> Iterator[Finding]:
    """Secret findings over a file's added lines, run by run; a format written plainly is
    reported at its own line, any other spelling at the run's first line."""
    for run in runs(added):
        found = list(text_findings("\n".join(t for _, t in run), path, run[0][0]))
        if any(f.rule == "secret-format" for f in found):
            for lineno, text in run:
                for label in secret_labels(text):
                    yield finding(B, "secret-format", path, label, lineno)
        yield from (f for f in found if f.rule != "secret-format")


def secret_file_findings(path: str, status: str) -> Iterator[Finding]:
    """Findings for a file that holds secrets by its nature (module doc); none on deletion."""
    if status == "D":
        return
    key = path.casefold()
    name = key.rsplit("/", 1)[-1]
    if is_dotenv_name(name):
        if is_example_dotenv(name):
            yield finding(R, "secret-file", path, "a dotenv template: check it holds no value")
        else:
            yield finding(B, "secret-file", path, "a dotenv file holds secrets")
    elif _KEY_FILE.match(name) or _KEY_STORE.search(name):
        yield finding(B, "secret-file", path, "a private key or key store")
    elif name in _CREDENTIAL_FILES or key.endswith(_CREDENTIAL_PATHS):
        yield finding(B, "secret-file", path, "a credential file")
    elif name.endswith(".pem"):
        yield finding(R, "secret-file", path, "a PEM file may hold a private key")
    elif is_secret_file(name):
        # The sandbox's list: what it masks in a run is never published either.
        yield finding(B, "secret-file", path, "a secret file by its name (prod.env, .npmrc, ...)")
    for f in text_findings(path, path):
        yield finding(B, "secret-in-name", path, f.reason.split(": ", 1)[1] + " in the path")


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (0.0 for an empty string)."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(token: str) -> bool:
    if len(token) < 24:
        return False
    # Identifiers and words (snake/kebab case, paths) are low-entropy per character class.
    if re.fullmatch(r"[a-z_\-]+|[A-Z_\-]+|[a-z]+([A-Z][a-z]+)+", token):
        return False
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[+/=_\-]"))
    if re.fullmatch(r"[0-9a-f]+", token):
        return len(token) >= 32 and shannon_entropy(token) > 3.0
    return classes >= 3 and shannon_entropy(token) > 4.0


def entropy_findings(path: str, added: Iterable[tuple[int, str]]) -> Iterator[Finding]:
    """Review findings for high-entropy strings (not in lock files or integrity hashes)."""
    if path.rsplit("/", 1)[-1] in LOCKFILES:
        return
    for lineno, text in added:
        if _INTEGRITY.search(text):
            continue
        for token in _TOKEN.findall(text):
            if _high_entropy(token):
                bits = shannon_entropy(token)
                why = f"a high-entropy string ({len(token)} chars, {bits:.1f} bits/char)"
                yield finding(R, "high-entropy", path, f"{why} may be a secret", lineno)
                break
