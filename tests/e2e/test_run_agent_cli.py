"""`chimera run --agent`, then `resume` / `approve`: the run keeps the profile it started with
(recorded with its hash), and refuses, in one line, a changed or different profile."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.cli.demo import DEMO_DIR, write_project
from chimera.cli.run_agent import as_recorded
from chimera.orchestration.state import RunStore

SCRIPT = f"scripted:{DEMO_DIR / 'script.yaml'}"
CAREFUL = "profile: careful\ninstructions: Keep the ledger exact.\nsolver: {max_attempts: 3}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    root.mkdir()
    write_project(root)
    return root


def profile_audits(root: Path, run_id: str) -> list[str]:
    audit = RunStore(root).run_dir(run_id) / "audit.jsonl"
    rows = [json.loads(line) for line in audit.read_text().splitlines()]
    return [r["fields"]["profile"] for r in rows if r.get("event") == "meta.profile"]


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_as_recorded_is_root_relative_inside_and_absolute_outside(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "agents").mkdir(parents=True)
    assert as_recorded(root, str(root / "agents" / "a.yaml")) == "agents/a.yaml"
    assert as_recorded(root, str(tmp_path / "b.yaml")) == str((tmp_path / "b.yaml").resolve())


@pytest.mark.slow
def test_approve_reapplies_the_recorded_profile_and_refuses_a_changed_one(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = project.parent / "careful.yaml"
    profile.write_text(CAREFUL, encoding="utf-8")
    other = project.parent / "other.yaml"
    other.write_text(CAREFUL.replace("careful", "other"), encoding="utf-8")
    base = ["--root", str(project), "--quiet"]
    run = ["run", *base, "--model", SCRIPT, "--agent", str(profile), "--run-id", "r1"]
    assert main([*run, "--started-by", "alice"]) == 5, capsys.readouterr().out
    capsys.readouterr()
    recorded = RunStore(project).load("r1").extra["agent_profile"]
    assert recorded == {
        "path": str(profile.resolve()),
        "sha256": hashlib.sha256(CAREFUL.encode()).hexdigest(),
    }
    assert profile_audits(project, "r1") == ["careful"]

    # Another profile named on the command line: refused, whichever command.
    for cmd in (["approve", "r1", "--by", "bob"], ["resume", "r1"]):
        assert main([*cmd, *base, "--agent", str(other)]) == 2
        err = one_line_error(capsys)
        assert "started with the agent profile" in err and "--agent now names" in err

    # The recorded file changed since the run started: refused, with both hashes.
    profile.write_text(CAREFUL + "tools: [read_file, write_file, run_command]\n")
    assert main(["approve", "r1", *base, "--by", "bob"]) == 2
    err = one_line_error(capsys)
    assert "changed since the run started" in err and "restore the file" in err
    assert RunStore(project).load("r1").status.value == "awaiting_approval"

    # Restored: approved without --agent, the recorded profile applies again.
    profile.write_text(CAREFUL, encoding="utf-8")
    assert main(["approve", "r1", *base, "--by", "bob"]) == 0, capsys.readouterr()
    assert profile_audits(project, "r1") == ["careful", "careful"]


@pytest.mark.slow
def test_a_run_started_without_a_profile_is_not_resumed_under_one(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = project.parent / "careful.yaml"
    profile.write_text(CAREFUL, encoding="utf-8")
    base = ["--root", str(project), "--quiet"]
    run = ["run", *base, "--model", SCRIPT, "--run-id", "r2", "--started-by", "alice"]
    assert main(run) == 5
    capsys.readouterr()
    assert "agent_profile" not in RunStore(project).load("r2").extra
    assert main(["approve", "r2", *base, "--by", "bob", "--agent", str(profile)]) == 2
    assert "started without an agent profile" in one_line_error(capsys)
    assert main(["approve", "r2", *base, "--by", "bob"]) == 0
    assert profile_audits(project, "r2") == []


class Killed(BaseException):
    """The process 'dies' here (BaseException: nothing on the way catches it)."""


@pytest.mark.slow
def test_a_run_killed_mid_card_keeps_its_record_and_resumes_under_the_profile(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chimera.cli.run_agent import start_profile, start_recorded
    from chimera.config import ChimeraConfig
    from chimera.orchestration.surfaces import RunRequest

    profile = project.parent / "careful.yaml"
    profile.write_text(CAREFUL, encoding="utf-8")

    def die_on_first_attempt(event: str, _fields: dict[str, object]) -> None:
        if event == "attempt_started":
            raise Killed

    agent, record = start_profile(project, str(profile))
    run = RunRequest(
        root=project,
        config=ChimeraConfig().with_overrides(sandbox="scrubbed"),
        model=SCRIPT,
        agent=agent,
        started_by="alice",
        spec_paths=("specs",),
        events=die_on_first_attempt,
    )
    with pytest.raises(Killed):
        start_recorded(run, record)
    (run_id,) = RunStore(project).record_ids()
    assert RunStore(project).load(run_id).extra["agent_profile"]["path"] == str(profile.resolve())
    base = ["--root", str(project), "--quiet", "--model", SCRIPT]
    assert main(["resume", run_id, *base]) == 5, capsys.readouterr()
    assert profile_audits(project, run_id) == ["careful", "careful"]
