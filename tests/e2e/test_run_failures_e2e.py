"""``chimera run`` over a checkout whose ``.chimera/memory.db`` git tracks, and a run whose
internal git fails (issue 38, row 1): the tracked database is explained in one line and does
not break the run; an internal git failure is exit 3 with git's whole message, and the run is
left ``stopped`` (crashed), never ``running``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.cli.demo import DEMO_DIR, write_project

SCRIPT = f"scripted:{DEMO_DIR / 'script.yaml'}"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        [*GIT, *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def remember(text: str, root: Path) -> None:
    """``chimera memory add`` in its own process: its exit checkpoints SQLite's WAL into
    ``memory.db``, as a user's command does."""
    argv = [sys.executable, "-m", "chimera", "memory", "add", text, "--root", str(root)]
    subprocess.run(argv, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    root.mkdir()
    write_project(root)
    return root


@pytest.mark.slow
def test_a_tracked_memory_database_is_explained_and_does_not_break_the_run(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What the new user did: a memory database, `git add -A` before the ignore file existed,
    # then changes staged and made again (index unlike both HEAD and the file).
    db = project / ".chimera" / "memory.db"
    remember("use Decimal for money", project)
    git(project, "add", "-f", ".chimera/memory.db")
    git(project, "commit", "-qm", "commit the database by mistake")
    remember("second", project)
    git(project, "add", "-f", ".chimera/memory.db")
    remember("third", project)
    assert git(project, "status", "--porcelain", "--", ".chimera").startswith("MM")
    capsys.readouterr()

    code = main(["run", "--root", str(project), "--quiet", "--model", SCRIPT, "--run-id", "t1"])
    out, err = capsys.readouterr()
    assert code == 5, err + out  # paused at the human checkpoint, as the demo does
    warnings = [line for line in err.splitlines() if line.startswith("chimera: warning:")]
    assert warnings == [
        "chimera: warning: git tracks .chimera/memory.db, Chimera's local state (it changes "
        "on every run); stop tracking it and keep the files: git rm -r --cached .chimera && "
        "git commit -m 'Stop tracking .chimera'"
    ]
    assert db.is_file()
    # The sandbox's long description once per run (in the summary).
    assert (out + err).count("own pid namespace") == 1, out + err


def test_an_internal_git_failure_is_exit_3_and_the_run_is_not_left_running(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The run's snapshot store exists but git cannot read its configuration.
    store = project / ".chimera" / "runs" / "t2" / "snapshots" / "git"
    (store / "objects").mkdir(parents=True)
    (store / "refs").mkdir()
    (store / "HEAD").write_text("ref: refs/heads/main\n")
    (store / "config").write_text("[core\nthis is not a git config file\n")

    code = main(["run", "--root", str(project), "--quiet", "--model", SCRIPT, "--run-id", "t2"])
    err = capsys.readouterr().err
    assert code == 3, err
    assert err.count("\n") == 1, err
    assert err.startswith("chimera: internal error: git ")
    assert "bad config line 1" in err  # git's own message, whole

    assert main(["status", "t2", "--root", str(project), "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["status"] == "stopped"
    assert state["stop_reason"] == "crashed"
    assert "chimera resume t2" in state["stop_detail"]


@pytest.mark.slow
def test_solve_prints_the_sandbox_description_once(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["solve", "fix the balance", "--root", str(project), "--model", SCRIPT])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert (out + err).count("own pid namespace") == 1, out + err
    assert "sandbox: bwrap: no network, own pid namespace" in out  # the summary's line
    assert err.splitlines()[0].endswith("; sandbox: bwrap")  # the live start line
