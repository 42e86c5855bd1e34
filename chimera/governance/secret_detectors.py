"""The secret detectors: known credential formats (:func:`find_secret_formats`), PEM
private-key headers (:func:`has_private_key_block`) and credential-shaped environment variable
names (:func:`is_secret_name`).

They sit below both of their users — the redactor (:mod:`chimera.governance.redactor`), which
replaces what they find, and the rule set (:mod:`chimera.governance.rules`), which refuses
actions that carry it — so neither has to import the other to reach them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


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


_SECRET_NAME = re.compile(
    r"(?i)(TOKENS?($|_)|SECRET|PASSW(OR)?D|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL"
    r"|(^|_)AUTH($|_)|(^|_)SESSION($|_)|COOKIE|(^|_)PAT($|_)|(^|_)DSN($|_)|CONN(ECTION)?_?STR"
    r"|_KEY$|OAUTH)"
)
_NON_SECRET_VARS = frozenset({"TOKENIZERS_PARALLELISM", "GITHUB_TOKEN_PERMISSIONS"})


def is_secret_name(name: str) -> bool:
    """Whether an environment variable name looks like it holds a credential."""
    return name not in _NON_SECRET_VARS and bool(_SECRET_NAME.search(name))


__all__ = ["find_secret_formats", "has_private_key_block", "is_secret_name"]
