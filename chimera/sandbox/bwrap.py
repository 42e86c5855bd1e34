"""Bubblewrap (``bwrap``): detection and the command line of a sandboxed command.

The layout follows the flags bubblewrap documents for untrusted code (its own man page and the
way Flatpak uses it): a new namespace of every kind (``--unshare-all``: no network, own pid,
ipc, uts and cgroup namespaces), ``--die-with-parent`` and ``--new-session`` (no terminal
injection via TIOCSTI), the whole filesystem read-only (``--ro-bind / /``) with a fresh
``/dev``, a fresh ``/proc`` of the new pid namespace (so the parent's ``/proc/PID/environ`` is
not even visible), a private tmpfs ``/tmp``, and the workspace bound writable at its own path.

``bwrap`` itself is started with the allowlisted environment, not only told ``--clearenv``:
``--clearenv`` clears the *command's* environment, but with ``--unshare-pid`` the sandbox's
pid 1 is bwrap's own init process, whose ``/proc/1/environ`` (its environment at exec) is
readable from inside. Started with the parent's environment, a secret planted there leaks
through pid 1 (observed with bubblewrap 0.8); started scrubbed, there is nothing to find.

Detection probes the exact flag set instead of trusting ``which bwrap``: containers often ship
the binary but forbid the namespaces (unprivileged user namespaces disabled, seccomp), and
some forbid mounting a new ``/proc`` (Docker's masked paths). When only ``--proc`` fails, the
sandbox mounts an empty tmpfs on ``/proc`` instead: the host's ``/proc`` (which ``--ro-bind /
/`` would otherwise expose, environ files included) is never reachable.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class BwrapProbe:
    """What this machine's bubblewrap can do.

    Attributes:
        path: absolute path of the ``bwrap`` executable, or ``None`` when it is not on PATH.
        usable: the namespace flag set works here.
        proc: a fresh ``/proc`` can be mounted (``False``: ``/proc`` is an empty tmpfs).
        reason: why it is unusable (one line), or ``""``.
    """

    path: str | None
    usable: bool
    proc: bool
    reason: str = ""


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
        return False, str(exc)
    message = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
    return proc.returncode == 0, message[-1] if message else f"exit {proc.returncode}"


@functools.cache
def probe_bwrap() -> BwrapProbe:
    """Probe bubblewrap once per process (cached): present, namespaces allowed, ``/proc``."""
    path = shutil.which("bwrap")
    if path is None:
        return BwrapProbe(path=None, usable=False, proc=False, reason="bubblewrap not found")
    base = [path, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/"]
    base += ["--dev", "/dev", "--tmpfs", "/tmp"]
    ok, message = _try([*base, "--proc", "/proc", "true"])
    if ok:
        return BwrapProbe(path=path, usable=True, proc=True)
    ok_noproc, _ = _try([*base, "--tmpfs", "/proc", "true"])
    if ok_noproc:
        return BwrapProbe(path=path, usable=True, proc=False, reason=message)
    return BwrapProbe(
        path=path, usable=False, proc=False, reason=f"bubblewrap cannot run here: {message}"
    )


def bwrap_available() -> bool:
    """True when bubblewrap is installed and its namespaces work on this machine."""
    return probe_bwrap().usable


def bwrap_argv(
    probe: BwrapProbe,
    *,
    workspace: Path,
    cwd: Path,
    env: dict[str, str],
    network: bool,
    read_only_paths: tuple[Path, ...],
    extra_writable: tuple[Path, ...],
    hidden: tuple[Path, ...] = (),
    visible_in_tmp: tuple[Path, ...] = (),
    masked_in_workspace: tuple[Path, ...] = (),
) -> list[str]:
    """The ``bwrap`` argument list that precedes the command's own argv.

    Mount order matters: later mounts shadow earlier ones, so ``/`` comes first, then the
    private ``/tmp``, then the writable binds (which may live under ``/tmp``), then the
    read-only re-binds inside them (``.git``, ``.chimera``).
    """
    assert probe.path is not None
    argv = [probe.path, "--unshare-all"]
    if network:
        argv.append("--share-net")
    argv += ["--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev"]
    argv += ["--proc", "/proc"] if probe.proc else ["--tmpfs", "/proc"]
    argv += ["--tmpfs", "/tmp"]
    # The private /tmp would hide an interpreter or tools installed under /tmp (a virtualenv
    # in a CI checkout there): those come back read-only.
    for path in visible_in_tmp:
        argv += ["--ro-bind", str(path), str(path)]
    # Credential stores are masked: a read-only view of them is still a secret to exfiltrate
    # through the workspace (and the PR). Folders become empty, files read as empty.
    for path in hidden:
        if path.is_dir():
            argv += ["--tmpfs", str(path)]
        else:
            argv += ["--ro-bind", "/dev/null", str(path)]
    for path in (workspace, *extra_writable):
        argv += ["--bind", str(path), str(path)]
    for path in read_only_paths:
        argv += ["--ro-bind", str(path), str(path)]
    # Secret files inside the workspace (its dotenv files) are masked: bound after the
    # workspace, or the writable bind would shadow the mask.
    for path in masked_in_workspace:
        argv += ["--ro-bind", "/dev/null", str(path)]
    argv.append("--clearenv")
    for name, value in sorted(env.items()):
        argv += ["--setenv", name, value]
    argv += ["--chdir", str(cwd), "--"]
    return argv
