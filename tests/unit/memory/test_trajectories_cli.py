"""``chimera trajectories export`` as a user runs it: one typed call, a report, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chimera.cli import main


def test_export_writes_rows_and_metadata_and_reports(
    runs: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pairs.jsonl"
    code = main(
        [
            "trajectories",
            "export",
            str(runs.a),
            str(runs.b),
            "--format",
            "dpo",
            "-o",
            str(out),
            "--pairs",
            "strict",
        ]
    )
    text = capsys.readouterr().out
    assert code == 0, text
    assert f"wrote 1 dpo row(s) to {out} (metadata: {tmp_path / 'pairs.meta.jsonl'})" in text
    assert "runs: 2 read, 0 skipped" in text
    assert "attempts: 3 confirmed (2 accepted), 0 skipped" in text
    assert "pairs --pairs task: 2 candidate(s), 2 made; skipped: none" in text
    assert (
        "pairs --pairs strict (written): 2 candidate(s), 1 made; skipped: 1 prompts differ: "
        "carried-forward history"
    ) in text
    # The run folder already holds the token redacted (see test_trajectories_golden).
    assert "[REDACTED:a GitHub token]" in out.read_text()
    assert len(out.read_text().splitlines()) == 1


def test_export_json_report(runs: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sft.jsonl"
    code = main(
        [
            "trajectories",
            "export",
            str(runs.b.parent),
            str(runs.tainted.parent),
            "--format",
            "sft",
            "-o",
            str(out),
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (report["rows"], report["excluded_tainted"], report["pairs"]) == (1, 1, None)
    assert report["metadata"] == str(tmp_path / "sft.meta.jsonl")


def test_nothing_qualified_exits_1_and_writes_nothing(
    runs: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "none.jsonl"
    code = main(["trajectories", "export", str(runs.tainted), "--format", "sft", "-o", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    assert "excluded: 1 tainted (--include-tainted), 0 unverified" in captured.out
    assert captured.err == "chimera: no row qualified; nothing written\n"
    assert not out.exists()
    code = main(
        [
            "trajectories",
            "export",
            str(runs.tainted),
            "--format",
            "sft",
            "-o",
            str(out),
            "--include-tainted",
        ]
    )
    assert code == 0 and out.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--format", "sft", "--pairs", "task"], "--pairs applies to the dpo formats only"),
        (["--format", "csv"], "invalid choice: 'csv'"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(
    runs: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = main(["trajectories", "export", str(runs.b), "-o", str(tmp_path / "x.jsonl"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err


def test_a_folder_that_is_no_run_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["trajectories", "export", str(tmp_path), "--format", "sft", "-o", "x.jsonl"])
    assert code == 2
    assert capsys.readouterr().err == (
        f"chimera: error: {tmp_path}: not a run folder (no audit.jsonl in it or in its folders)\n"
    )
