"""The workspace's total write cap (issue 32, row 8): enforced by the kernel while a command
runs (a size-limited overlay), not summed afterwards. Many files each under the per-file limit
still stop at the cap; the command fails with one line saying so and its writes are reverted;
within the cap every kind of change (new, changed, deleted, replaced, links, modes) reaches
the workspace as the command left it."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.config import ChimeraConfig
from chimera.orchestration.session_factory import sandbox_limits
from chimera.runner import run_process
from chimera.sandbox import Sandbox, SandboxLimits, bwrap_available, probe_bwrap
from chimera.sandbox import launch as launch_module
from chimera.sandbox.capped import STATUS_FILE, merge, read_status
from chimera.sandbox.limits import GIB, MIB

_UNUSABLE = f"bubblewrap unusable: {probe_bwrap().reason}"
bwrap_only = [pytest.mark.bwrap, pytest.mark.skipif(not bwrap_available(), reason=_UNUSABLE)]


def _capped(ws: Path, cap_mib: int, **kwargs: object) -> Sandbox:
    limits = SandboxLimits(write_cap_bytes=cap_mib * MIB, file_bytes=4 * MIB)
    return Sandbox(ws, mode="bwrap", limits=limits, **kwargs)  # type: ignore[arg-type]


def test_the_default_cap_comes_from_the_sandbox_settings() -> None:
    config = ChimeraConfig()
    assert config.sandbox.write_cap_mib == 1024
    assert sandbox_limits(config).write_cap_bytes == GIB
    off = ChimeraConfig.model_validate({"sandbox": {"write_cap_mib": 0}})
    assert sandbox_limits(off).write_cap_bytes is None
    assert "1 GiB written in all" in SandboxLimits().describe()
    assert "no total write cap" in SandboxLimits(write_cap_bytes=None).describe()


@pytest.mark.parametrize("mark", [0])
def test_many_files_under_the_file_limit_stop_at_the_total_cap(
    tmp_path: Path, mark: int, request: pytest.FixtureRequest
) -> None:
    for m in bwrap_only:
        request.applymarker(m)
    if not bwrap_available():
        pytest.skip(_UNUSABLE)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kept.txt").write_text("before\n", encoding="utf-8")
    (ws / "gone.txt").write_text("still here\n", encoding="utf-8")
    sandbox = _capped(ws, 8)
    # The attack of the issue, scaled: files of 3 MiB (per-file limit 4 MiB), 6 of them.
    res = sandbox.run(
        "echo changed > kept.txt; rm gone.txt; mkdir out; "
        "for i in 1 2 3 4 5 6; do head -c 3145728 /dev/zero > out/f$i || echo FULL-at-$i; done; "
        "exit 0",
        cwd=ws,
        timeout=60,
    )
    # Enforced while it ran: a write already failed inside the command (ENOSPC) ...
    assert "FULL-at-3" in res.output
    # ... and the command failed with one line, its writes reverted, the tree as before.
    assert not res.ok and res.exit_code == 1
    (line,) = [x for x in res.output.splitlines() if x.startswith("chimera sandbox:")]
    assert "past its write cap of 8 MiB" in line and "reverted" in line
    assert sorted(p.name for p in ws.iterdir()) == ["gone.txt", "kept.txt"]
    assert (ws / "kept.txt").read_text(encoding="utf-8") == "before\n"


@pytest.mark.parametrize("mark", [0])
def test_within_the_cap_every_change_reaches_the_workspace(
    tmp_path: Path, mark: int, request: pytest.FixtureRequest
) -> None:
    for m in bwrap_only:
        request.applymarker(m)
    if not bwrap_available():
        pytest.skip(_UNUSABLE)
    ws = tmp_path / "ws"
    for rel in ("a/keep.txt", "a/drop.txt", "b/x/y.txt", "c/old.txt", "d.txt", "e/f.txt"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"{rel}\n", encoding="utf-8")
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "lnk").symlink_to(outside)
    res = _capped(ws, 16).run(
        "set -e; echo new > a/new.txt; echo more >> a/keep.txt; rm a/drop.txt; rm -r b; "
        "rm -r c; mkdir c; echo fresh > c/new.txt; rm d.txt; mkdir d.txt; echo in > d.txt/i; "
        "rm -r e; echo now-a-file > e; ln -s a/keep.txt link.txt; printf '#!/bin/sh\\n' > run.sh;"
        " chmod 755 run.sh; rm lnk; mkdir lnk; echo inside > lnk/z; mkfifo pipe; "
        "echo nope > .git/HEAD 2>/dev/null || true",
        cwd=ws,
        timeout=60,
    )
    assert res.ok, res.output
    tree = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*"))
    assert tree == [
        ".git", ".git/HEAD", "a", "a/keep.txt", "a/new.txt", "c", "c/new.txt", "d.txt",
        "d.txt/i", "e", "link.txt", "lnk", "lnk/z", "pipe", "run.sh",
    ]  # fmt: skip
    assert (ws / "a/keep.txt").read_text(encoding="utf-8") == "a/keep.txt\nmore\n"
    assert (ws / "e").read_text(encoding="utf-8") == "now-a-file\n"
    assert (ws / "link.txt").readlink() == Path("a/keep.txt")
    assert stat.S_IMODE((ws / "run.sh").stat().st_mode) == 0o755
    assert stat.S_ISFIFO((ws / "pipe").lstat().st_mode)
    assert (ws / ".git/HEAD").read_text(encoding="utf-8") == "ref\n"
    # The link became a folder in the workspace; nothing was written through it.
    assert not (ws / "lnk").is_symlink() and list(outside.iterdir()) == []


def _mknod_whiteout(path: Path) -> None:
    os.mknod(path, stat.S_IFCHR | 0o000, os.makedev(0, 0))


@pytest.mark.skipif(os.geteuid() != 0, reason="whiteouts are character devices: root makes them")
def test_merge_applies_whiteouts_opaque_folders_and_never_follows_a_link(tmp_path: Path) -> None:
    lower = tmp_path / "lower"
    upper = tmp_path / "upper"
    outside = tmp_path / "outside"
    for folder in (lower / "keep", lower / "opaque" / "old", outside, upper / "opaque"):
        folder.mkdir(parents=True)
    (lower / "gone.txt").write_text("x", encoding="utf-8")
    (lower / "opaque" / "old" / "f").write_text("x", encoding="utf-8")
    (lower / "via").symlink_to(outside)
    _mknod_whiteout(upper / "gone.txt")
    os.setxattr(upper / "opaque", "user.overlay.opaque", b"y")
    (upper / "opaque" / "new.txt").write_text("n", encoding="utf-8")
    (upper / "via").mkdir()
    (upper / "via" / "planted").write_text("p", encoding="utf-8")
    (upper / "suid").write_text("#!/bin/sh\n", encoding="utf-8")
    (upper / "suid").chmod(0o4755)
    (upper / ".git").mkdir()
    (upper / ".git" / "hooks").write_text("evil", encoding="utf-8")
    fd = os.open(lower, os.O_RDONLY | os.O_DIRECTORY)
    try:
        merge(str(upper), fd, skip=[".git"])
    finally:
        os.close(fd)
    assert sorted(p.relative_to(lower).as_posix() for p in lower.rglob("*")) == [
        "keep", "opaque", "opaque/new.txt", "suid", "via", "via/planted",
    ]  # fmt: skip
    assert list(outside.iterdir()) == []
    assert stat.S_IMODE((lower / "suid").stat().st_mode) == 0o755  # no set-id bit crosses


# -- as an unprivileged uid, as on a hosted runner ------------------------------------------

NOBODY = 65534


def _nobody_problem() -> str:
    if os.geteuid() != 0:
        return "not root: cannot switch to another uid"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) not found"
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        return "no system python3 the unprivileged uid can run"
    return ""


@pytest.fixture
def nobody_ws() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="chimera-capnobody-", dir="/var/tmp"))
    base.chmod(0o755)
    ws = base / "ws"
    ws.mkdir()
    (ws / "old.txt").write_text("old\n", encoding="utf-8")
    for path in (ws, ws / "old.txt"):
        os.chown(path, NOBODY, NOBODY)
    try:
        yield ws
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("mark", [0])
def test_the_cap_holds_as_an_unprivileged_uid(
    nobody_ws: Path, mark: int, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    for m in bwrap_only:
        request.applymarker(m)
    problem = _nobody_problem() or ("" if bwrap_available() else _UNUSABLE)
    if problem:
        pytest.skip(problem)
    # The supervisor runs as that uid too: an interpreter it can run.
    monkeypatch.setattr(
        launch_module, "SUPERVISOR_PYTHON", shutil.which("python3", path="/usr/bin:/bin")
    )
    sandbox = _capped(nobody_ws, 4, toolchain=())

    def as_nobody(command: str) -> subprocess.CompletedProcess[bytes]:
        argv, env = sandbox.command_line(command, cwd=nobody_ws)
        (folder,) = {Path(a) for a in argv if "chimera-launch-" in a}
        for path in (folder, *folder.iterdir()):
            os.chown(path, NOBODY, NOBODY)
        drop = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
        try:
            return subprocess.run(
                [*drop, *argv], cwd=nobody_ws, env=env, capture_output=True, timeout=60, check=False
            )
        finally:
            try:
                status = str(read_status((folder / STATUS_FILE).read_text(encoding="utf-8")))
            except OSError:
                status = "no status"
            shutil.rmtree(folder, ignore_errors=True)
            as_nobody.status = status  # type: ignore[attr-defined]

    ok = as_nobody("id -u > uid.txt; echo new > old.txt")
    assert ok.returncode == 0, ok.stderr
    assert "'merged'" in as_nobody.status  # type: ignore[attr-defined]
    assert (nobody_ws / "uid.txt").read_text(encoding="utf-8").strip() == str(NOBODY)
    assert (nobody_ws / "uid.txt").stat().st_uid == NOBODY
    assert (nobody_ws / "old.txt").read_text(encoding="utf-8") == "new\n"
    big = as_nobody("head -c 3000000 /dev/zero > a; head -c 3000000 /dev/zero > b; exit 0")
    assert "'exceeded'" in as_nobody.status  # type: ignore[attr-defined]
    assert b"No space left on device" in big.stdout + big.stderr
    assert sorted(p.name for p in nobody_ws.iterdir()) == ["old.txt", "uid.txt"]


def test_run_process_is_what_the_sandbox_builds_on() -> None:
    # The cap changes no runner contract: a plain command through run_process is untouched.
    res = run_process(
        ["/bin/sh", "-c", "echo ok"], cwd=Path("/"), timeout=10, env=None, output_limit=1024,
        display="echo ok", mode="local",
    )  # fmt: skip
    assert res.ok and res.output == "ok\n"


@pytest.mark.parametrize("mark", [0])
def test_a_kernel_that_cannot_hold_the_cap_runs_without_it_and_says_so(
    tmp_path: Path, mark: int, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    for m in bwrap_only:
        request.applymarker(m)
    if not bwrap_available():
        pytest.skip(_UNUSABLE)
    import chimera.sandbox.sandbox as sandbox_module

    monkeypatch.setattr(sandbox_module, "write_cap_support", lambda *_: "no overlay here")
    ws = tmp_path / "ws"
    ws.mkdir()
    sandbox = _capped(ws, 1)
    assert sandbox.write_cap_unavailable == "no overlay here"
    assert "the total write cap is not enforced here: no overlay here" in sandbox.describe()
    res = sandbox.run("head -c 2000000 /dev/zero > big", cwd=ws, timeout=60)
    assert res.ok and (ws / "big").stat().st_size == 2_000_000
