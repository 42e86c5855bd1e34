"""Bubblewrap mode: the kernel is the boundary (secrets, network, filesystem, processes)."""

from __future__ import annotations

import os
import socket
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chimera.sandbox import Sandbox, bwrap_available, probe_bwrap

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.skipif(
        not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}"
    ),
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    return root


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    try:
        yield int(server.getsockname()[1])
    finally:
        server.close()


def test_describe_and_mode(workspace: Path) -> None:
    sandbox = Sandbox(workspace, mode="bwrap")
    assert sandbox.mode == "bwrap"
    assert not sandbox.weaker
    assert sandbox.describe().startswith("bwrap: no network, own pid namespace")
    info = sandbox.info()
    assert info.strict and info.mode == "bwrap" and info.bubblewrap.startswith("bubblewrap")
    assert info.as_dict()["limits"]["processes"] == 512
    assert info.markdown().startswith("Sandbox: `bwrap` (strict)")


def test_parent_environ_holds_no_secret_of_any_name(
    workspace: Path, secret_probe: Callable[[Path, str], str]
) -> None:
    out = secret_probe(workspace, "bwrap")
    assert out.startswith("bwrap 0 CLEAN"), out


def test_network_is_unreachable(workspace: Path, listener: int) -> None:
    code = textwrap.dedent(
        f"""
        import socket
        try:
            socket.create_connection(("127.0.0.1", {listener}), timeout=5).close()
            print("CONNECTED")
        except OSError as exc:
            print("BLOCKED", exc)
        """
    )
    inside = Sandbox(workspace, mode="bwrap").run(
        [sys.executable, "-c", code], cwd=workspace, timeout=30
    )
    assert "BLOCKED" in inside.output, inside.output
    # The same probe outside bubblewrap connects: the listener is real.
    outside = Sandbox(workspace, mode="scrubbed").run(
        [sys.executable, "-c", code], cwd=workspace, timeout=30
    )
    assert "CONNECTED" in outside.output, outside.output


def test_writes_inside_only(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    sandbox = Sandbox(workspace, mode="bwrap")
    result = sandbox.run(
        f"echo in > inside.txt && mkdir -p sub && echo deep > sub/f; "
        f"echo out > {outside}; echo hook > .git/hooks-x; echo tmp > /tmp/t && cat /tmp/t",
        cwd=workspace,
        timeout=30,
    )
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert (workspace / "sub" / "f").read_text() == "deep\n"
    assert not outside.exists()
    assert "Read-only file system" in result.output
    assert not (workspace / ".git" / "hooks-x").exists(), ".git must be read-only inside"
    assert "tmp" in result.output  # a private /tmp is writable
    assert not Path("/tmp/t").exists() or Path("/tmp/t").read_text() != "tmp\n"


def test_own_pid_namespace(workspace: Path) -> None:
    result = Sandbox(workspace, mode="bwrap").run(
        "ls /proc | grep -c '^[0-9]'", cwd=workspace, timeout=30
    )
    assert result.ok
    assert int(result.output.strip()) < 10, result.output


def test_timeout_kills_processes_inside(workspace: Path, tmp_path: Path) -> None:
    # The heartbeat goes to a writable folder outside the workspace: the workspace's writes of
    # a command stopped at its timeout are reverted with the write cap's overlay.
    outside = tmp_path / "outside"
    outside.mkdir()
    sandbox = Sandbox(workspace, mode="bwrap", extra_writable=[outside])
    start = time.monotonic()
    result = sandbox.run(
        f"(while true; do date +%s%N > {outside}/beat; date > beat; sleep 0.05; done) & sleep 60",
        cwd=workspace,
        timeout=1.0,
    )
    assert result.timed_out
    assert time.monotonic() - start < 20
    assert not (workspace / "beat").exists()
    time.sleep(0.5)
    first = (outside / "beat").read_text()
    time.sleep(0.5)
    assert (outside / "beat").read_text() == first, "a background process survived"


def test_extra_writable_and_read_only_paths(workspace: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (workspace / "vendor").mkdir()
    sandbox = Sandbox(
        workspace, mode="bwrap", extra_writable=[cache], read_only_paths=[Path("vendor")]
    )
    sandbox.run(f"echo c > {cache}/x; echo v > vendor/x", cwd=workspace, timeout=30)
    assert (cache / "x").exists()
    assert not (workspace / "vendor" / "x").exists()


@pytest.fixture
def home_outside_tmp() -> Iterator[Path]:
    # The sandbox gets a private /tmp, so a home folder must live elsewhere to be tested.
    import shutil
    import tempfile

    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.cwd()
    home = Path(tempfile.mkdtemp(prefix="chimera-home-", dir=base))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


HOME_SECRETS = {
    ".ssh/id_ed25519": "PRIVATE-KEY-MATERIAL",
    ".git-credentials": "https://u:TOKEN-123@github.com",
    ".vault-token": "hvs.VAULT-TOKEN-9",
    ".config/git/credentials": "https://u:GITCRED-7@example.com",
    ".huggingface/token": "hf_HUGGING-TOKEN-3",
    "notes.txt": "ordinary file",
}


def test_home_is_a_fresh_empty_folder(
    workspace: Path, home_outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No fixed list of credential stores: the whole home folder is an empty tmpfs."""
    home = home_outside_tmp
    for rel, text in HOME_SECRETS.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    cats = "; ".join(f"cat {home}/{rel}" for rel in HOME_SECRETS)
    res = Sandbox(workspace, mode="bwrap").run(
        f"ls -A {home} | wc -l; {cats}; echo new > $HOME/x && cat $HOME/x",
        cwd=workspace,
        timeout=30,
    )
    for text in HOME_SECRETS.values():
        assert text not in res.output
    assert res.output.splitlines()[0].strip() == "0", res.output
    assert res.output.rstrip().endswith("new"), res.output  # home is writable scratch
    # Outside the sandbox nothing changed, and nothing was written there.
    assert (home / ".ssh" / "id_ed25519").read_text(encoding="utf-8").startswith("PRIVATE")
    assert not (home / "x").exists()


def test_credential_paths_only_under_visible_folders(tmp_path: Path) -> None:
    from chimera.sandbox.layout import credential_paths

    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".netrc").write_text("machine x\n", encoding="utf-8")
    (home / ".cargo").mkdir()
    (home / ".cargo" / "credentials.toml").write_text("t\n", encoding="utf-8")
    # Only stores under a folder the sandbox shows (here a toolchain folder of the home).
    assert credential_paths([home / ".cargo"], [home]) == (home / ".cargo/credentials.toml",)
    assert set(credential_paths([home], [home])) == {
        home / ".aws",
        home / ".netrc",
        home / ".cargo/credentials.toml",
    }
    assert credential_paths([tmp_path / "elsewhere"], [home]) == ()


def test_toolchain_paths_are_prefixes_not_script_folders(tmp_path: Path) -> None:
    from chimera.sandbox.layout import toolchain_paths

    home = tmp_path / "home"
    venv = tmp_path / "opt" / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib").mkdir()
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "share").mkdir()
    ws = home / "project"
    ws.mkdir()
    path_env = f"{venv}/bin:{home}/.local/bin:/usr/bin:relative/bin:{home}:{tmp_path}"
    found = toolchain_paths(workspace=ws, home=home, path_env=path_env, prefixes=[])
    # A bin folder outside home brings its prefix; inside home only the bin folder itself;
    # system folders, relative entries, home and the workspace's ancestors never.
    assert found == (home / ".local" / "bin", venv)


def test_tools_outside_the_system_folders_stay_visible(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CI checkout under /tmp has its virtualenv there too; the private /tmp must not hide it.
    tools = tmp_path / "venv" / "bin"
    tools.mkdir(parents=True)
    script = tools / "hello-tool"
    script.write_text("#!/bin/sh\necho hello from tmp\n", encoding="utf-8")
    script.chmod(0o755)
    (tmp_path / "beside.txt").write_text("beside the venv\n", encoding="utf-8")
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    res = Sandbox(workspace, mode="bwrap").run(
        f"hello-tool; cat {tmp_path}/beside.txt", cwd=workspace, timeout=30
    )
    assert "hello from tmp" in res.output
    assert "beside the venv" not in res.output


def test_no_capability_inside_so_masks_cannot_be_unmounted(workspace: Path) -> None:
    """Started by root, bubblewrap would keep every capability in its user namespace: enough
    to unmount a mask and read what it hides."""
    (workspace / ".env").write_text("KEY=behind-the-mask-31\n", encoding="utf-8")
    res = Sandbox(workspace, mode="bwrap").run(
        "grep CapEff /proc/self/status; umount .env; cat .env; mkdir -p x && umount /tmp",
        cwd=workspace,
        timeout=30,
    )
    assert "CapEff:\t0000000000000000" in res.output, res.output
    assert "behind-the-mask-31" not in res.output
