"""How a sandboxed command is started: bubblewrap's arguments from a file descriptor, and the
workspace's total write cap.

Bubblewrap's argument list names the host's mounts, the held-out folders it masks and every
variable it sets. With ``--unshare-pid`` the sandbox's pid 1 is bubblewrap's own init, whose
``/proc/1/cmdline`` is readable from inside: so the list is never on the command line. It is
written, NUL-separated, to a file in a private folder (mode 0700) that ``/bin/sh`` opens as
descriptor 3 and deletes (with its folder) before it replaces itself with ``bwrap --args 3``;
bubblewrap reads the descriptor and closes it before the command starts. ``/proc/1/cmdline``
then reads ``bwrap --args 3 -- <command>``.

With a write cap (:class:`WriteCap`), the command's bubblewrap is started by the supervisor
of :mod:`chimera.sandbox.capped` inside an outer bubblewrap that only holds a user and a
mount namespace; the folder then also carries the supervisor's plan and, afterwards, its
``status``, which :meth:`Launch.outcome` reads.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chimera.sandbox import capped

__all__ = ["Launch", "WriteCap", "new_launch"]

SUPERVISOR_PYTHON = sys.executable
"""The interpreter of the write cap's supervisor (standard library only, run with ``-I -S``)."""
_EXEC_FROM_FILE = 'exec 3<"$1" && rm -f -- "$1" && rmdir -- "${1%/*}" && shift && exec "$@"'


@dataclass(frozen=True, slots=True)
class WriteCap:
    """The total write cap of one command over its workspace.

    Attributes:
        limit: bytes the command may add to the workspace (counted in 4 KiB pages of the
            overlay's upper layer; rewriting an existing file counts it whole).
        hide: paths relative to the workspace that the command's tree does not hold at all
            (held-out requirements); never merged back.
        skip: paths relative to the workspace never merged back (``.git``, ``.chimera``:
            read-only inside anyway).
    """

    limit: int
    hide: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()


class Launch:
    """One command's start: its ``argv`` and the private folder behind it.

    Use :func:`new_launch`, then :meth:`finish` with bubblewrap's options and the command;
    after the command ends, :meth:`outcome` (write cap only) and :meth:`close`.
    """

    def __init__(self, folder: Path, cap: WriteCap | None) -> None:
        self.folder = folder
        self.cap = cap
        self.argv: list[str] = []

    @property
    def merged(self) -> Path:
        """Where the supervisor mounts the overlay: the source of the workspace's bind."""
        return self.folder / capped.MOUNT_DIR / capped.MERGED

    def finish(
        self,
        bwrap: str,
        options: Sequence[str],
        command: Sequence[str],
        *,
        limits: Sequence[str] | None,
        workspace: Path,
    ) -> list[str]:
        """The argv that runs ``command`` under bubblewrap ``options`` (no ``--``), through
        ``prlimit`` with ``limits`` (``limits[0]`` is the ``prlimit`` binary's path; ``None``:
        none); with the write cap, over ``workspace`` through the supervisor."""
        prefix = [*limits, "--"] if limits else []
        args = self.folder / capped.ARGS_FILE
        if self.cap is None:
            _write_args(args, list(options))
            self.argv = [
                *prefix, "/bin/sh", "-c", _EXEC_FROM_FILE, "sh", str(args),
                bwrap, "--args", "3", "--", *command,
            ]  # fmt: skip
            return self.argv
        _write_args(args, list(options))
        (self.folder / capped.MOUNT_DIR).mkdir(mode=0o700)
        plan = ["workspace", str(workspace), "cap", str(self.cap.limit), "bwrap", bwrap]
        for rel in self.cap.hide:
            plan += ["hide", rel]
        for rel in self.cap.skip:
            plan += ["skip", rel]
        # bubblewrap takes the command from its own argv, never from --args.
        _write_args(self.folder / capped.PLAN_FILE, [*plan, "--", *command])
        self.argv = [
            *prefix, bwrap, "--unshare-user", "--uid", "0", "--gid", "0", "--cap-add", "ALL",
            "--die-with-parent", "--bind", "/", "/", "--dev", "/dev",
            "--", SUPERVISOR_PYTHON, "-I", "-S", capped.__file__, str(self.folder),
        ]  # fmt: skip
        return self.argv

    def outcome(self) -> dict[str, object] | None:
        """The supervisor's status (``{"outcome", "used", "reason"}``; ``None``: no write cap,
        or the supervisor was killed before it wrote one — its namespace, and the writes,
        went with it)."""
        try:
            text = (self.folder / capped.STATUS_FILE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return capped.read_status(text)

    def close(self) -> None:
        """Remove the private folder (gone already when ``/bin/sh`` removed it)."""
        with contextlib.suppress(OSError):
            shutil.rmtree(self.folder)


def new_launch(cap: WriteCap | None = None, *, outside: Path | None = None) -> Launch:
    """A launch with a fresh private folder (mode 0700) in the system's temporary folder —
    or, when that lies in ``outside`` (a ``TMPDIR`` inside the workspace), in ``/tmp``: the
    folder must never be in a tree the command sees (then ``/var/tmp`` or ``/dev/shm``)."""
    candidates = [Path(tempfile.gettempdir()).resolve(), Path("/tmp"), Path("/var/tmp")]
    parent = next(
        (
            c
            for c in (*candidates, Path("/dev/shm"))
            if c.is_dir() and (outside is None or not c.is_relative_to(outside))
        ),
        candidates[0],
    )
    return Launch(Path(tempfile.mkdtemp(prefix="chimera-launch-", dir=parent)), cap)


def _write_args(path: Path, args: Sequence[str]) -> None:
    for arg in args:
        if "\0" in arg:
            raise ValueError("a sandbox argument holds a NUL byte")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args))


@functools.cache
def write_cap_support(bwrap: str, proc: bool = True) -> str:
    """Why the write cap cannot work on this machine ('' when it can), probed once per
    process: a capped launch of one small write over a scratch workspace (``proc``: a fresh
    ``/proc`` can be mounted, as :class:`~chimera.sandbox.bwrap.BwrapProbe` found)."""
    import subprocess

    work = Path(tempfile.mkdtemp(prefix="chimera-capprobe-"))
    launch = new_launch(WriteCap(1 << 20))
    try:
        argv = launch.finish(
            bwrap,
            ["--unshare-all", "--die-with-parent", *_probe_mounts(proc), "--bind",
             str(launch.merged), str(work), "--chdir", str(work)],
            ["/bin/sh", "-c", "echo ok > probe.txt"],
            limits=None,
            workspace=work,
        )  # fmt: skip
        ran = subprocess.run(
            argv, capture_output=True, timeout=30, check=False, env={"PATH": "/usr/bin:/bin"}
        )
        status = launch.outcome() or {}
        if status.get("outcome") == "merged" and (work / "probe.txt").is_file():
            return ""
        tail = (ran.stdout + ran.stderr).decode("utf-8", "replace").strip().splitlines()
        return str(status.get("reason") or (tail[-1] if tail else f"exit {ran.returncode}"))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        launch.close()
        shutil.rmtree(work, ignore_errors=True)


def _probe_mounts(proc: bool) -> list[str]:
    from chimera.sandbox.layout import system_dirs

    links, dirs = system_dirs()
    out: list[str] = []
    for target, link in links:
        out += ["--symlink", target, link]
    for folder in dirs:
        out += ["--ro-bind", str(folder), str(folder)]
    return [*out, "--dev", "/dev", *(["--proc", "/proc"] if proc else ["--tmpfs", "/proc"])]
