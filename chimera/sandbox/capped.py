"""The write cap's supervisor: a command's workspace writes go to a size-limited overlay first.

``RLIMIT_FSIZE`` caps one file; a command may still write a thousand files of that size. The
cap on a command's *total* workspace writes is enforced by the kernel while the command runs:

1. :mod:`chimera.sandbox.launch` starts an outer bubblewrap that only creates a user and a
   mount namespace (the host's filesystem as it is; no process of the command lives there)
   and runs this file as a script, by path, with ``python -I -S`` — trusted code, standard
   library only, importing nothing from the workspace or from Chimera;
2. here, in that private mount namespace, a tmpfs of the cap's size is mounted, and an
   overlay over the real workspace whose upper layer lives on it (``userxattr``: the overlay
   of a user namespace; ``redirect_dir`` off, so renaming a folder that existed before the
   command returns ``EXDEV`` and tools copy instead, as across file systems);
3. the held-out paths are deleted *in the overlay* (whiteouts in the upper layer), so the
   command's tree does not hold them at all: no folder name, no mount point;
4. the command's own bubblewrap (the strict sandbox, unchanged) runs with the overlay bound
   at the workspace's path, its arguments read from a file descriptor;
5. when it ends, the upper layer is measured twice: the pages its tmpfs holds, and the bytes
   the merge would write — every name's size, so a sparse file (``truncate -s 1G``: no pages)
   or a thousand hard links to one file (one inode's pages) count for what they become in
   the workspace. Past the cap by either — or nested deeper than :data:`MAX_DEPTH` folders —
   nothing is copied back: the command's writes are reverted with the namespace. Within it,
   the upper layer is merged into the real workspace (new and changed files, deletions,
   replaced folders), never following a link, never touching ``.git``, ``.chimera`` or a
   held-out path. A merge that fails half-way says so (``partial``): what it applied stays.

What it costs is measured by ``bench/sandbox_write_cap.py``. Copy-up counts: changing one byte
of a 100 MiB file that existed before writes the whole file to the upper layer. A command
killed at its timeout leaves nothing behind (its namespace goes with it).

The outcome is written to ``status`` in the launch folder (outside every tree the command
sees), three lines: ``merged`` | ``exceeded`` | ``error`` (nothing merged) | ``partial`` (the
merge stopped part-way), the bytes used, the reason; the exit status is the command's.
Plain files, plain ``os.posix_spawn``: the supervisor imports no ``json`` or ``subprocess``,
so each command pays for as little start-up as it can.
"""

# A script run by path with -I -S: the standard library only, no chimera imports.
# ruff: noqa: PTH102, PTH105, PTH108, PTH112, PTH113, PTH114, PTH115, PTH118, PTH123

from __future__ import annotations

import ctypes
import os
import stat
import sys
from collections.abc import Iterable

STATUS_FILE = "status"
PLAN_FILE = "plan"
ARGS_FILE = "args"
MOUNT_DIR = "mnt"
MERGED = "merged"
EXIT_SETUP = 125
"""The exit status when the overlay could not be set up (the command never ran)."""

_OPAQUE = ("user.overlay.opaque", "trusted.overlay.opaque")
_CHUNK = 1 << 20
MAX_DEPTH = 256
"""The deepest folder nesting a command's writes may have to be merged (the merge recurses
per folder; a deeper tree is refused whole, before anything is applied)."""


def _mount(source: str, target: str, fstype: str, data: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(source.encode(), target.encode(), fstype.encode(), 0, data.encode()) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"cannot mount {fstype} on {target}: {os.strerror(code)}")


def _used(path: str) -> int:
    info = os.statvfs(path)
    return (info.f_blocks - info.f_bfree) * info.f_frsize


def measure(upper: str) -> tuple[int, int]:
    """``(bytes, depth)`` of the upper layer ``upper``: what merging it would write (the size
    of every regular file *name*, hard links and sparse files counted in full, and of every
    link's target) and its deepest folder nesting. Iterative, never following a link."""
    total = 0
    deepest = 0
    stack = [(upper, 0)]
    while stack:
        folder, depth = stack.pop()
        deepest = max(deepest, depth)
        with os.scandir(folder) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    stack.append((entry.path, depth + 1))
                elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                    total += info.st_size
    return total, deepest


def _whiteout(info: os.stat_result) -> bool:
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _opaque(path: str) -> bool:
    for name in _OPAQUE:
        try:
            if os.getxattr(path, name, follow_symlinks=False) in (b"y", b"Y"):
                return True
        except OSError:
            continue
    return False


def _remove(name: str, dir_fd: int) -> None:
    """Remove ``name`` in ``dir_fd`` whatever it is, never following a link."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        import shutil

        shutil.rmtree(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)


def _copy_file(src: str, name: str, dir_fd: int, info: os.stat_result) -> None:
    """Write the regular file ``src`` as ``name`` in ``dir_fd``: a temporary file first, then
    renamed over whatever was there (a folder is removed first)."""
    import shutil

    temp = f".chimera-merge-{os.getpid()}-{name}"[:200]
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    out = os.open(temp, flags, 0o600, dir_fd=dir_fd)
    try:
        with open(src, "rb") as source, os.fdopen(out, "wb", closefd=False) as sink:
            shutil.copyfileobj(source, sink, _CHUNK)
        # No set-id bit crosses into the workspace: nothing a run writes needs one.
        os.fchmod(out, stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
        os.utime(out, ns=(info.st_atime_ns, info.st_mtime_ns))
    except BaseException:
        os.close(out)
        os.unlink(temp, dir_fd=dir_fd)
        raise
    os.close(out)
    try:
        current = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        current = None
    if current is not None and stat.S_ISDIR(current.st_mode):
        shutil.rmtree(name, dir_fd=dir_fd)
    os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _open_dir(name: str, dir_fd: int) -> int:
    """The folder ``name`` in ``dir_fd`` (made, or made again in place of a non-folder or a
    link), opened without following a link."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=dir_fd)
        info = None
    if info is None:
        os.mkdir(name, 0o700, dir_fd=dir_fd)
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)


def merge(upper: str, lower_fd: int, skip: Iterable[str] = (), rel: str = "") -> int:
    """Apply the overlay's upper layer ``upper`` to the folder open as ``lower_fd``.

    Args:
        upper: a folder of the upper layer.
        lower_fd: the matching folder of the real tree, opened ``O_DIRECTORY``.
        skip: relative paths (``a/b``) never touched, nor anything under them.
        rel: ``upper``'s path from the layer's root ('' at the root).

    Returns:
        How many entries were applied.

    Raises:
        OSError: an entry could not be applied (the merge stops there).
    """
    skipped = frozenset(skip)
    applied = 0
    with os.scandir(upper) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            path = f"{rel}/{entry.name}" if rel else entry.name
            if path in skipped or any(path.startswith(s + "/") for s in skipped):
                continue
            info = entry.stat(follow_symlinks=False)
            if _whiteout(info):
                _remove(entry.name, lower_fd)
            elif stat.S_ISDIR(info.st_mode):
                if _opaque(entry.path):
                    _remove(entry.name, lower_fd)
                child = _open_dir(entry.name, lower_fd)
                try:
                    applied += merge(entry.path, child, skipped, path)
                    os.fchmod(child, stat.S_IMODE(info.st_mode))
                finally:
                    os.close(child)
            elif stat.S_ISREG(info.st_mode):
                _copy_file(entry.path, entry.name, lower_fd, info)
            elif stat.S_ISLNK(info.st_mode):
                _remove(entry.name, lower_fd)
                os.symlink(os.readlink(entry.path), entry.name, dir_fd=lower_fd)
            elif stat.S_ISFIFO(info.st_mode):
                _remove(entry.name, lower_fd)
                os.mkfifo(entry.name, stat.S_IMODE(info.st_mode), dir_fd=lower_fd)
            else:
                continue  # sockets and devices are no part of a tree's content
            applied += 1
    return applied


def _hide(merged: str, paths: Iterable[str]) -> None:
    """Delete ``paths`` (relative) in the overlay: whiteouts hide them from the command."""
    import shutil

    for rel in paths:
        target = os.path.join(merged, rel)
        if os.path.islink(target) or os.path.isfile(target):
            os.unlink(target)
        elif os.path.isdir(target):
            shutil.rmtree(target)


def _outer_id(kind: str) -> str:
    """The host id this namespace maps to 0 (``/proc/self/uid_map``: ``0 <host id> 1``): the
    command runs as it, as it would without the cap."""
    with open(f"/proc/self/{kind}_map", encoding="ascii") as handle:
        return handle.read().split()[1]


def _write_status(folder: str, outcome: str, used: int, reason: str) -> None:
    temp = os.path.join(folder, STATUS_FILE + ".tmp")
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(f"{outcome}\n{used}\n{' '.join(reason.split())}\n")
    os.replace(temp, os.path.join(folder, STATUS_FILE))


def read_plan(data: bytes) -> tuple[dict[str, list[str]], list[str]]:
    """The plan file: NUL-separated ``key, value`` pairs (a key may repeat), then ``--`` and
    the command's argv. Returns ``(values by key, command)``."""
    parts = [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0")]
    if parts and parts[-1] == "":
        parts.pop()
    values: dict[str, list[str]] = {}
    i = 0
    while i < len(parts) and parts[i] != "--":
        values.setdefault(parts[i], []).append(parts[i + 1])
        i += 2
    return values, parts[i + 1 :]


def read_status(text: str) -> dict[str, object] | None:
    """The status file as ``{"outcome", "used", "reason"}`` (``None``: not one)."""
    lines = text.split("\n")
    if len(lines) < 3 or not lines[1].isdigit():
        return None
    return {"outcome": lines[0], "used": int(lines[1]), "reason": lines[2]}


def _run(argv: list[str], keep: int) -> int:
    """Run ``argv`` with descriptor ``keep`` inherited; its exit status (a signal N: 128+N)."""
    os.set_inheritable(keep, True)
    pid = os.posix_spawn(argv[0], argv, dict(os.environ))
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def main(folder: str) -> int:
    """Run the plan in ``folder`` (module docstring); returns the exit status."""
    with open(os.path.join(folder, PLAN_FILE), "rb") as handle:
        plan, command = read_plan(handle.read())
    args_path = os.path.join(folder, ARGS_FILE)
    args_fd = os.open(args_path, os.O_RDONLY)
    os.unlink(args_path)
    workspace = plan["workspace"][0]
    cap = int(plan["cap"][0])
    headroom = int(plan.get("headroom", [str(1 << 20)])[0])
    hide = plan.get("hide", [])
    scratch = os.path.join(folder, MOUNT_DIR)
    merged = os.path.join(scratch, MERGED)
    try:
        # An inode per KiB of cap at least: a cap is not a way round the inode count.
        inodes = max(16384, cap // 1024)
        size = cap + headroom
        _mount("tmpfs", scratch, "tmpfs", f"size={size},nr_inodes={inodes},mode=0700")
        for name in ("upper", "work", MERGED):
            os.mkdir(os.path.join(scratch, name), 0o700)
        options = (
            f"lowerdir={workspace},upperdir={scratch}/upper,workdir={scratch}/work,"
            "userxattr,redirect_dir=nofollow,index=off,metacopy=off"
        )
        _mount("overlay", merged, "overlay", options)
        _hide(merged, hide)
        lower_fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        _write_status(folder, "error", 0, f"write cap: {exc}")
        return EXIT_SETUP
    ids = ("--uid", _outer_id("uid"), "--gid", _outer_id("gid"))
    argv = [plan["bwrap"][0], "--unshare-user", *ids, "--args", str(args_fd), "--", *command]
    code = _run(argv, args_fd)
    os.close(args_fd)
    upper = os.path.join(scratch, "upper")
    try:
        used = _used(scratch)
        # What the merge would write: a sparse file or a hard link holds few pages here and
        # its whole size there.
        written, depth = measure(upper)
    except OSError as exc:
        os.close(lower_fd)
        _write_status(folder, "error", 0, f"measuring the writes failed ({_errno(exc)})")
        return code or EXIT_SETUP
    # The tmpfs holds the cap and a little headroom: past the cap the command failed, whether
    # or not a write of its already met ENOSPC at the headroom's end.
    if used > cap or written > cap:
        os.close(lower_fd)
        _write_status(folder, "exceeded", max(used, written), "write cap reached")
        return code
    if depth > MAX_DEPTH:
        os.close(lower_fd)
        why = f"the writes nest {depth} folders deep (more than {MAX_DEPTH}); nothing was merged"
        _write_status(folder, "error", used, why)
        return code or EXIT_SETUP
    try:
        merge(upper, lower_fd, [*hide, *plan.get("skip", [])])
    except Exception as exc:  # anything: the status must say a merge stopped half-way
        name = _errno(exc) if isinstance(exc, OSError) else type(exc).__name__
        _write_status(folder, "partial", used, f"merging the writes failed ({name})")
        return code or EXIT_SETUP
    finally:
        os.close(lower_fd)
    _write_status(folder, "merged", used, "")
    return code


def _errno(exc: OSError) -> str:
    import errno

    return errno.errorcode.get(exc.errno or 0, "error")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
