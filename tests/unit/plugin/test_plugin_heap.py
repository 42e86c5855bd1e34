"""The garbage collector: frozen for the run, thawed before pytest's final collections."""

from __future__ import annotations

import gc

import pytest

from pytest_chimera.heap import Freezer, paused

# Writes the freeze count seen by a test (during the run) and after the plugin's unconfigure.
OBSERVER = """
import gc
from pathlib import Path

import pytest


def pytest_runtest_call(item):
    Path("during.txt").write_text(str(gc.get_freeze_count()))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    Path("after.txt").write_text(str(gc.get_freeze_count()))
"""

OBSERVING_TEST = """
import gc
from pathlib import Path


def test_observe():
    Path("during.txt").write_text(str(gc.get_freeze_count()))
"""


def _counts(project: pytest.Pytester) -> tuple[int, int]:
    during = int((project.path / "during.txt").read_text(encoding="utf-8"))
    after = int((project.path / "after.txt").read_text(encoding="utf-8"))
    return during, after


@pytest.fixture
def observed(project: pytest.Pytester) -> pytest.Pytester:
    project.makeconftest(OBSERVER)
    (project.path / "tests" / "test_observe.py").write_text(OBSERVING_TEST, encoding="utf-8")
    return project


def test_a_spec_only_session_is_frozen_during_the_run_and_thawed_at_unconfigure(
    observed: pytest.Pytester,
) -> None:
    # Only the specs folder is collected: the session runs nothing but Spec items.
    result = observed.runpytest_subprocess(
        "--chimera-spec", "specs", "-p", "no:cacheprovider", "specs"
    )
    result.assert_outcomes(passed=2, failed=2)
    during, after = _counts(observed)
    assert during > 1000  # pytest's nodes, the modules and the Spec
    assert after == 0


def test_a_session_with_python_tests_runs_unfrozen(observed: pytest.Pytester) -> None:
    # A user's test may rely on gc.collect() reaching objects made at collection time.
    result = observed.runpytest_subprocess("--chimera-spec", "specs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=2)
    assert _counts(observed) == (0, 0)


def test_no_gc_freeze_leaves_the_collector_alone(observed: pytest.Pytester) -> None:
    result = observed.runpytest_subprocess(
        "--chimera-spec", "specs", "-p", "no:cacheprovider", "--chimera-no-gc-freeze"
    )
    result.assert_outcomes(passed=5, failed=2)
    assert _counts(observed) == (0, 0)


def test_without_the_option_nothing_is_frozen(observed: pytest.Pytester) -> None:
    observed.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=3)
    assert _counts(observed) == (0, 0)


def test_a_freeze_by_someone_else_is_not_undone(observed: pytest.Pytester) -> None:
    (observed.path / "conftest.py").write_text(
        OBSERVER + "\n\ndef pytest_configure(config):\n    gc.freeze()\n", encoding="utf-8"
    )
    result = observed.runpytest_subprocess("--chimera-spec", "specs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=2)
    during, after = _counts(observed)
    assert during > 0
    assert after > 0  # still the conftest's freeze: the plugin did not thaw it


# A reference cycle made at configure time (so frozen) that becomes garbage during a test.
FINALISER = """
from pathlib import Path


class Cycle:
    def __init__(self):
        self.me = self

    def __del__(self):
        Path("finalised.txt").write_text("yes")
        raise RuntimeError("raised in a finaliser")


def pytest_configure(config):
    config.held_cycle = Cycle()
"""

DROPPING_HOOK = """


def pytest_runtest_call(item):
    if hasattr(item.config, "held_cycle"):
        del item.config.held_cycle
"""


def test_a_frozen_cycle_dropped_during_the_run_is_still_finalised_and_reported(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(FINALISER + DROPPING_HOOK)
    result = project.runpytest_subprocess(
        "--chimera-spec", "specs", "-p", "no:cacheprovider", "specs"
    )
    result.assert_outcomes(passed=2, failed=2)
    assert (project.path / "finalised.txt").read_text(encoding="utf-8") == "yes"
    # Collected by pytest's own final collection, so pytest reports the exception.
    output = result.stdout.str() + result.stderr.str()
    assert "PytestUnraisableExceptionWarning" in output
    assert "raised in a finaliser" in output


def test_paused_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_a_disabled_freezer_does_nothing() -> None:
    before = gc.get_freeze_count()  # non-zero when this very run is a --chimera-spec run
    freezer = Freezer(enabled=False)
    freezer.freeze()
    assert not freezer.froze
    assert gc.get_freeze_count() == before
    freezer.thaw()
    assert gc.get_freeze_count() == before
