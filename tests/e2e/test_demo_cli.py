"""`chimera demo` end to end: red → green, a reverted attempt carried forward, a risk: high
pause approved by someone else, and the audit log verified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.governance.audit import verify_audit_log


def test_demo_runs_the_whole_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "demo"
    code = main(["demo", "--dir", str(target), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "SCRIPTED" in out
    assert "awaiting_approval — human_checkpoint" in out
    assert "run demo: done — goal_met" in out
    assert "demo: every step happened as described" in out
    # The sandbox's long description once (the first summary), not once per summary.
    assert out.count("own pid namespace") == 1, out
    state = json.loads((target / ".chimera/runs/demo/state.json").read_text())
    assert state["status"] == "done"
    assert state["approvals"][0]["by"] == "demo-reviewer"
    assert state["started_by"] == "demo-user"
    cards = {c["id"]: c for c in state["cards"]}
    assert cards["balance-correct"]["attempts"] == 2
    audit = target / ".chimera/runs/demo/audit.jsonl"
    assert verify_audit_log(audit, head=state["audit_head"]).ok
    events = [json.loads(line)["event"] for line in audit.read_text().splitlines()]
    assert events.count("history_injected") == 1
    assert events.count("revert") >= 1
    assert "sum(entries)" in (target / "ledger/core.py").read_text()
    assert (target / "migrations/0002_balance.sql").is_file()


def test_demo_refuses_an_existing_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err


def no_bwrap_path(folder: Path) -> str:
    """A PATH with every program of this one but bubblewrap (links in ``folder``)."""
    import os

    folder.mkdir()
    for entry in os.environ["PATH"].split(os.pathsep):
        if not entry or not Path(entry).is_dir():
            continue
        for program in Path(entry).iterdir():
            link = folder / program.name
            if program.name == "bwrap" or link.exists() or link.is_symlink():
                continue
            if program.is_file() and os.access(program, os.X_OK):
                link.symlink_to(program)
    return str(folder)


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder tempfile makes the demo's project in."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_without_bubblewrap_the_demo_stops_with_the_line_that_installs_it(
    tmp_path: Path,
    temp_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from chimera.sandbox.bwrap import probe_bwrap

    monkeypatch.setenv("PATH", no_bwrap_path(tmp_path / "bin"))
    probe_bwrap.cache_clear()
    try:
        code = main(["demo", "--quiet"])
    finally:
        probe_bwrap.cache_clear()
    assert code == 2
    assert capsys.readouterr().err == (
        "chimera: error: bubblewrap (the strict sandbox) cannot start here (bubblewrap not "
        "found): install it (sudo apt-get install bubblewrap), or run the demo without "
        "isolation: chimera demo --sandbox scrubbed (weaker)\n"
    )
    assert list(temp_root.iterdir()) == [], "the temporary project is removed"


@pytest.mark.slow
def test_the_scrubbed_demo_is_labelled_weaker_and_removes_its_project(
    tmp_path: Path,
    temp_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from chimera.sandbox.bwrap import probe_bwrap

    monkeypatch.setenv("PATH", no_bwrap_path(tmp_path / "bin"))
    probe_bwrap.cache_clear()
    try:
        code = main(["demo", "--quiet", "--sandbox", "scrubbed"])
    finally:
        probe_bwrap.cache_clear()
    out = capsys.readouterr().out
    assert code == 0, out
    assert "WEAKER: --sandbox scrubbed runs the model's commands" in out
    assert "sandbox: scrubbed environment only (requested): weaker" in out
    assert "demo: every step happened as described" in out
    assert list(temp_root.iterdir()) == []
    assert "Removed " in out and "(keep the project with --keep or --dir DIR)" in out


@pytest.mark.slow
def test_keep_leaves_the_temporary_project(
    temp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--quiet", "--keep"]) == 0
    (kept,) = temp_root.iterdir()
    assert (kept / ".chimera" / "runs" / "demo" / "audit.jsonl").is_file()
    assert f"The project and its run folder stay in {kept}" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.bwrap
def test_demo_passes_with_python3_behind_a_pyenv_like_shim_in_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # What pyenv users meet (issue 38, row 3): `python3` on PATH is a script under the home
    # folder that execs the manager, which runs the chosen version; the sandbox's home is
    # empty, so before the fix `python3 -m unittest -q` exited 127 inside and the demo failed.
    import sys

    home = tmp_path / "home"
    root = home / ".pyenv"
    (root / "versions" / "3" / "bin").mkdir(parents=True)
    (root / "versions" / "3" / "bin" / "python3").symlink_to(sys.executable)
    (root / "version").write_text("3\n")
    (root / "libexec").mkdir()
    manager = root / "libexec" / "pyenv"
    manager.write_text(
        f'#!/bin/sh\nv=$(cat "{root}/version")\nshift\nprog="$1"\nshift\n'
        f'exec "{root}/versions/$v/bin/$prog" "$@"\n'
    )
    (root / "shims").mkdir()
    shim = root / "shims" / "python3"
    shim.write_text(f'#!/bin/sh\nexec "{manager}" exec python3 "$@"\n')
    manager.chmod(0o755)
    shim.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{root / 'shims'}:/usr/local/bin:/usr/bin:/bin")

    code = main(["demo", "--dir", str(tmp_path / "demo"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "demo: every step happened as described" in out
