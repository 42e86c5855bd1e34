"""The sandbox every command of an autonomous run goes through.

Public API: :class:`Sandbox` (a :class:`chimera.runner.CommandRunner`), its data
:class:`SandboxInfo` and :class:`SandboxLimits`, :class:`DisposableRunner` (``command`` checks
in a throwaway copy of the tree), :func:`bwrap_available`, :func:`build_env`, the default
allowlist :data:`DEFAULT_ALLOW`, and :func:`neutralize` (workflow commands made inert).
"""

from chimera.sandbox.bwrap import BwrapProbe, bwrap_available, probe_bwrap
from chimera.sandbox.disposable import DisposableRunner, export_tree
from chimera.sandbox.env import DEFAULT_ALLOW, build_env
from chimera.sandbox.info import SandboxInfo
from chimera.sandbox.limits import SandboxLimits
from chimera.sandbox.sandbox import Sandbox, SandboxMode
from chimera.sandbox.workflow_commands import neutralize, stop_commands

__all__ = [
    "DEFAULT_ALLOW",
    "BwrapProbe",
    "DisposableRunner",
    "Sandbox",
    "SandboxInfo",
    "SandboxLimits",
    "SandboxMode",
    "build_env",
    "bwrap_available",
    "export_tree",
    "neutralize",
    "probe_bwrap",
    "stop_commands",
]
