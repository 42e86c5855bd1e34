"""LocalRunner / run_process: exit codes, timeouts that kill the group, capped output."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from chimera.errors import RunnerError
from chimera.runner import CommandResult, LocalRunner


def test_exit_code_and_output(tmp_path: Path) -> None:
    res = LocalRunner().run("echo out; echo err >&2; exit 3", cwd=tmp_path, timeout=10)
    assert res.exit_code == 3
    assert not res.ok
    assert "out" in res.output and "err" in res.output
    assert res.describe().startswith("exit 3")
    assert res.mode == "local"


def test_argv_form_and_cwd(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("here")
    res = LocalRunner().run(
        [sys.executable, "-c", "import os; print(os.listdir('.'))"], cwd=tmp_path, timeout=10
    )
    assert res.ok
    assert "marker.txt" in res.output


def test_timeout_kills_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    # The shell starts a background grandchild that would outlive a naive kill.
    script = f"sleep 60 & echo $! > {pidfile}; wait"
    start = time.monotonic()
    res = LocalRunner().run(script, cwd=tmp_path, timeout=0.5)
    assert res.timed_out
    assert res.exit_code is None
    assert time.monotonic() - start < 10
    assert "timed out" in res.describe()
    child = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("grandchild survived the timeout")


def test_background_child_holding_pipe_does_not_hang(tmp_path: Path) -> None:
    start = time.monotonic()
    res = LocalRunner().run("(sleep 30 &) ; echo done", cwd=tmp_path, timeout=20)
    assert res.ok
    assert "done" in res.output
    assert time.monotonic() - start < 10


def test_output_is_capped_with_marker(tmp_path: Path) -> None:
    res = LocalRunner().run(
        [sys.executable, "-c", "print('A' * 5000 + 'MIDDLE' + 'Z' * 5000)"],
        cwd=tmp_path,
        timeout=10,
        output_limit=1000,
    )
    assert res.truncated
    assert "bytes of output truncated" in res.output
    assert res.output.startswith("A")
    assert res.output.rstrip().endswith("Z")
    assert "MIDDLE" not in res.output


def test_killed_by_signal_reports_negative_code(tmp_path: Path) -> None:
    res = LocalRunner().run("kill -TERM $$", cwd=tmp_path, timeout=10)
    assert res.exit_code == -signal.SIGTERM


def test_missing_cwd_and_executable_raise_runner_error(tmp_path: Path) -> None:
    with pytest.raises(RunnerError, match="does not exist"):
        LocalRunner().run("true", cwd=tmp_path / "nope", timeout=5)
    with pytest.raises(RunnerError, match="cannot run"):
        LocalRunner().run(["/definitely/not/here"], cwd=tmp_path, timeout=5)
    with pytest.raises(RunnerError, match="empty"):
        LocalRunner().run([], cwd=tmp_path, timeout=5)


def test_extra_env_and_explicit_env(tmp_path: Path) -> None:
    runner = LocalRunner(extra_env={"CHIMERA_X": "1"})
    res = runner.run(
        'echo "x=$CHIMERA_X y=$Y"',
        cwd=tmp_path,
        timeout=5,
        env={"Y": "2", "PATH": os.environ["PATH"]},
    )
    assert "x=1 y=2" in res.output


def test_tail_limits_lines_and_chars() -> None:
    res = CommandResult(command="c", exit_code=1, output="\n".join(str(i) for i in range(100)))
    assert res.tail(max_lines=3) == "97\n98\n99"
    long = CommandResult(command="c", exit_code=1, output="x" * 5000)
    assert len(long.tail(max_chars=100)) == 100
    assert long.tail(max_chars=100).startswith("…")


def test_undecodable_output_never_raises(tmp_path: Path) -> None:
    res = LocalRunner().run(
        [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'\\xff\\xfe ok')"],
        cwd=tmp_path,
        timeout=10,
    )
    assert res.ok
    assert "ok" in res.output
