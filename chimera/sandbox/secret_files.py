"""Files that hold secrets by what they are: the one list the sandbox masks, the tool rules
refuse, the disposable check copies leave out and the redactor reads values from.

A name list (``.env`` only) misses ``prod.env``, ``secrets.yaml`` or ``deploy.pem``: each holds
a secret by its nature, whatever the project calls it. :data:`SECRET_FILE_PATTERNS` is the
documented set, matched against a file's **name** at any depth of the workspace (``.git`` and
``.chimera`` are not searched). The docs' table is :func:`describe_patterns`.

Source code is never a secret file, whatever its name: ``credentials.py`` or ``secrets.ts``
is code the agent may need to change (Chimera's own tree has both), so the
``credentials*`` / ``secrets*`` patterns take only data extensions (:data:`DATA_SUFFIXES`)
or none. Dotenv templates (``.env.example`` ..., :data:`EXAMPLE_DOTENV_SUFFIXES`) and their
``example.env`` spelling stay readable: tests load them and they hold no value.
"""

# os.walk/os.lstat: the workspace is walked per command; plain strings keep it cheap.

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pathspec

from chimera.sandbox.layout import EXAMPLE_DOTENV_SUFFIXES, is_example_dotenv

__all__ = [
    "DATA_SUFFIXES",
    "SECRET_FILE_PATTERNS",
    "describe_patterns",
    "is_dotenv_shaped",
    "is_key_file",
    "is_secret_file",
    "secret_files",
]

DATA_SUFFIXES: tuple[str, ...] = (
    "json",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "txt",
    "env",
    "properties",
    "xml",
    "csv",
    "db",
    "sqlite",
    "enc",
    "gpg",
    "age",
    "asc",
    "bak",
    "old",
    "tfvars",
)
"""Extensions of a data file: ``secrets.yaml`` is a secret file, ``secrets.py`` is code."""

SECRET_FILE_PATTERNS: tuple[tuple[str, str], ...] = (
    (".env, .env.*, .envrc", "dotenv files (templates such as .env.example excepted)"),
    (
        "*.env, *.env.*",
        "dotenv files named by environment: prod.env, secrets.env, config.env.local "
        "(example.env and code such as my.env.py excepted)",
    ),
    ("*.pem, *.key", "PEM files and private keys"),
    ("*.p12, *.pfx, *.jks, *.keystore, *.kdbx", "key stores and password databases"),
    ("id_rsa, id_dsa, id_ecdsa, id_ed25519 (and their _sk forms)", "SSH private keys"),
    ("credentials, credentials.<data>", "credential files (json, yaml, toml, ini ...; not code)"),
    ("secrets, secrets.<data>", "secret files (json, yaml, toml, env ...; not code)"),
    (
        ".npmrc, .pypirc, .netrc, .git-credentials, .pgpass, .htpasswd, .vault-token, .dockercfg",
        "tool credential stores",
    ),
)
"""``(patterns, what they hold)``: the documented set, in the order the docs show it."""

_KEY_SUFFIX = re.compile(r"\.(pem|key|p12|pfx|jks|keystore|kdbx)\Z", re.IGNORECASE)
_SSH_KEY = re.compile(r"id_(rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk)\Z")
_NAMED = re.compile(
    r"(credentials|secrets)(\.(" + "|".join(DATA_SUFFIXES) + r"))*\Z", re.IGNORECASE
)
_STORES = frozenset(
    {
        ".npmrc",
        ".pypirc",
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".pgpass",
        ".htpasswd",
        ".vault-token",
        ".dockercfg",
    }
)
_EXAMPLE_STEMS = frozenset(EXAMPLE_DOTENV_SUFFIXES)
_PRUNE = frozenset({".git", ".chimera"})


# The last suffix of a name that is code or prose, never a dotenv file (``my.env.py``).
_NOT_DATA = frozenset(
    {"py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "rb", "go", "rs", "java", "kt", "php",
     "sh", "bash", "zsh", "ps1", "md", "rst", "html", "j2", "jinja", "tpl", "tmpl", "dist"}
)  # fmt: skip


def is_dotenv_shaped(name: str) -> bool:
    """True for a secret file that holds ``KEY=value`` lines: ``.env``, ``.env.local``,
    ``.envrc``, ``prod.env``, ``PROD.ENV``, ``config.env.local`` (an ``env`` part after a
    stem; templates, code and prose excepted). The redactor reads values from these."""
    if name.startswith(".env"):
        return not is_example_dotenv(name)
    parts = name.casefold().split(".")
    if "env" not in parts[1:]:
        return False
    at = parts.index("env", 1)
    stem, after = parts[at - 1], parts[at + 1 :]
    if not stem or stem in _EXAMPLE_STEMS or any(p in _EXAMPLE_STEMS for p in after):
        return False
    return not (after and after[-1] in _NOT_DATA)


def is_key_file(name: str) -> bool:
    """True for a PEM file, a key or a key store by its suffix (``*.pem``, ``*.key``,
    ``*.p12`` ...). The sandbox masks them; the tool rules only warn on reading one inside the
    workspace, where they are mostly test fixtures."""
    return _KEY_SUFFIX.search(name) is not None


def is_secret_file(name: str) -> bool:
    """True when the basename ``name`` matches :data:`SECRET_FILE_PATTERNS`."""
    return (
        is_dotenv_shaped(name)
        or is_key_file(name)
        or _SSH_KEY.fullmatch(name) is not None
        or _NAMED.fullmatch(name) is not None
        or name in _STORES
    )


def secret_files(root: Path, unmask: Sequence[str] = ()) -> tuple[Path, ...]:
    """Every secret file under ``root`` at any depth, sorted.

    ``.git`` and ``.chimera`` folders are not searched; symlinked folders are not followed. A
    symlink with a secret file's name is listed by its target when that lies under ``root``
    (the target holds the secret); a symlink that *points at* a secret file under ``root``
    needs nothing more, since the target itself is listed.

    ``unmask``: gitignore-style patterns (from ``root``) of files that match a pattern but hold
    no secret — test fixtures such as ``tests/fixtures/*.pem``
    (``[tool.chimera.sandbox] unmask``); they are not listed.
    """
    spec = pathspec.GitIgnoreSpec.from_lines(unmask) if unmask else None
    found: list[Path] = []
    for top, subdirs, names in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in _PRUNE]
        for name in names:
            if not is_secret_file(name):
                continue
            path = Path(top) / name
            if spec is not None and spec.match_file(path.relative_to(root).as_posix()):
                continue
            if path.is_symlink():
                target = path.resolve()
                if target.is_file() and target.is_relative_to(root):
                    found.append(target)
                continue
            if path.is_file():
                found.append(path)
    return tuple(sorted(dict.fromkeys(found)))


def describe_patterns() -> str:
    """The Markdown table of :data:`SECRET_FILE_PATTERNS` (for the docs)."""
    rows = ["| files | what they hold |", "|---|---|"]
    rows += [f"| `{names}` | {why} |" for names, why in SECRET_FILE_PATTERNS]
    return "\n".join(rows)
