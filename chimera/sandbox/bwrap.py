"""Bubblewrap (``bwrap``): detection and the command line of a sandboxed command.

The flags follow bubblewrap's own advice for untrusted code (and Flatpak's use of it): a new
namespace of every kind (``--unshare-all``: no network, own pid, ipc, uts and cgroup
namespaces), no capability even when started by root (``--cap-drop ALL``),
``--die-with-parent`` and ``--new-session`` (no terminal injection via TIOCSTI), a fresh
``/dev`` and a fresh ``/proc`` of the new pid namespace (so no other process's
``/proc/PID/environ`` is visible). The filesystem is an allowlist (:mod:`.layout`): the root is
bubblewrap's empty tmpfs, with the system and toolchain folders bound read-only, fresh tmpfs
scratch folders and home, and the workspace writable.

``bwrap`` is started through util-linux's ``prlimit`` (the resource limits of
:mod:`.limits`, inherited by every process inside) and with the allowlisted environment, not
only told ``--clearenv``: with ``--unshare-pid`` the sandbox's pid 1 is bwrap's own init, whose
``/proc/1/environ`` (its environment at exec) is readable from inside. For the same reason
its options never sit on its command line (``/proc/1/cmdline``): :mod:`.launch` passes them
through a file descriptor.

Detection probes this layout instead of trusting ``which bwrap``: containers often ship the
binary but forbid the namespaces (unprivileged user namespaces disabled, Ubuntu 24.04's
AppArmor restriction), and some forbid mounting a new ``/proc`` (Docker's masked paths). When
only ``--proc`` fails, ``/proc`` is an empty tmpfs instead. When the probe fails the strict
sandbox is unusable and callers fail closed with :attr:`BwrapProbe.reason` (one line).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from chimera.sandbox.layout import FRESH_DIRS, Layout, system_dirs

PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class BwrapProbe:
    """What this machine's bubblewrap can do.

    Attributes:
        path: absolute path of the ``bwrap`` executable, or ``None`` when it is not on PATH.
        usable: the sandbox's flag set works here.
        proc: a fresh ``/proc`` can be mounted (``False``: ``/proc`` is an empty tmpfs).
        reason: why it is unusable (one line), or ``""``.
        prlimit: absolute path of util-linux's ``prlimit`` (``None``: not found; unusable).
        version: ``bwrap --version`` output (``"bubblewrap 0.8.0"``), or ``""``.
        sized: ``--size`` is supported (bubblewrap 0.7+): tmpfs mounts are size-capped.
    """

    path: str | None
    usable: bool
    proc: bool
    reason: str = ""
    prlimit: str | None = None
    version: str = field(default="", compare=False)
    sized: bool = True


def _try(argv: list[str]) -> tuple[bool, str]:
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    text = (proc.stdout + proc.stderr).decode("utf-8", errors="replace").strip().splitlines()
    if proc.returncode == 0:
        return True, text[0] if text else ""
    return False, text[-1] if text else f"exit {proc.returncode}"


def _probe_argv(path: str, proc_flags: list[str], sized: bool = True) -> list[str]:
    links, dirs = system_dirs()
    argv = [path, "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    for target, link in links:
        argv += ["--symlink", target, link]
    for folder in dirs:
        argv += ["--ro-bind", str(folder), str(folder)]
    size = ["--size", "65536"] if sized else []
    argv += ["--dev", "/dev", *proc_flags, *size, "--tmpfs", "/tmp", "--", "true"]
    return argv


@functools.cache
def probe_bwrap() -> BwrapProbe:
    """Probe bubblewrap and ``prlimit`` once per process (cached; tests clear the cache)."""
    path = shutil.which("bwrap")
    if path is None:
        return BwrapProbe(path=None, usable=False, proc=False, reason="bubblewrap not found")
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return BwrapProbe(
            path=path,
            usable=False,
            proc=False,
            reason="prlimit (util-linux) not found: resource limits cannot be set",
        )
    _ok, version = _try([path, "--version"])
    # bubblewrap before 0.7 (Ubuntu 22.04 ships 0.6) has no --size: tmpfs mounts go uncapped.
    sized, _ = _try([path, "--size", "65536", "--tmpfs", "/tmp", "--version"])
    ok, message = _try(_probe_argv(path, ["--proc", "/proc"], sized))
    if ok:
        return BwrapProbe(
            path=path, usable=True, proc=True, prlimit=prlimit, version=version, sized=sized
        )
    ok_noproc, _ = _try(_probe_argv(path, ["--tmpfs", "/proc"], sized))
    if ok_noproc:
        return BwrapProbe(
            path=path,
            usable=True,
            proc=False,
            reason=message,
            prlimit=prlimit,
            version=version,
            sized=sized,
        )
    return BwrapProbe(
        path=path,
        usable=False,
        proc=False,
        reason=f"bubblewrap cannot run here: {message}",
        prlimit=prlimit,
        version=version,
    )


def bwrap_available() -> bool:
    """True when bubblewrap (and ``prlimit``) are installed and work on this machine."""
    return probe_bwrap().usable


@dataclass(frozen=True, slots=True)
class Mounts:
    """The per-command part of a sandbox's filesystem (all absolute paths).

    Attributes:
        workspace: bound writable at its own path.
        read_only: inside the workspace, re-bound read-only (``.git``, ``.chimera``).
        extra_writable: outside the workspace, bound writable (caches).
        masked: files bound to an unopenable node (dotenv files, runner files).
        masked_dirs: folders replaced by an empty mode-000 tmpfs.
        carried: ``(source, dest)`` pairs bound read-only (a live folder shown in a copy).
    """

    workspace: Path
    read_only: tuple[Path, ...] = ()
    extra_writable: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    masked_dirs: tuple[Path, ...] = ()
    carried: tuple[tuple[Path, Path], ...] = ()


def bwrap_options(
    probe: BwrapProbe,
    *,
    layout: Layout,
    mounts: Mounts,
    cwd: Path,
    env: dict[str, str],
    network: bool,
    tmpfs_bytes: int,
    workspace_source: Path | None = None,
) -> list[str]:
    """Bubblewrap's options for one command (no binary, no ``--``): what
    :class:`~chimera.sandbox.launch.Launch` passes through a file descriptor.

    Mount order matters: later mounts shadow earlier ones. Fresh tmpfs folders and home come
    first, then the read-only system and toolchain folders (a toolchain under home stays
    visible), then the workspace (which may lie under home or ``/tmp``), then the read-only
    and masked paths inside it. ``workspace_source``: what is bound at the workspace's path
    (the write cap's overlay; default the workspace itself).
    """
    # Started by root, bubblewrap keeps every capability inside its user namespace: enough to
    # unmount a mask (measured: `umount` of a masked file showed the file) or read a mode-000
    # folder. No command of a run needs one.
    argv = ["--unshare-all", "--cap-drop", "ALL"]
    if network:
        argv.append("--share-net")
    argv += ["--die-with-parent", "--new-session"]
    for target, link in layout.symlinks:
        argv += ["--symlink", target, link]
    argv += ["--dev", "/dev"]
    argv += ["--proc", "/proc"] if probe.proc else ["--tmpfs", "/proc"]
    size = ["--size", str(tmpfs_bytes)] if probe.sized else []
    for folder in (*FRESH_DIRS, *layout.fresh):
        argv += [*size, "--tmpfs", str(folder)]
    for folder in layout.read_only:
        argv += ["--ro-bind", str(folder), str(folder)]
    argv += ["--bind", str(workspace_source or mounts.workspace), str(mounts.workspace)]
    for path in mounts.extra_writable:
        argv += ["--bind", str(path), str(path)]
    for source, dest in mounts.carried:
        argv += ["--ro-bind", str(source), str(dest)]
    for path in mounts.read_only:
        argv += ["--ro-bind", str(path), str(path)]
    # Masks come last so no bind above shadows them. /dev/null bound on a nodev mount cannot
    # be opened at all (not even read as empty); an empty mode-000 tmpfs hides a folder.
    for path in (*layout.masked_files, *mounts.masked):
        argv += ["--ro-bind", "/dev/null", str(path)]
    for path in (*layout.masked_dirs, *mounts.masked_dirs):
        # --perms on a tmpfs came with --size (bubblewrap 0.7): before it, an empty folder.
        perms = ["--perms", "0000", "--size", "4096"] if probe.sized else []
        argv += [*perms, "--tmpfs", str(path)]
    argv.append("--clearenv")
    for name, value in sorted(env.items()):
        argv += ["--setenv", name, value]
    argv += ["--chdir", str(cwd)]
    return argv
