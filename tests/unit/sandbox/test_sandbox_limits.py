"""Resource limits: a fork or memory bomb ends as a failed command, never a downed host.

Root is exempt from ``RLIMIT_NPROC``, so the process limit is tested with the sandbox run as
an unprivileged uid (``setpriv --reuid 65534``), as on a hosted runner; every bomb is bounded
by the wall-clock kill of the sandbox's pid namespace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.errors import SandboxError
from chimera.runner import CommandResult, run_process
from chimera.sandbox import Sandbox, SandboxLimits, SandboxMode, bwrap_available, probe_bwrap
from chimera.sandbox.limits import MIB, user_task_count

NOBODY = 65534

needs_bwrap = [
    pytest.mark.bwrap,
    pytest.mark.skipif(
        not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}"
    ),
]


def _setpriv_works() -> str:
    if os.geteuid() != 0:
        return "not root: cannot switch to another uid"
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "setpriv (util-linux) not found"
    proc = subprocess.run(
        [setpriv, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", "true"],
        capture_output=True,
        check=False,
    )
    return "" if proc.returncode == 0 else f"setpriv failed: {proc.stderr.decode().strip()}"


SETPRIV_PROBLEM = _setpriv_works()
needs_nobody = [
    *needs_bwrap,
    pytest.mark.skipif(bool(SETPRIV_PROBLEM), reason=SETPRIV_PROBLEM or "ok"),
]


def test_limits_are_validated_and_described() -> None:
    with pytest.raises(SandboxError, match="processes must be a positive number"):
        SandboxLimits(processes=0)
    with pytest.raises(SandboxError, match="memory_bytes"):
        SandboxLimits(memory_bytes=True)
    limits = SandboxLimits(processes=10, memory_bytes=1024 * MIB, file_bytes=5 * MIB)
    assert limits.prlimit_args(running=7) == [
        "--nproc=17:17",
        f"--data={1024 * MIB}:{1024 * MIB}",
        f"--fsize={5 * MIB}:{5 * MIB}",
        "--nofile=4096:4096",
        "--core=0:0",
    ]
    assert "1 GiB memory, 5 MiB files" in limits.describe()


def test_user_task_count_counts_threads_of_the_user(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    for pid, tasks in (("10", 3), ("11", 1)):
        for tid in range(tasks):
            (proc / pid / "task" / str(tid)).mkdir(parents=True)
    (proc / "self").mkdir()
    assert user_task_count(os.getuid(), str(proc)) == 4
    assert user_task_count(os.getuid() + 1, str(proc)) == 0
    assert user_task_count(proc=str(tmp_path / "missing")) == 0


@pytest.mark.parametrize("mode", ["bwrap", "scrubbed"])
def test_memory_bomb_fails_fast(
    tmp_path: Path, mode: SandboxMode, request: pytest.FixtureRequest
) -> None:
    if mode == "bwrap" and not bwrap_available():
        for mark in needs_bwrap:
            request.applymarker(mark)
    sandbox = Sandbox(tmp_path, mode=mode, limits=SandboxLimits(memory_bytes=512 * MIB))
    start = time.monotonic()
    res = sandbox.run(
        [sys.executable, "-c", "b = bytearray(8 * 2**30); print('ALLOCATED')"],
        cwd=tmp_path,
        timeout=60,
    )
    assert time.monotonic() - start < 30
    assert "ALLOCATED" not in res.output
    assert "MemoryError" in res.output, res.output
    assert not res.ok


@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=needs_bwrap), "scrubbed"])
def test_file_size_and_open_files_are_capped(tmp_path: Path, mode: SandboxMode) -> None:
    limits = SandboxLimits(file_bytes=1 * MIB, open_files=64)
    sandbox = Sandbox(tmp_path, mode=mode, limits=limits)
    res = sandbox.run("head -c 3000000 /dev/zero > big.bin", cwd=tmp_path, timeout=30)
    assert not res.ok
    assert (tmp_path / "big.bin").stat().st_size <= 1 * MIB
    code = "fs = [open('f%d' % i, 'w') for i in range(200)]; print('OPENED')"
    res = sandbox.run([sys.executable, "-c", code], cwd=tmp_path, timeout=30)
    assert "Too many open files" in res.output, res.output
    assert "OPENED" not in res.output


@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}")
def test_scratch_tmpfs_is_size_capped(tmp_path: Path) -> None:
    if not probe_bwrap().sized:
        pytest.skip("bubblewrap before 0.7 cannot cap a tmpfs")
    sandbox = Sandbox(tmp_path, limits=SandboxLimits(tmpfs_bytes=4 * MIB))
    res = sandbox.run(
        "head -c 20000000 /dev/zero > /tmp/fill; head -c 20000000 /dev/zero > /dev/shm/fill; "
        "du -k /tmp/fill /dev/shm/fill",
        cwd=tmp_path,
        timeout=30,
    )
    assert res.output.count("No space left on device") == 2, res.output
    for line in res.output.splitlines()[-2:]:
        assert int(line.split()[0]) <= 4 * 1024 + 4, res.output


@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}")
@pytest.mark.skipif(os.geteuid() != 0, reason="documents root's exemption")
def test_as_root_the_process_limit_is_reported_as_not_enforced(tmp_path: Path) -> None:
    """Measured, not assumed: root forks past RLIMIT_NPROC; the data says so."""
    sandbox = Sandbox(tmp_path, limits=SandboxLimits(processes=10))
    info = sandbox.info()
    assert not info.process_limit_enforced
    assert "not enforced for root" in info.description
    marker = f"chimera-root-fork-{tmp_path.name}"
    res = sandbox.run(
        f": {marker}; i=0; while [ $i -lt 30 ]; do sleep 5 & i=$((i+1)); done; "
        "ls /proc | grep -c '^[0-9]'",
        cwd=tmp_path,
        timeout=10,
    )
    assert int(res.output.split()[-1]) >= 30, res.output
    # The shell exited; its namespace, and every sleeper in it, went with it.
    assert _running(marker) == 0


# -- as an unprivileged uid: the process limit holds -----------------------------------------


@pytest.fixture
def nobody_workspace() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="chimera-nobody-", dir="/var/tmp"))
    base.chmod(0o755)
    ws = base / "ws"
    ws.mkdir()
    os.chown(ws, NOBODY, NOBODY)
    try:
        yield ws
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _running(marker: str, wait_s: float = 10.0) -> int:
    """Processes whose command line holds ``marker``, after waiting up to ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        count = 0
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                    count += 1
            except OSError:
                continue
        if count == 0 or time.monotonic() > deadline:
            return count
        time.sleep(0.2)


def _as_nobody(sandbox: Sandbox, command: str, timeout: float) -> CommandResult:
    argv, env = sandbox.command_line(command, cwd=sandbox.workspace)
    # The launch folder (bubblewrap's options) was made by this process: hand it over.
    (folder,) = {Path(a).parent for a in argv if "chimera-launch-" in a}
    for path in (folder, *folder.iterdir()):
        os.chown(path, NOBODY, NOBODY)
    setpriv = shutil.which("setpriv")
    assert setpriv is not None
    drop = [setpriv, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
    return run_process(
        [*drop, *argv],
        cwd=sandbox.workspace,
        timeout=timeout,
        env=env,
        output_limit=64 * 1024,
        display=command,
        mode="bwrap-nobody",
    )


@pytest.mark.parametrize("dummy", [0], ids=["nobody"])
def test_unprivileged_sandbox_runs_as_a_non_zero_uid(
    nobody_workspace: Path, dummy: int, request: pytest.FixtureRequest
) -> None:
    for mark in needs_nobody:
        request.applymarker(mark)
    if SETPRIV_PROBLEM or not bwrap_available():
        pytest.skip(SETPRIV_PROBLEM or probe_bwrap().reason)
    # No write cap here: its supervisor is tested as an unprivileged uid in
    # test_sandbox_write_cap.py (it needs an interpreter that uid can run).
    sandbox = Sandbox(nobody_workspace, toolchain=(), limits=SandboxLimits(write_cap_bytes=None))
    res = _as_nobody(sandbox, "id -u; echo ok > written", timeout=30)
    assert res.ok, res.output
    assert int(res.output.split()[0]) != 0
    assert (nobody_workspace / "written").stat().st_uid == NOBODY


def test_fork_bomb_as_unprivileged_uid_is_capped_and_killed(
    nobody_workspace: Path, request: pytest.FixtureRequest
) -> None:
    for mark in needs_nobody:
        request.applymarker(mark)
    if SETPRIV_PROBLEM or not bwrap_available():
        pytest.skip(SETPRIV_PROBLEM or probe_bwrap().reason)
    sandbox = Sandbox(
        nobody_workspace,
        toolchain=(),
        limits=SandboxLimits(processes=40, write_cap_bytes=None),
    )
    # Capped: 100 sleepers asked for; the shell dies at its first failed fork.
    res = _as_nobody(
        sandbox,
        "i=0; while [ $i -lt 100 ]; do sleep 20 & i=$((i+1)); echo started=$i; done",
        timeout=30,
    )
    started = [int(w.split("=")[1]) for w in res.output.split() if w.startswith("started=")]
    assert "Cannot fork" in res.output, res.output
    assert started and 10 < started[-1] <= 40, res.output
    # A real fork bomb: ended by the wall clock, every process of the namespace gone.
    start = time.monotonic()
    marker = f"chimera-bomb-{nobody_workspace.parent.name}"
    bomb = _as_nobody(sandbox, f": {marker}; b() {{ b | b & }}; b; sleep 60", timeout=4)
    assert time.monotonic() - start < 20
    assert bomb.timed_out or not bomb.ok
    assert _running(marker) == 0, "a process of the bomb outlived the sandbox"
