"""The sandbox's environment: built from an allowlist of variable names, never a denylist.

A denylist ("drop ``*_TOKEN`` and ``*_KEY``") misses every secret whose name nobody thought
of; an allowlist passes only names known to be harmless, so a secret of any name stays out.
The default names are what shells, compilers and Python need to behave normally; a project
adds more through ``[tool.chimera.sandbox] env_allow`` (names only, no globs).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from chimera.errors import SandboxError

BASE_ALLOW: tuple[str, ...] = ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ")
"""Variables every process expects: search path, home, locale, terminal, temp dir, zone."""

PYTHON_ALLOW: tuple[str, ...] = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "PYTHONUNBUFFERED",
    "PYTHONNOUSERSITE",
    "PYTHONSAFEPATH",
    "PYTHONWARNINGS",
    "PYTHONDEVMODE",
    "PYTHONFAULTHANDLER",
    "VIRTUAL_ENV",
)
"""Python's own variables (named one by one: ``PYTHON*`` as a glob would be a denylist's
mistake in reverse, passing any future ``PYTHON_API_KEY``)."""

DEFAULT_ALLOW: tuple[str, ...] = BASE_ALLOW + PYTHON_ALLOW

RUNNER_PREFIXES: tuple[str, ...] = ("GITHUB_", "ACTIONS_", "RUNNER_")
"""Names never passed in, even when allowlisted: the runner's tokens and command files
(``GITHUB_TOKEN``, ``ACTIONS_ID_TOKEN_REQUEST_TOKEN``/``_URL``, ``ACTIONS_RUNTIME_TOKEN``,
``GITHUB_OUTPUT``, ``RUNNER_TEMP`` ...) belong to the job, not to model-written code."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def validate_names(names: Iterable[str]) -> tuple[str, ...]:
    """Check that each entry is a plain environment variable name.

    Raises:
        SandboxError: an entry is empty, holds a glob or other non-name characters, or is a
            CI runner variable (:data:`RUNNER_PREFIXES`).
    """
    checked: list[str] = []
    for name in names:
        if not isinstance(name, str) or not _NAME.match(name):
            raise SandboxError(
                f"sandbox env_allow: {name!r} is not an environment variable name "
                "(letters, digits and '_' only; globs are not allowed)"
            )
        if is_runner_name(name):
            raise SandboxError(
                f"sandbox env_allow: {name!r} cannot be passed into the sandbox "
                f"({', '.join(p + '*' for p in RUNNER_PREFIXES)} belong to the CI job)"
            )
        checked.append(name)
    return tuple(checked)


def is_runner_name(name: str) -> bool:
    """True for a name the sandbox never passes on (see :data:`RUNNER_PREFIXES`)."""
    return name.upper().startswith(RUNNER_PREFIXES)


def allowed_names(allow: Iterable[str] = ()) -> frozenset[str]:
    """:data:`DEFAULT_ALLOW` plus the validated extra ``allow`` names."""
    return frozenset(DEFAULT_ALLOW) | frozenset(validate_names(allow))


def build_env(
    allow: Iterable[str] = (),
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for a sandboxed command: allowlisted names copied from ``source``.

    Args:
        allow: names added to :data:`DEFAULT_ALLOW` (typically from the config).
        source: where values come from; default ``os.environ``. Names absent from it are
            simply absent from the result.

    Returns:
        A new dict holding only allowlisted names.

    Raises:
        SandboxError: an ``allow`` entry is not a variable name.
    """
    names = allowed_names(allow)
    origin = os.environ if source is None else source
    return {
        name: value for name, value in origin.items() if name in names and not is_runner_name(name)
    }
