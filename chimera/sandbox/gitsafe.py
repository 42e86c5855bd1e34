"""git as Chimera runs it over a tree that model-written code could have touched.

A repository's own configuration is the agent's to write in the weaker scrubbed mode (and any
tree's ``.gitattributes`` always is): ``core.fsmonitor`` and ``core.hooksPath`` name programs
git runs, filter drivers run on ``add`` and ``checkout``. Every git call Chimera makes over
such a tree passes :data:`SAFE_CONFIG` on the command line (which outranks every config file)
and reads no system or global configuration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

SAFE_CONFIG: tuple[str, ...] = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.attributesFile=/dev/null",
    "core.sshCommand=false",
    "diff.external=",
    "protocol.allow=never",
)
"""``-c`` settings that turn off every program git could be told to run."""


def safe_git_args(*args: str) -> list[str]:
    """``["-c", setting, ...] + args`` for a git argv (after the executable)."""
    flags: list[str] = []
    for setting in SAFE_CONFIG:
        flags += ["-c", setting]
    return [*flags, *args]


def safe_git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) without ``GIT_*`` variables, reading no system or
    global config, never prompting, taking no optional locks, in the C locale."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        LC_ALL="C",
    )
    return env
