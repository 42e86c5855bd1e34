"""The `chimera demo` run (a reverted and an accepted attempt of one card) exported as
fine-tuning data: SFT rows of the accepted attempts and a preference pair of that card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.memory.trajectories import validate_row


@pytest.mark.slow
def test_the_demo_run_exports_sft_rows_and_a_preference_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "demo"
    assert main(["demo", "--dir", str(project), "--quiet"]) == 0
    runs = project / ".chimera" / "runs"
    capsys.readouterr()

    sft = tmp_path / "sft.jsonl"
    assert main(["trajectories", "export", str(runs), "--format", "sft", "-o", str(sft)]) == 0
    rows = [json.loads(line) for line in sft.read_text().splitlines()]
    metas = [json.loads(line) for line in (tmp_path / "sft.meta.jsonl").read_text().splitlines()]
    assert [(m["card"], m["attempt"]) for m in metas] == [
        ("balance-column", 1),
        ("balance-correct", 2),
        ("balance-documented", 1),
    ]
    for row in rows:
        validate_row("sft", row)

    pairs = {}
    for fmt in ("dpo", "openai-dpo"):
        out = tmp_path / f"{fmt}.jsonl"
        assert main(["trajectories", "export", str(runs), "--format", fmt, "-o", str(out)]) == 0
        (pairs[fmt],) = [json.loads(line) for line in out.read_text().splitlines()]
        validate_row(fmt, pairs[fmt])
        (meta,) = [json.loads(x) for x in (tmp_path / f"{fmt}.meta.jsonl").read_text().splitlines()]
        assert (meta["card"], meta["context"]) == ("balance-correct", "history-stripped")
        assert (meta["chosen"]["attempt"], meta["rejected"]["attempt"]) == (2, 1)
        assert meta["rejected"]["verdict"] == "verify_failed"
    # The reverted attempt counted the entries; the accepted one sums them.
    assert "return len(entries)" in json.dumps(pairs["dpo"]["rejected"])
    assert "return sum(entries)" in json.dumps(pairs["dpo"]["chosen"])
    # OpenAI's rows hold one message a side: the first turn where the attempts differ (the
    # reverted attempt read the file first; the retry edited at once).
    openai = pairs["openai-dpo"]
    assert "return sum(entries)" in json.dumps(openai["preferred_output"])
    (call,) = openai["non_preferred_output"][0]["tool_calls"]
    assert call["function"]["name"] == "read_file"
