"""`command`: exit codes, output tail, timeouts, cwd confinement, the runner parameter."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import RunnerError
from chimera.runner import DEFAULT_OUTPUT_LIMIT, CommandResult, LocalRunner
from chimera.spec.drift import check_drift
from chimera.spec.kinds import Command
from chimera.spec.model import Status

if TYPE_CHECKING:
    from tests.unit.engine.conftest import Evaluate, MakeSpec


def test_exit_zero_passes(tmp_path: Path, evaluate: Evaluate) -> None:
    res = evaluate(tmp_path, Command(run="echo all good"))
    assert res.status is Status.PASSED
    assert res.evidence[0].note == "exit 0"
    assert "all good" in res.evidence[0].snippet


def test_nonzero_exit_fails_with_code_and_output_tail(tmp_path: Path, evaluate: Evaluate) -> None:
    script = "for i in $(seq 1 100); do echo line$i; done; echo boom >&2; exit 3"
    res = evaluate(tmp_path, Command(run=script))
    assert res.status is Status.FAILED
    assert "exit 3" in res.message
    ev = res.evidence[0]
    assert ev.note == "exit 3"
    assert ev.snippet.endswith("boom")
    assert "line100" in ev.snippet
    assert "line1\n" not in ev.snippet  # only the tail is shown


def test_killed_by_signal_is_named(tmp_path: Path, evaluate: Evaluate) -> None:
    res = evaluate(tmp_path, Command(run="kill -9 $$"))
    assert res.status is Status.FAILED
    assert "killed by signal 9" in res.message


def test_timeout_is_named_and_bounded(tmp_path: Path, evaluate: Evaluate) -> None:
    start = time.monotonic()
    res = evaluate(tmp_path, Command(run="echo started; sleep 30", timeout=0.5))
    assert time.monotonic() - start < 10
    assert res.status is Status.FAILED
    assert "timed out after 0.5s" in res.message
    assert "started" in res.evidence[0].snippet


def test_runs_in_the_root_or_cwd(tmp_path: Path, evaluate: Evaluate) -> None:
    (tmp_path / "sub/dir").mkdir(parents=True)
    (tmp_path / "sub/dir/marker.txt").write_text("here\n", encoding="utf-8")
    root = evaluate(tmp_path, Command(run="test -d sub"))
    assert root.status is Status.PASSED
    inner = evaluate(tmp_path, Command(run="cat marker.txt", cwd="./sub/dir"))
    assert inner.status is Status.PASSED
    assert "here" in inner.evidence[0].snippet


def test_cwd_is_confined_to_the_root(tmp_path: Path, evaluate: Evaluate) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "out").symlink_to(tmp_path)
    up = evaluate(root, Command(run="true", cwd="../"))
    assert up.status is Status.ERROR and "leaves the root" in up.message
    link = evaluate(root, Command(run="true", cwd="out"))
    assert link.status is Status.ERROR and "outside the root" in link.message
    missing = evaluate(root, Command(run="true", cwd="nope"))
    assert missing.status is Status.ERROR and "not a directory" in missing.message


@dataclass
class RecordingRunner:
    """A fake sandbox runner: records what it was asked and answers from a script."""

    answer: int | None = 0
    calls: list[tuple[str, Path, float]] = field(default_factory=list)

    @property
    def mode(self) -> str:
        return "fake"

    def run(
        self,
        command: str | Sequence[str],
        *,
        cwd: Path,
        timeout: float,
        env: Mapping[str, str] | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> CommandResult:
        self.calls.append((str(command), cwd, timeout))
        if self.answer is None:
            raise RunnerError("cannot run: sandbox unavailable")
        return CommandResult(str(command), self.answer, "sandboxed output\n", mode=self.mode)


def test_the_runner_is_a_parameter(tmp_path: Path, make_spec: MakeSpec) -> None:
    runner = RecordingRunner(answer=2)
    report = check_drift(make_spec(Command(run="make test", timeout=7)), tmp_path, runner=runner)
    assert runner.calls == [("make test", tmp_path.resolve(), 7.0)]
    (res,) = report.results
    assert res.status is Status.FAILED
    assert "exit 2" in res.message
    assert res.evidence[0].snippet == "sandboxed output"


def test_runner_that_cannot_start_is_an_error(tmp_path: Path, make_spec: MakeSpec) -> None:
    report = check_drift(make_spec(Command(run="x")), tmp_path, runner=RecordingRunner(None))
    assert report.results[0].status is Status.ERROR
    assert "sandbox unavailable" in report.results[0].message


def test_default_runner_is_local(tmp_path: Path, make_spec: MakeSpec) -> None:
    report = check_drift(make_spec(Command(run='test -n "$HOME$PATH"')), tmp_path)
    assert report.ok
    assert LocalRunner().mode == "local"
