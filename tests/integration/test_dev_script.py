"""scripts/dev, the README's two set-up commands, on a machine without bubblewrap: simulated
with a PATH that holds every program of this one but ``bwrap`` (and, for an unprivileged
user, ``sudo`` and ``apt-get``; ``id`` answers the user id asked for)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "scripts" / "dev"
NO_BWRAP = (
    "dev: bubblewrap is missing and cannot be installed here (no root, no sudo): "
    "sudo apt-get install bubblewrap"
)


def machine(folder: Path, *, uid: int, leave_out: tuple[str, ...]) -> Path:
    """A folder of links to every program on PATH but ``leave_out``, with an ``id`` that
    reports ``uid``; the PATH of the simulated machine."""
    folder.mkdir(parents=True)
    for entry in os.environ["PATH"].split(os.pathsep):
        if not entry or not Path(entry).is_dir():
            continue
        for program in Path(entry).iterdir():
            link = folder / program.name
            if program.name in leave_out or link.exists() or link.is_symlink():
                continue
            if program.is_file() and os.access(program, os.X_OK):
                link.symlink_to(program)
    (folder / "id").unlink(missing_ok=True)
    (folder / "id").write_text(f'#!/bin/sh\n[ "$1" = -u ] && echo {uid} || exec /usr/bin/id "$@"\n')
    (folder / "id").chmod(0o755)
    return folder


def dev(verb: str, path: Path, venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env |= {"PATH": str(path), "CHIMERA_VENV": str(venv)}
    return subprocess.run(
        ["bash", str(DEV), verb, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs the real bwrap to link")
def test_as_root_with_apt_the_set_up_installs_bubblewrap_once(tmp_path: Path) -> None:
    path = machine(tmp_path / "bin", uid=0, leave_out=("bwrap", "sudo", "apt-get"))
    real = shutil.which("bwrap")
    calls = tmp_path / "apt-calls"
    # apt-get as this machine's: "installing" bubblewrap puts bwrap on PATH.
    (path / "apt-get").write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {calls}\n'
        f'case "$*" in *install*bubblewrap*) ln -sf {real} {path}/bwrap ;; esac\n'
    )
    (path / "apt-get").chmod(0o755)
    first = dev("system", path, tmp_path / "venv")
    assert first.returncode == 0, first.stderr
    assert "dev: installing bubblewrap (apt-get, as root)" in first.stdout
    assert "dev: system packages: ok" in first.stdout
    assert calls.read_text().splitlines() == ["update -qq", "install -y -qq bubblewrap"]
    again = dev("system", path, tmp_path / "venv")
    assert again.returncode == 0 and "installing" not in again.stdout
    assert len(calls.read_text().splitlines()) == 2, "a second run installs nothing"


def test_without_bubblewrap_or_privileges_the_test_command_stops_first(tmp_path: Path) -> None:
    path = machine(tmp_path / "bin", uid=1000, leave_out=("bwrap", "sudo", "apt-get"))
    venv = tmp_path / "venv"
    proc = dev("test", path, venv)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [NO_BWRAP]
    assert not venv.exists(), "it stopped before setting anything up"


def fast_venv(folder: Path, spec: str = ".[agent]") -> Path:
    """An environment that sees this one's packages (Chimera included) and is marked as
    holding the install ``spec`` (the demo's, by default), so scripts/dev skips its set-up:
    made in a fraction of a second, without the package index."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (site,) = folder.glob("lib/python*/site-packages")
    ours = sysconfig.get_paths()["purelib"]
    (site / "outer.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    (folder / ".chimera-installed").write_text(f"{digest} {spec}\n")
    return folder


def test_the_demo_installs_the_agent_extra_over_a_plain_install(tmp_path: Path) -> None:
    """The demo runs the agent engine: an environment holding only the plain install is
    upgraded to the agent extra (a new user's first command once failed here, exit 2)."""
    path = machine(tmp_path / "bin", uid=1000, leave_out=("sudo", "apt-get"))
    venv = fast_venv(tmp_path / "venv", spec=".")
    proc = dev("demo", path, venv, "--quiet")
    # This environment has no pip, so the install itself fails; what it asked for is the point.
    assert f"dev: installing Chimera (.[agent]) into {venv}" in proc.stdout


@pytest.mark.slow
def test_without_bubblewrap_the_demo_runs_scrubbed_and_says_it_is_weaker(tmp_path: Path) -> None:
    path = machine(tmp_path / "bin", uid=1000, leave_out=("bwrap", "sudo", "apt-get"))
    venv = fast_venv(tmp_path / "venv")
    proc = dev("demo", path, venv, "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert NO_BWRAP in proc.stdout
    assert "dev: the demo runs without isolation: --sandbox scrubbed (weaker)" in proc.stdout
    assert "scrubbed environment only (requested): weaker" in proc.stdout
    assert "WEAKER: --sandbox scrubbed" in proc.stdout
    assert "demo: every step happened as described" in proc.stdout
