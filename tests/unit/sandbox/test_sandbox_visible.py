"""Visible means listed: no host socket, no folder beside the launcher, no /etc secret."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.sandbox import Sandbox, bwrap_available, probe_bwrap
from chimera.sandbox.layout import unreadable_in_etc

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.skipif(
        not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}"
    ),
]

WALK = textwrap.dedent(
    """
    import os, stat, sys
    workspace = sys.argv[1]
    found, seen = [], 0
    for top, dirs, files in os.walk("/"):
        if top == "/":
            dirs[:] = [d for d in dirs if d != "proc"]
        for name in dirs + files:
            path = os.path.join(top, name)
            seen += 1
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if stat.S_ISSOCK(mode):
                found.append(path)
    print("SEEN", seen)
    for path in found:
        print("SOCK", path, "inside" if path.startswith(workspace + "/") else "OUTSIDE")
    """
)


@pytest.fixture
def host_sockets(tmp_path: Path) -> Iterator[list[Path]]:
    """Listening unix sockets where a host keeps them: /run, /var/tmp, /tmp, home, /etc."""
    folders = [Path("/run"), Path("/var/tmp"), tmp_path, Path.home()]
    made: list[Path] = []
    servers: list[socket.socket] = []
    for folder in folders:
        if not os.access(folder, os.W_OK):
            continue
        directory = Path(tempfile.mkdtemp(prefix="chimera-sock-", dir=folder))
        path = directory / "agent.sock"
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.listen(1)
        servers.append(server)
        made.append(path)
    try:
        yield made
    finally:
        for server in servers:
            server.close()
        for path in made:
            shutil.rmtree(path.parent, ignore_errors=True)


def test_no_socket_outside_the_workspace_is_visible(
    tmp_path: Path, host_sockets: list[Path]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    own.bind(str(ws / "own.sock"))  # proves the walk sees sockets at all
    script = ws / "walk.py"
    script.write_text(WALK, encoding="utf-8")
    connect = "; ".join(
        f"python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{p}\")' "
        f"2>/dev/null && echo CONNECTED {p}"
        for p in host_sockets
    )
    try:
        res = Sandbox(ws).run(
            f"{sys.executable} walk.py {ws}; {connect}; true", cwd=ws, timeout=180
        )
    finally:
        own.close()
    assert res.ok, res.output
    assert f"SOCK {ws}/own.sock inside" in res.output
    assert "OUTSIDE" not in res.output, res.output
    assert "CONNECTED" not in res.output, res.output
    assert host_sockets  # the host really had sockets to find
    seen = int(res.output.split("SEEN ", 1)[1].split()[0])
    assert seen > 1000, "the walk covered the system folders"


def test_abstract_unix_socket_of_the_host_is_unreachable(tmp_path: Path) -> None:
    name = f"\0chimera-test-{os.getpid()}-{tmp_path.name}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name)
    server.listen(1)
    code = textwrap.dedent(
        f"""
        import socket
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect({name!r})
            print("CONNECTED")
        except OSError as exc:
            print("BLOCKED", exc.errno)
        """
    )
    try:
        inside = Sandbox(tmp_path).run([sys.executable, "-c", code], cwd=tmp_path, timeout=30)
        outside = Sandbox(tmp_path, mode="scrubbed").run(
            [sys.executable, "-c", code], cwd=tmp_path, timeout=30
        )
    finally:
        server.close()
    assert "BLOCKED" in inside.output, inside.output
    assert "CONNECTED" in outside.output, outside.output  # the socket is real


def test_root_holds_only_listed_folders(tmp_path: Path) -> None:
    res = Sandbox(tmp_path).run("ls -A /", cwd=tmp_path, timeout=30)
    assert res.ok, res.output
    top = set(res.output.split())
    for never in ("opt", "srv", "mnt", "boot", "sys", "media", ".dockerenv"):
        assert never not in top, res.output
    assert {"usr", "etc", "tmp", "dev", "proc"} <= top


def test_folder_beside_the_launching_script_is_not_visible(tmp_path: Path) -> None:
    """The first sys.path entry is the launcher's folder: it must not be bound."""
    base = Path(tempfile.mkdtemp(prefix="chimera-launch-", dir="/var/tmp"))
    try:
        (base / "beside-secret.txt").write_text("BESIDE-LAUNCHER-4411\n", encoding="utf-8")
        launcher = base / "launch.py"
        launcher.write_text(
            textwrap.dedent(
                f"""
                from pathlib import Path
                from chimera.sandbox import Sandbox
                ws = Path({str(tmp_path)!r})
                res = Sandbox(ws).run("cat {base}/beside-secret.txt; ls {base}", cwd=ws, timeout=30)
                print(res.output)
                """
            ),
            encoding="utf-8",
        )
        proc = subprocess.run(
            [sys.executable, str(launcher)], capture_output=True, text=True, timeout=60, check=True
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert "BESIDE-LAUNCHER-4411" not in proc.stdout
    assert "No such file or directory" in proc.stdout


@pytest.mark.skipif(os.geteuid() != 0 or not os.access("/etc", os.W_OK), reason="needs root")
def test_etc_files_other_users_cannot_read_are_masked(tmp_path: Path) -> None:
    secret = Path(tempfile.mkdtemp(prefix="chimera-etc-", dir="/etc"))
    secret.chmod(0o755)  # mkdtemp's 0700 would mask the whole folder
    try:
        (secret / "shadow-like").write_text("ROOT-ONLY-5521\n", encoding="utf-8")
        (secret / "shadow-like").chmod(0o600)
        (secret / "public").write_text("PUBLIC-7\n", encoding="utf-8")
        (secret / "public").chmod(0o644)
        unreadable_in_etc.cache_clear()
        res = Sandbox(tmp_path).run(
            f"cat {secret}/shadow-like; cat {secret}/public", cwd=tmp_path, timeout=30
        )
    finally:
        shutil.rmtree(secret, ignore_errors=True)
        unreadable_in_etc.cache_clear()
    assert "ROOT-ONLY-5521" not in res.output
    assert "PUBLIC-7" in res.output


def test_unreadable_in_etc_lists_files_and_folders(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    (etc / "ssl" / "private").mkdir(parents=True)
    (etc / "ssl" / "private" / "key.pem").write_text("k\n", encoding="utf-8")
    (etc / "ssl" / "private").chmod(0o700)
    (etc / "shadow").write_text("s\n", encoding="utf-8")
    (etc / "shadow").chmod(0o640)
    (etc / "passwd").write_text("p\n", encoding="utf-8")
    (etc / "passwd").chmod(0o644)
    files, dirs = unreadable_in_etc.__wrapped__(str(etc))
    assert files == (etc / "shadow",)
    assert dirs == (etc / "ssl" / "private",)
    assert stat.S_IMODE((etc / "passwd").stat().st_mode) == 0o644
