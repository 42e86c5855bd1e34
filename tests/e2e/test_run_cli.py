"""`chimera run / status / approve / resume` as a user drives them (scripted model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.cli.demo import DEMO_DIR, write_project

SCRIPT = f"scripted:{DEMO_DIR / 'script.yaml'}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    root.mkdir()
    write_project(root)
    return root


@pytest.mark.slow
def test_run_pauses_then_another_person_approves(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--root", str(project), "--quiet"]
    code = main(["run", *base, "--model", SCRIPT, "--run-id", "r1", "--started-by", "alice"])
    out = capsys.readouterr().out
    assert code == 5, out  # awaiting approval
    assert "awaiting approval: balance-column" in out

    assert main(["status", "--root", str(project)]) == 0
    assert "run r1: awaiting_approval" in capsys.readouterr().out

    assert main(["approve", "r1", *base, "--by", "alice"]) == 2
    assert "cannot approve" in capsys.readouterr().err

    assert main(["resume", "r1", *base]) == 2
    assert "awaiting approval" in capsys.readouterr().err

    assert main(["approve", "r1", *base, "--by", "bob", "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["status"] == "done"
    assert state["stop_reason"] == "goal_met"
    assert set(state["final_results"].values()) == {"passed"}

    # Resuming a finished run changes nothing and reports it.
    assert main(["resume", "r1", *base]) == 0
    assert "run r1: done" in capsys.readouterr().out
    assert main(["status", "--root", str(project), "--all"]) == 0
    assert "r1  done (goal_met)" in capsys.readouterr().out


def test_run_without_model_is_a_one_line_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHIMERA_MODEL", raising=False)
    assert main(["run", "--root", str(project)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "no model" in err


def test_max_iterations_stop_has_its_exit_code(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "--root",
            str(project),
            "--quiet",
            "--model",
            SCRIPT,
            "--max-iterations",
            "1",
            "--run-id",
            "r2",
        ]
    )
    out = capsys.readouterr().out
    assert code == 4, out
    assert "max_iterations" in out


def test_task_file_and_bad_spec_path(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--root", str(project), "--model", SCRIPT, "--spec", "nope"]) == 2
    assert "spec path not found" in capsys.readouterr().err
    assert (
        main(
            [
                "run",
                "--root",
                str(project),
                "--model",
                SCRIPT,
                "--task-file",
                str(project / "missing.md"),
            ]
        )
        == 2
    )
    assert "--task-file" in capsys.readouterr().err


@pytest.mark.slow
def test_one_run_at_a_time_per_tree_and_interrupted_runs_are_named(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chimera.orchestration.state import RunStatus, RunStore, workspace_lock

    base = ["--root", str(project), "--quiet", "--model", SCRIPT]
    # Another process (here: this one, through a second lock handle) is changing the tree.
    with workspace_lock(project, owner="solve 123"):
        assert main(["run", *base, "--run-id", "r3"]) == 2
    err = capsys.readouterr().err
    assert "solve 123 is in progress" in err
    assert (project / ".chimera" / ".gitignore").read_text().strip().endswith("*")

    # A run left `running` by a dead process blocks a new run until it is resumed.
    assert main(["run", *base, "--run-id", "r4", "--max-iterations", "1"]) == 4
    store = RunStore(project)
    state = store.load("r4")
    state.status = RunStatus.RUNNING
    store.save(state)
    capsys.readouterr()
    assert main(["run", *base, "--run-id", "r5"]) == 2
    assert "run r4 was interrupted" in capsys.readouterr().err
    assert main(["status", "--root", str(project), "r4"]) == 0
    assert "chimera resume r4" in capsys.readouterr().out
    code = main(["run", *base, "--run-id", "r6", "--force", "--max-iterations", "1"])
    assert code == 4, capsys.readouterr().out


def test_max_iterations_holds_with_an_agent_profile(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The profile's overrides rebuild the configuration: --max-iterations must survive it.
    profile = project.parent / "careful.yaml"
    profile.write_text("profile: careful\nsolver: {max_attempts: 3}\n", encoding="utf-8")
    base = ["--root", str(project), "--quiet", "--model", SCRIPT, "--agent", str(profile)]
    assert main(["run", *base, "--run-id", "r7", "--max-iterations", "1"]) == 4
    assert "max_iterations" in capsys.readouterr().out
