"""The command line of a stdio MCP server: under bubblewrap, with network, in its own pid space.

A stdio server is a child process of Chimera. As a plain child it could read Chimera's whole
environment — the LLM key included — through ``/proc/<parent>/environ``, and every file the
user can. So it starts under bubblewrap with the command sandbox's filesystem allowlist
(system and toolchain folders read-only, fresh ``/tmp`` and home, credential stores and
secret files masked) and its own pid namespace with a fresh ``/proc``, but **with** the
network (``--share-net``): reaching its service is the server's job. The project root is
mounted read-only; the environment is the sandbox's allowlist plus the variables the
declaration names (its own credentials), nothing else.

Bubblewrap's options reach it through a file descriptor (:mod:`chimera.sandbox.launch`), so
the server's ``/proc/1/cmdline`` shows no mount, path or variable of the host.

This builds on :mod:`chimera.sandbox`'s parts (``bwrap_options``, the layout helpers); it does
not construct a :class:`~chimera.sandbox.Sandbox`, whose only builder is the session factory
and whose profile (no network, writable workspace) is the agent's, not a server's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from chimera.errors import ConnectorError, SandboxError
from chimera.sandbox.bwrap import Mounts, bwrap_options, probe_bwrap
from chimera.sandbox.env import build_env
from chimera.sandbox.launch import new_launch
from chimera.sandbox.layout import (
    Layout,
    credential_paths,
    system_dirs,
    toolchain_paths,
    unreadable_in_etc,
)
from chimera.sandbox.limits import SandboxLimits
from chimera.sandbox.secret_files import secret_files

__all__ = ["server_command"]


def _home() -> Path | None:
    raw = os.environ.get("HOME")
    if not raw or not Path(raw).is_absolute():
        return None
    home = Path(raw).resolve()
    return None if home == Path("/") else home


def _layout(root: Path) -> Layout:
    # The same allowlist as the command sandbox (chimera.sandbox.sandbox.Sandbox._layout).
    home = _home()
    links, system = system_dirs()
    tools = toolchain_paths(workspace=root, home=home)
    read_only = tuple(dict.fromkeys([*system, *tools]))
    etc_files, etc_dirs = unreadable_in_etc()
    creds = credential_paths([*read_only, root], [home] if home is not None else [])
    return Layout(
        symlinks=links,
        read_only=read_only,
        masked_files=(*etc_files, *(p for p in creds if not p.is_dir())),
        masked_dirs=(*etc_dirs, *(p for p in creds if p.is_dir())),
        fresh=(home,) if home is not None and not home.is_relative_to(root) else (),
    )


def server_command(
    argv: Sequence[str],
    *,
    root: Path,
    env_names: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    mode: Literal["bwrap", "scrubbed"] = "bwrap",
    limits: SandboxLimits | None = None,
    hidden: Sequence[Path] = (),
) -> tuple[list[str], dict[str, str]]:
    """``(argv, environment)`` that start a stdio server as described in the module docstring.

    Args:
        argv: the server's command line.
        root: the project root (mounted read-only; the server's working directory).
        env_names: variables passed in besides the sandbox's allowlist (the server's own
            credentials); values come from ``environ``.
        environ: where values come from (default ``os.environ``).
        mode: ``bwrap`` (fail closed without it) or ``scrubbed`` (a plain child with the
            allowlisted environment: weaker, it can read ``/proc`` of its parent).
        hidden: absolute paths masked whole (the held-out spec folder and the run folders
            that record its verdicts), as the command sandbox masks them.

    Raises:
        ConnectorError: bubblewrap is unusable in ``bwrap`` mode, or a name cannot be passed.
    """
    root = Path(root).resolve()
    try:
        env = build_env(env_names, source=os.environ if environ is None else environ)
    except SandboxError as exc:
        raise ConnectorError(str(exc).replace("sandbox env_allow", "connector env")) from exc
    if mode == "scrubbed":
        return list(argv), env
    probe = probe_bwrap()
    if not probe.usable:
        raise ConnectorError(
            f"a stdio MCP server runs under bubblewrap, which cannot start here: {probe.reason} "
            '(set [tool.chimera.sandbox] mode = "scrubbed" to accept a weaker, unisolated server)'
        )
    env["TMPDIR"] = "/tmp"
    lim = limits or SandboxLimits()
    present = [Path(p).resolve() for p in hidden if os.path.lexists(p)]
    options = bwrap_options(
        probe,
        layout=_layout(root),
        mounts=Mounts(
            workspace=root,
            read_only=(root,),
            masked=(*secret_files(root), *(p for p in present if not p.is_dir())),
            masked_dirs=tuple(p for p in present if p.is_dir()),
        ),
        cwd=root,
        env=env,
        network=True,
        tmpfs_bytes=lim.tmpfs_bytes,
    )
    assert probe.path is not None and probe.prlimit is not None
    # No write cap: the root is read-only. The launch folder goes with the shell that reads it.
    launch = new_launch(outside=root)
    full = launch.finish(
        probe.path, options, argv, limits=[probe.prlimit, *lim.prlimit_args()], workspace=root
    )
    return full, env
