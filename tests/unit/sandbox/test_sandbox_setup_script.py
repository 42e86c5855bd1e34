"""scripts/setup-sandbox.sh, the action's sandbox set-up step, against fake system tools.

The real thing (Ubuntu 24.04's AppArmor restriction on a hosted runner) cannot be reproduced
here; fakes of ``sudo``, ``apt-get``, ``apparmor_parser``, ``sysctl`` and ``bwrap`` on PATH
record their calls, and ``bwrap`` works only once the fix a scenario allows has been applied.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "setup-sandbox.sh"
UID_MAP = "bwrap: setting up uid map: Permission denied"

FAKES = {
    # Runs the command as given (the fake tools below need no privileges).
    "sudo": '[ "$1" = -n ] && shift; echo "sudo $*" >> "$LOG"; exec "$@"',
    "apt-get": (
        'echo "apt-get $*" >> "$LOG"\n'
        'case "$*" in *install*) cp "$FAKE/bwrap.real" "$FAKE/bwrap";; esac'
    ),
    "apparmor_parser": (
        'echo "apparmor_parser $*" >> "$LOG"\n'
        '[ -n "$PARSER_FAILS" ] && exit 1; touch "$STATE/profile"'
    ),
    "sysctl": 'echo "sysctl $*" >> "$LOG"; [ -n "$SYSCTL_FAILS" ] && exit 1; touch "$STATE/sysctl"',
    "bwrap.real": (
        'case "$1" in --version) echo "bubblewrap 0.9.0"; exit 0;; esac\n'
        'echo "bwrap probe" >> "$LOG"\n'
        'for fix in $WORKS_AFTER; do [ -e "$STATE/$fix" ] && exit 0; done\n'
        f'echo "{UID_MAP}" >&2; exit 1'
    ),
    "prlimit": "exit 0",
}


def _run(
    tmp_path: Path, *, mode: str = "agent", installed: bool = True, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[str], Path]:
    fake = tmp_path / "bin"
    state = tmp_path / "state"
    profiles = tmp_path / "apparmor.d"
    for folder in (fake, state, profiles):
        folder.mkdir(exist_ok=True)
    for name, body in FAKES.items():
        path = fake / name
        path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        path.chmod(0o755)
    if installed:
        shutil.copy(fake / "bwrap.real", fake / "bwrap")
    for tool in ("bash", "id", "tee", "cat", "cp", "touch", "true"):
        found = shutil.which(tool)
        if found and not (fake / tool).exists():
            (fake / tool).symlink_to(found)
    log = tmp_path / "log"
    log.write_text("", encoding="utf-8")
    full_env = {
        "PATH": str(fake),
        "LOG": str(log),
        "FAKE": str(fake),
        "STATE": str(state),
        "CHIMERA_MODE": mode,
        "CHIMERA_APPARMOR_DIR": str(profiles),
        "WORKS_AFTER": "",
        "PARSER_FAILS": "",
        "SYSCTL_FAILS": "",
        **env,
    }
    proc = subprocess.run(
        [str(fake / "bash"), str(SCRIPT)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    calls = log.read_text(encoding="utf-8").splitlines()
    return proc, calls, profiles


def test_the_action_runs_the_script_only_for_agent_and_verify() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    steps = [s for s in action["runs"]["steps"] if "setup-sandbox.sh" in str(s.get("run", ""))]
    assert len(steps) == 1
    assert steps[0]["if"] == "inputs.mode == 'agent' || inputs.mode == 'verify'"
    names = [s.get("name") for s in action["runs"]["steps"]]
    assert names.index(steps[0]["name"]) < names.index("Chimera (${{ inputs.mode }})")


@pytest.mark.parametrize("mode", ["check", "decide", "publish", "drain"])
def test_other_modes_do_nothing(tmp_path: Path, mode: str) -> None:
    proc, calls, _ = _run(tmp_path, mode=mode, installed=False)
    assert proc.returncode == 0 and calls == []


def test_working_bubblewrap_needs_no_change(tmp_path: Path) -> None:
    # "Works" is a fix marker that exists from the start.
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "always").touch()
    proc, calls, profiles = _run(tmp_path, WORKS_AFTER="always")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert calls == ["bwrap probe"]
    assert not any(profiles.iterdir())


def test_missing_bubblewrap_is_installed(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "always").touch()
    proc, calls, _ = _run(tmp_path, installed=False, WORKS_AFTER="always")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert calls[:2] == ["apt-get update -qq", "apt-get install -y -qq bubblewrap"]
    assert "installing bubblewrap" in proc.stdout


def test_ubuntu_2404_gets_the_apparmor_profile(tmp_path: Path) -> None:
    proc, calls, profiles = _run(tmp_path, WORKS_AFTER="profile")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    profile = (profiles / "bwrap").read_text(encoding="utf-8")
    assert f"profile bwrap {tmp_path}/bin/bwrap flags=(unconfined) {{" in profile
    assert "  userns," in profile and profile.startswith("abi <abi/4.0>,")
    assert f"apparmor_parser -r {profiles}/bwrap" in calls
    assert not any(c.startswith("sysctl") for c in calls)  # no fallback needed
    assert UID_MAP in proc.stdout


def test_sysctl_only_when_the_profile_fails(tmp_path: Path) -> None:
    proc, calls, _ = _run(tmp_path, WORKS_AFTER="sysctl", PARSER_FAILS="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    parser = next(i for i, c in enumerate(calls) if c.startswith("apparmor_parser"))
    sysctl = calls.index("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")
    assert parser < sysctl


def test_fails_closed_in_one_line_when_nothing_helps(tmp_path: Path) -> None:
    proc, _calls, _ = _run(tmp_path, WORKS_AFTER="", PARSER_FAILS="1", SYSCTL_FAILS="1")
    assert proc.returncode == 1
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error::")]
    assert len(errors) == 1
    assert UID_MAP in errors[0] and "sandbox: scrubbed" in errors[0]


def test_scrubbed_opt_out_is_loud(tmp_path: Path) -> None:
    proc, calls, _ = _run(tmp_path, installed=False, CHIMERA_SANDBOX="scrubbed")
    assert proc.returncode == 0 and calls == []
    assert proc.stdout.startswith("::warning::sandbox: scrubbed")


def test_script_is_executable_and_shell_clean() -> None:
    assert os.access(SCRIPT, os.X_OK)
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
