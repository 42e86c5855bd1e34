"""The workspace's dotenv files are masked inside bubblewrap.

A command of an autonomous run (a test the agent wrote, run by the allowlisted test runner, or
a Spec check) could otherwise copy a key from ``.env`` into a file of the change, and so into
the pull request (found by tests/e2e/test_hostile_runs.py, text ``test-reads-dotenv``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.sandbox import Sandbox, bwrap_available, probe_bwrap
from chimera.sandbox.sandbox import workspace_secret_files

KEY = "dotenv-key-9c1e55aa"


def test_workspace_secret_files_are_dotenv_files_at_every_depth(tmp_path: Path) -> None:
    for name in (".env", ".env.local", ".env.example", ".env.sample", ".envrc-not-env"):
        (tmp_path / name).write_text("X=1\n", encoding="utf-8")
    (tmp_path / ".env.d").mkdir()
    (tmp_path / "config" / "deep").mkdir(parents=True)
    (tmp_path / "config" / ".env").write_text("X=1\n", encoding="utf-8")
    (tmp_path / "config" / "deep" / ".env.production").write_text("X=1\n", encoding="utf-8")
    (tmp_path / "config" / ".env.template").write_text("X=1\n", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / ".env").write_text("X=1\n", encoding="utf-8")
    (tmp_path / "secrets.txt").write_text("X=1\n", encoding="utf-8")
    (tmp_path / "config" / ".env.link").symlink_to(tmp_path / "secrets.txt")
    found = {p.relative_to(tmp_path).as_posix() for p in workspace_secret_files(tmp_path)}
    # Examples and templates stay readable (tests may load them); folders are not files; a
    # dotenv symlink masks its target.
    assert found == {
        ".env",
        ".env.local",
        ".envrc-not-env",
        "config/.env",
        "config/deep/.env.production",
        "secrets.txt",
    }


@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}")
def test_dotenv_reads_as_empty_and_cannot_be_copied_out(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "config").mkdir(parents=True)
    for rel in (".env", "config/.env"):
        (ws / rel).write_text(f"API_KEY={KEY}\n", encoding="utf-8")
    (ws / ".env.example").write_text("API_KEY=changeme\n", encoding="utf-8")
    res = Sandbox(ws, mode="bwrap").run(
        "cat .env config/.env; cp .env copied.txt; cp config/.env copied2.txt; "
        "cat .env.example; echo edited > .env; echo edited > config/.env",
        cwd=ws,
        timeout=30,
    )
    assert KEY not in res.output
    assert "changeme" in res.output  # examples are not secrets
    # The mask (a device node on a nodev mount) cannot even be opened: nothing is copied.
    for name in ("copied.txt", "copied2.txt"):
        copied = ws / name
        assert not copied.exists() or KEY not in copied.read_text(encoding="utf-8")
    # The mask is read-only: the real files are neither read nor overwritten.
    for rel in (".env", "config/.env"):
        assert (ws / rel).read_text(encoding="utf-8") == f"API_KEY={KEY}\n"
