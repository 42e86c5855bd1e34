"""What a command can learn of the host from inside the sandbox (issue 32, row 10): bubblewrap's
own argument list — the host ``PATH`` it sets, the folders it mounts, the held-out folders it
masks — is not readable through ``/proc/1/cmdline`` (nor any ``/proc/*/cmdline``); with the
write cap the held-out folder is not in the command's tree at all (no name in ``ls``, no mount
point in ``/proc/self/mountinfo``); a held-out folder outside every mounted folder is not
created inside the sandbox by its mask."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.integrations.server_sandbox import server_command
from chimera.runner import run_process
from chimera.sandbox import Sandbox, SandboxLimits, bwrap_available, probe_bwrap

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.skipif(
        not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}"
    ),
]

HELD = "heldout-payments-q7z"  # a name that says what the hidden checks are about
SHOW = (
    "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done; echo ==; ls -a; echo ==;"
    " cat /proc/self/mountinfo"
)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws-root-7e1"
    (ws / HELD).mkdir(parents=True)
    (ws / HELD / "hidden.yaml").write_text("requirements: []\n", encoding="utf-8")
    (ws / "app.py").write_text("x = 1\n", encoding="utf-8")
    return ws


def _parts(output: str) -> tuple[str, str, str]:
    cmdlines, listing, mountinfo = output.split("==\n", 2)
    return cmdlines, listing, mountinfo


def _assert_no_bwrap_options(cmdlines: str, ws: Path) -> None:
    for option in ("--setenv", "--ro-bind", "--bind", "--tmpfs", "--symlink", "--perms"):
        assert option not in cmdlines, cmdlines
    assert HELD not in cmdlines
    assert "/usr/bin:" not in cmdlines  # the host PATH bwrap was told to set
    assert "--args" in cmdlines  # what bubblewrap's pid 1 shows instead


@pytest.mark.parametrize("cap", [None, 64 * 1024 * 1024], ids=["no-cap", "write-cap"])
def test_bwraps_arguments_are_not_on_pid_1s_command_line(tmp_path: Path, cap: int | None) -> None:
    ws = _workspace(tmp_path)
    sandbox = Sandbox(
        ws, mode="bwrap", hidden=[ws / HELD], limits=SandboxLimits(write_cap_bytes=cap)
    )
    res = sandbox.run(SHOW, cwd=ws, timeout=60)
    assert res.ok, res.output
    cmdlines, listing, mountinfo = _parts(res.output)
    _assert_no_bwrap_options(cmdlines, ws)
    if cap is not None:
        # With the write cap the held-out folder is erased from the command's tree: no name,
        # no mount point; and it is still there (and unchanged) on the host.
        assert HELD not in listing and HELD not in mountinfo
        assert (ws / HELD / "hidden.yaml").is_file()
    else:
        # Without it the folder is masked where it is: its name shows, its files do not.
        masked = sandbox.run(f"cat {HELD}/hidden.yaml", cwd=ws, timeout=60)
        assert not masked.ok and "requirements" not in masked.output


def test_a_held_out_folder_outside_every_mount_is_not_created_inside(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "private-checks" / HELD
    outside.mkdir(parents=True)
    (outside / "hidden.yaml").write_text("requirements: []\n", encoding="utf-8")
    sandbox = Sandbox(ws, mode="bwrap", hidden=[outside])
    res = sandbox.run(
        f"test -e {outside} && echo VISIBLE; cat /proc/self/mountinfo", cwd=ws, timeout=60
    )
    assert "VISIBLE" not in res.output and HELD not in res.output


def test_a_stdio_servers_pid_1_shows_no_argument_of_bubblewrap(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    argv, env = server_command(
        ["/bin/sh", "-c", SHOW.split("; echo ==;")[0]], root=root, hidden=[root / HELD]
    )
    res = run_process(
        argv, cwd=root, timeout=60, env=env, output_limit=1 << 20, display="server", mode="bwrap"
    )
    assert res.ok, res.output
    _assert_no_bwrap_options(res.output, root)


def test_the_launch_folder_is_never_in_the_commands_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    ws = _workspace(tmp_path)
    (ws / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(ws / "tmp"))  # a TMPDIR inside the workspace
    sandbox = Sandbox(ws, mode="bwrap", hidden=[ws / HELD])
    res = sandbox.run("ls -a tmp; grep -r heldout . || true", cwd=ws, timeout=60)
    assert "chimera-launch" not in res.output and HELD not in res.output
