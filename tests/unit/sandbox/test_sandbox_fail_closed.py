"""When the strict sandbox cannot start, nothing runs: one line says why and names the opt-out.

Ubuntu 24.04 restricts unprivileged user namespaces through AppArmor; bubblewrap then stops
with ``setting up uid map: Permission denied``. A fake ``bwrap`` prints exactly that.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from chimera.cli import main
from chimera.errors import SandboxError
from chimera.sandbox import Sandbox, SandboxMode, probe_bwrap

UID_MAP = "bwrap: setting up uid map: Permission denied"


@pytest.fixture
def denied_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    fake = tmp_path / "fakebin"
    fake.mkdir()
    script = fake / "bwrap"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = --version ] && { echo "bubblewrap 0.9.0"; exit 0; }; done\n'
        f"echo '{UID_MAP}' >&2\nexit 1\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    probe_bwrap.cache_clear()
    yield fake
    probe_bwrap.cache_clear()


def test_probe_reports_the_uid_map_refusal(denied_bwrap: Path) -> None:
    probe = probe_bwrap()
    assert probe.path == str(denied_bwrap / "bwrap")
    assert not probe.usable
    assert probe.reason == f"bubblewrap cannot run here: {UID_MAP}"


@pytest.mark.parametrize("mode", ["auto", "bwrap"])
def test_sandbox_fails_closed_in_one_line(
    denied_bwrap: Path, tmp_path: Path, mode: SandboxMode
) -> None:
    with pytest.raises(SandboxError) as caught:
        Sandbox(tmp_path, mode=mode)
    message = str(caught.value)
    assert "\n" not in message
    assert UID_MAP in message
    assert 'mode = "scrubbed"' in message


def test_prlimit_is_required_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    real = subprocess.run(["sh", "-c", "command -v bwrap"], capture_output=True, text=True)
    if real.returncode != 0:
        pytest.skip("needs a bwrap binary to copy the PATH entry of")
    (fake / "bwrap").symlink_to(real.stdout.strip())
    monkeypatch.setenv("PATH", str(fake))
    probe_bwrap.cache_clear()
    try:
        with pytest.raises(SandboxError, match=r"prlimit \(util-linux\) not found"):
            Sandbox(tmp_path)
    finally:
        probe_bwrap.cache_clear()


def test_a_run_fails_closed_before_anything_runs(
    denied_bwrap: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "project"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "s.yaml").write_text(
        "requirements:\n  - id: notes\n    contains: {path: NOTES.md, pattern: done}\n",
        encoding="utf-8",
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"model": "m", "turns": []}), encoding="utf-8")
    code = main(["run", "--root", str(root), "--model", f"scripted:{script}", "--quiet"])
    err = capsys.readouterr().err
    assert code != 0
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert UID_MAP in lines[0]
    assert not (root / "NOTES.md").exists()
    runs = root / ".chimera" / "runs"
    assert not runs.exists() or not any(runs.iterdir())
