"""The ``regex`` fallback's time limit is a wall-clock deadline (a ``SIGALRM`` timer in the main
thread), not ``regex``'s own CPU-time limit, which a loaded machine stretches several times."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import regex

from chimera.spec.engine import EngineOptions
from chimera.spec.engine.deadline import can_bound, within
from chimera.spec.kinds import Absent
from chimera.spec.model import Status

if TYPE_CHECKING:
    from tests.unit.engine.conftest import Evaluate

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="no SIGALRM here")

EVIL = "a" * 30000 + "b\n"
SLOW = regex.compile(r"(a+)+(?=$)", regex.MULTILINE)


def _sleep_two_seconds() -> int:
    for _ in range(200):
        time.sleep(0.01)
    return 200


def test_a_sleeping_search_is_stopped_on_the_wall_clock() -> None:
    # Sleeping costs no CPU: regex's own limit (CPU time) would never fire; the deadline does.
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        within(0.2, _sleep_two_seconds)
    assert time.monotonic() - start < 1.0
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_backtracking_regex_is_stopped_near_the_deadline() -> None:
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        # regex's own limit is far away: only the wall-clock deadline can stop it in time.
        within(0.3, lambda: SLOW.search(EVIL, timeout=60.0))
    assert time.monotonic() - start < 1.5
    assert within(0.3, lambda: SLOW.search("aaa\n", timeout=60.0)) is not None


def test_no_deadline_when_sigalrm_belongs_to_someone_else() -> None:
    def theirs(signum: int, frame: object) -> None:
        raise AssertionError("our timer must not fire their handler")

    previous = signal.signal(signal.SIGALRM, theirs)
    try:
        assert not can_bound()
        assert within(0.05, lambda: 42) == 42
        assert signal.getsignal(signal.SIGALRM) is theirs
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_no_deadline_outside_the_main_thread() -> None:
    seen: list[bool] = []
    thread = threading.Thread(target=lambda: seen.append(can_bound()))
    thread.start()
    thread.join()
    assert seen == [False]


def test_an_absent_with_a_backtracking_pattern_errors_in_wall_time(
    tmp_path: Path, evaluate: Evaluate
) -> None:
    (tmp_path / "evil.txt").write_text(EVIL, encoding="utf-8")
    start = time.monotonic()
    res = evaluate(
        tmp_path,
        Absent(paths=["*.txt"], pattern=r"(a+)+(?=$)"),
        options=EngineOptions(pattern_timeout_s=0.3),
    )
    assert res.status is Status.ERROR and "timed out" in res.message, res.message
    assert time.monotonic() - start < 3.0


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_setaffinity"), reason="Linux only")
def test_the_limit_holds_in_wall_time_on_a_loaded_cpu(tmp_path: Path, evaluate: Evaluate) -> None:
    """Three busy processes share this process's one CPU: regex's CPU-time limit would take
    about four times as long in wall time; the deadline does not."""
    import os
    import subprocess
    import sys

    (tmp_path / "evil.txt").write_text(EVIL, encoding="utf-8")
    cpus = os.sched_getaffinity(0)
    one = {min(cpus)}
    burn = f"import os; os.sched_setaffinity(0, {one!r})\nwhile True: pass"
    burners = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(3)]
    os.sched_setaffinity(0, one)
    try:
        time.sleep(0.2)  # the burners are spinning
        start = time.monotonic()
        res = evaluate(
            tmp_path,
            Absent(path="evil.txt", pattern=r"(a+)+(?=$)"),
            options=EngineOptions(pattern_timeout_s=0.4),
        )
        elapsed = time.monotonic() - start
    finally:
        os.sched_setaffinity(0, cpus)
        for proc in burners:
            proc.kill()
            proc.wait()
    assert res.status is Status.ERROR and "timed out" in res.message, res.message
    assert elapsed < 1.0, elapsed
