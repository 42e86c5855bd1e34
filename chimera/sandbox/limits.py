"""Resource limits of a sandboxed command: processes, memory, file size, open files, wall time.

The limits are kernel resource limits (``setrlimit``), set by util-linux's ``prlimit`` on the
process that then becomes bubblewrap, so every process of the sandbox inherits them. They need
no cgroup (hosted runners give none to a job step) and hold for root too — with one exception
the kernel makes: ``RLIMIT_NPROC`` is never enforced for root (measured: 40 of 40 forks under
``--nproc=10`` as root). What bounds a fork bomb as root is the wall-clock kill of the
sandbox's pid namespace (:func:`chimera.runner.run_process` kills the process group of
bubblewrap; ``--die-with-parent`` takes the namespace's init, and with it every process in the
namespace, down). :attr:`SandboxLimits.process_limit_enforced` says which case applies.

Memory is ``RLIMIT_DATA`` (private writable memory: heap and anonymous mappings, which is what a
memory bomb allocates) rather than ``RLIMIT_AS``: runtimes that reserve large ranges of address
space without using them (V8, Go, sanitizers) would fail under an address-space cap of a few
GiB. Memory a command could hold in the sandbox's own tmpfs mounts is capped by their size.
"""

# ruff: noqa: PTH116, PTH208

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from chimera.errors import SandboxError

GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Per-command limits (soft and hard limit alike, so a command cannot raise them).

    Attributes:
        processes: most processes (threads included) a command may add to those its user
            already runs (the kernel counts ``RLIMIT_NPROC`` per user, across the machine).
        memory_bytes: private writable memory per process (``RLIMIT_DATA``), bytes.
        file_bytes: largest file a process may write (``RLIMIT_FSIZE``), bytes.
        open_files: open file descriptors per process (``RLIMIT_NOFILE``).
        tmpfs_bytes: size of each fresh tmpfs (``/tmp``, ``/run``, ``/dev/shm`` ...), bytes.
        wall_s: the longest any command may run, seconds (a command's own timeout is capped
            to it).
        write_cap_bytes: the most one command may write into the workspace in total, bytes
            (:mod:`chimera.sandbox.capped`: enforced while it runs; past it the command fails
            and its writes are reverted); ``None``: no total cap (``file_bytes`` still holds
            per file).

    Raises:
        SandboxError: a limit is not a positive number.
    """

    processes: int = 512
    memory_bytes: int = 4 * GIB
    file_bytes: int = 1 * GIB
    open_files: int = 4096
    tmpfs_bytes: int = 512 * MIB
    wall_s: float = 3600.0
    write_cap_bytes: int | None = 1 * GIB

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if name == "write_cap_bytes" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise SandboxError(f"sandbox limit {name} must be a positive number, not {value!r}")

    @property
    def process_limit_enforced(self) -> bool:
        """False when running as root: the kernel exempts root from ``RLIMIT_NPROC``."""
        return os.geteuid() != 0

    def prlimit_args(self, running: int | None = None) -> list[str]:
        """The ``prlimit`` options setting these limits (``--nproc=N:N`` ...).

        ``running`` is how many tasks the user already has (default: counted now).
        """
        if running is None:
            running = user_task_count() if self.process_limit_enforced else 0
        pairs = (
            ("nproc", running + self.processes),
            ("data", self.memory_bytes),
            ("fsize", self.file_bytes),
            ("nofile", self.open_files),
            ("core", 0),
        )
        return [f"--{name}={int(value)}:{int(value)}" for name, value in pairs]

    def describe(self) -> str:
        """One line, e.g. ``512 processes, 4 GiB memory, 1 GiB files, 1 GiB written in all,
        4096 open files, 3600s wall time``."""
        procs = f"{self.processes} processes"
        if not self.process_limit_enforced:
            procs += " (not enforced for root: wall-clock kill only)"
        written = (
            "no total write cap"
            if self.write_cap_bytes is None
            else f"{size_text(self.write_cap_bytes)} written in all"
        )
        return (
            f"{procs}, {size_text(self.memory_bytes)} memory, {size_text(self.file_bytes)} "
            f"files, {written}, {self.open_files} open files, {self.wall_s:g}s wall time"
        )


def user_task_count(uid: int | None = None, proc: str = "/proc") -> int:
    """Tasks (threads included) whose real user is ``uid`` (default: ours), from ``/proc``."""
    uid = os.getuid() if uid is None else uid
    count = 0
    try:
        entries = os.listdir(proc)
    except OSError:
        return 0
    for name in entries:
        if not name.isdigit():
            continue
        try:
            if os.stat(f"{proc}/{name}").st_uid != uid:
                continue
            count += len(os.listdir(f"{proc}/{name}/task"))
        except OSError:
            continue  # the process ended while we looked
    return count


def size_text(n: int) -> str:
    """``n`` bytes as ``1 GiB``, ``64 MiB`` or ``1000 bytes``."""
    if n % GIB == 0:
        return f"{n // GIB} GiB"
    if n % MIB == 0:
        return f"{n // MIB} MiB"
    return f"{n} bytes"
