"""CommandVerifier: exit 0 is the evidence; everything else fails with its output tail."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.runner import LocalRunner
from chimera.sandbox import Sandbox
from chimera.verifier import CommandVerifier, Verification


def test_exit_zero_passes(tmp_path: Path) -> None:
    result = CommandVerifier("echo all good", runner=LocalRunner(), cwd=tmp_path).verify()
    assert result.ok
    assert result.exit_code == 0
    assert result.output_tail == "all good"
    assert not result.timed_out
    assert result.describe().startswith("passed (exit 0 after")


def test_non_zero_fails_with_the_tail(tmp_path: Path) -> None:
    command = "for i in $(seq 1 100); do echo line $i; done; echo FAILED test_x; exit 1"
    result = CommandVerifier(command, runner=Sandbox(tmp_path, mode="scrubbed"), cwd=tmp_path)
    verdict = result.verify()
    assert not verdict.ok
    assert verdict.exit_code == 1
    assert verdict.output_tail.endswith("FAILED test_x")
    assert "line 1\n" not in verdict.output_tail  # only the tail is kept
    assert verdict.describe().startswith("failed (exit 1")


def test_timeout_fails(tmp_path: Path) -> None:
    verdict = CommandVerifier("sleep 30", runner=LocalRunner(), cwd=tmp_path, timeout=0.3).verify()
    assert not verdict.ok
    assert verdict.timed_out
    assert verdict.exit_code is None
    assert "timed out" in verdict.describe()


def test_a_command_that_cannot_start_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    verdict = CommandVerifier("true", runner=LocalRunner(), cwd=tmp_path / "missing").verify()
    assert verdict == Verification(
        ok=False,
        exit_code=None,
        output_tail=verdict.output_tail,
        duration_s=0.0,
        timed_out=False,
    )
    assert "does not exist" in verdict.output_tail
    assert verdict.describe() == "failed (could not start)"
    sandboxed = Sandbox(tmp_path, mode="scrubbed")
    outside = CommandVerifier("true", runner=sandboxed, cwd=tmp_path.parent).verify()
    assert not outside.ok and "outside the workspace" in outside.output_tail


def test_empty_command_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        CommandVerifier("  ", runner=LocalRunner(), cwd=tmp_path)
