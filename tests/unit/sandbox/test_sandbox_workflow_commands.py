"""Sandboxed output never speaks to the Actions runner (``::set-output`` and friends)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chimera.sandbox import (
    Sandbox,
    SandboxMode,
    bwrap_available,
    neutralize,
    probe_bwrap,
    stop_commands,
)
from chimera.sandbox.workflow_commands import ZWSP, parse_workflow_commands

HOSTILE = (
    "collected 1 item\n"
    "::set-output name=verdict::passed\n"
    "  ::add-mask::x\r::stop-commands::abc\r\n"
    "\t::error file=a.py,line=1::forged\n"
    "log ##[set-output name=verdict;]passed\n"
    "a line with :: inside is fine\n"
)


def test_the_runner_model_sees_every_command_in_hostile_output() -> None:
    names = [name for name, _rest in parse_workflow_commands(HOSTILE)]
    assert names == ["set-output", "add-mask", "stop-commands", "error", "set-output"]


def test_neutralized_output_holds_no_command_and_reads_the_same() -> None:
    safe = neutralize(HOSTILE)
    assert parse_workflow_commands(safe) == []
    assert safe.replace(ZWSP, "") == HOSTILE
    assert neutralize("plain text\n") == "plain text\n"


def test_stop_commands_wraps_with_a_random_token() -> None:
    out = io.StringIO()
    with stop_commands(out) as token:
        out.write("::set-output name=verdict::passed\n")
    lines = out.getvalue().splitlines()
    assert lines[0] == f"::stop-commands::{token}" and lines[-1] == f"::{token}::"
    assert len(token) == 32
    with stop_commands(io.StringIO()) as other:
        assert other != token


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param(
            "bwrap",
            marks=[
                pytest.mark.bwrap,
                pytest.mark.skipif(
                    not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}"
                ),
            ],
        ),
        "scrubbed",
    ],
)
def test_a_command_printing_set_output_changes_nothing(tmp_path: Path, mode: SandboxMode) -> None:
    res = Sandbox(tmp_path, mode=mode).run(
        "echo '::set-output name=verdict::passed'; printf '##[add-mask]x\\r::add-mask::y\\n'",
        cwd=tmp_path,
        timeout=30,
    )
    assert res.ok, res.output
    assert "set-output name=verdict::passed" in res.output  # still readable
    assert parse_workflow_commands(res.output) == []
