"""Shared probes of the sandbox tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

SECRET = "s3cr3t-value-4f9a1c"

PROBE = textwrap.dedent(
    """
    import glob, os, sys
    secret = sys.argv[1].encode()
    found = []
    candidates = [f"/proc/{os.getppid()}/environ"] + glob.glob("/proc/*/environ")
    for path in candidates:
        try:
            with open(path, "rb") as handle:
                if secret in handle.read():
                    found.append(path)
        except OSError:
            pass
    print("FOUND " + " ".join(found) if found else "CLEAN", len(candidates))
    """
)

LAUNCHER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from chimera.sandbox import Sandbox
    workspace, mode, probe, secret = sys.argv[1:5]
    result = Sandbox(Path(workspace), mode=mode).run(
        [sys.executable, probe, secret], cwd=Path(workspace), timeout=60
    )
    print(result.mode, result.exit_code, result.output)
    """
)


def probe_from_parent_with_secret(workspace: Path, mode: str) -> str:
    """Run the sandbox from a parent whose *initial* environment holds a secret.

    ``/proc/PID/environ`` shows a process's environment as it was at exec, so the secret is
    planted by starting a fresh interpreter with it, which then runs the sandboxed probe.
    """
    probe = workspace / "probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    env = dict(os.environ)
    env["CHIMERA_TEST_SECRET_zq"] = SECRET
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(workspace), mode, str(probe), SECRET],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return proc.stdout


@pytest.fixture
def secret_probe() -> Callable[[Path, str], str]:
    return probe_from_parent_with_secret
