"""The sandbox every command of an autonomous run goes through.

Public API: :class:`Sandbox` (a :class:`chimera.runner.CommandRunner`),
:func:`bwrap_available`, :func:`build_env` and the default allowlist :data:`DEFAULT_ALLOW`.
"""

from chimera.sandbox.bwrap import BwrapProbe, bwrap_available, probe_bwrap
from chimera.sandbox.env import DEFAULT_ALLOW, build_env
from chimera.sandbox.sandbox import Sandbox, SandboxMode

__all__ = [
    "DEFAULT_ALLOW",
    "BwrapProbe",
    "Sandbox",
    "SandboxMode",
    "build_env",
    "bwrap_available",
    "probe_bwrap",
]
