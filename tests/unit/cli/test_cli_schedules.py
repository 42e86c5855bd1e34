"""``chimera schedules list|check|next|approve`` through the real CLI entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.cli import main

JOBS = """\
schedules:
  - id: spec-green
    cron: {expr: "30 2 * * *", timezone: Europe/Warsaw}
    check: spec-green
  - id: tidy
    event: {kind: pull-request-merged, branch: main}
    task: Tidy the changelog.
    created_by: agent
    enabled: false
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / ".chimera.d" / "schedules"
    folder.mkdir(parents=True)
    (folder / "jobs.yaml").write_text(JOBS)
    return tmp_path


def test_list_check_and_next_with_a_stated_now(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schedules", "--root", str(root), "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split("\t")[:2] == ["spec-green", "on"]
    assert out[1].split("\t")[:2] == ["tidy", "awaiting approval"]
    assert main(["schedules", "--root", str(root), "check"]) == 0
    assert "2 schedule(s) in 1 file(s): ok" in capsys.readouterr().out
    argv = ["schedules", "--root", str(root), "next", "spec-green", "--now", "2025-03-29T12:00Z"]
    assert main([*argv, "--count", "2"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "spec-green\t2025-03-30T01:00:00+00:00\t2025-03-30T03:00:00+02:00 Europe/Warsaw",
        "spec-green\t2025-03-31T00:30:00+00:00\t2025-03-31T02:30:00+02:00 Europe/Warsaw",
    ]


def test_a_naive_now_and_a_broken_file_are_one_line_errors(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schedules", "--root", str(root), "next", "--now", "2025-03-29T12:00"]) == 2
    assert capsys.readouterr().err.strip().endswith("the scheduler needs aware times")
    (root / ".chimera.d" / "schedules" / "jobs.yaml").write_text(JOBS.replace("30 2", "99 2"))
    assert main(["schedules", "--root", str(root), "check"]) == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        ".chimera.d/schedules/jobs.yaml:3:18: cron.expr: cron '99 2 * * *': Bad minute"
    ]
    assert main(["schedules", "--root", str(root), "list"]) == 2  # nothing is listed as valid


def test_approve_enables_the_agent_proposal(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedules", "--root", str(root), "approve", "tidy", "--by", "alice"]) == 0
    assert "approved tidy as alice" in capsys.readouterr().out
    assert main(["schedules", "--root", str(root), "list"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[:2] == ["tidy", "on"]
    assert main(["schedules", "--root", str(root), "approve", "tidy", "--by", "alice"]) == 2
    assert "already enabled" in capsys.readouterr().err


def _run_log(root: Path, run_id: str, ts: str, task: str, started_by: str = "") -> None:
    """A real hash-chained audit log whose run_started event is at ``ts``."""
    import json

    from chimera.governance.audit_chain import GENESIS_HASH, entry_hash

    fields: dict[str, object] = {"task": task}
    if started_by:
        fields["started_by"] = started_by
    entry: dict[str, object] = {
        "event": "run_started", "fields": fields, "prev_hash": GENESIS_HASH,
        "run_id": run_id, "seq": 1, "ts": ts,
    }  # fmt: skip
    entry["hash"] = entry_hash(entry)
    folder = root / ".chimera" / "runs" / run_id
    folder.mkdir(parents=True)
    (folder / "audit.jsonl").write_text(json.dumps(entry, sort_keys=True) + "\n")


def test_proposals_come_from_the_run_history_and_stay_disabled_until_approved(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for day in range(1, 9):  # weekdays 1-8 Dec 2026 at about 06:00 UTC, by a person
        _run_log(root, f"r{day}", f"2026-12-{day:02d}T06:0{day % 5}:00+00:00",
                 f"Refresh the dependency report for #{day}")  # fmt: skip
    for day in range(1, 9):  # the scheduler's own runs never become proposals
        _run_log(root, f"s{day}", f"2026-12-{day:02d}T03:00:00+00:00", "Tidy the tags",
                 started_by="chimera[bot]")  # fmt: skip
    assert main(["schedules", "--root", str(root), "proposals", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "learned-refresh-the-dependency" in out and "0 6 * * *" in out
    assert "Tidy" not in out and "dry run: nothing written" in out
    assert not (root / ".chimera.d" / "schedules" / "learned.yaml").exists()
    assert main(["schedules", "--root", str(root), "proposals"]) == 0
    assert "disabled" in capsys.readouterr().out
    assert main(["schedules", "--root", str(root), "list"]) == 0
    listed = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    (learned,) = [row for row in listed if row[0].startswith("learned-")]
    assert learned[1] == "awaiting approval"
    assert main(["schedules", "--root", str(root), "approve", learned[0], "--by", "ana"]) == 0


def test_a_missing_extra_is_one_line_and_exit_2_never_a_problem_in_the_file(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "cronsim", None)  # as on the plain install
    assert main(["schedules", "--root", str(root), "list"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "chimera: error: schedules needs the 'github' extra: pip install 'pytest-chimera[github]'\n"
    )
    assert "jobs.yaml" not in captured.out + captured.err
