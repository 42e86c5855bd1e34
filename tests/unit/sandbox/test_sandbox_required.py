"""``.ci/run`` sets CHIMERA_REQUIRE_SANDBOX_TESTS=1: a skipped sandbox test fails CI."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[2] / "conftest.py"

TESTS = """
import pytest

@pytest.mark.bwrap
@pytest.mark.skipif(True, reason="bubblewrap unusable: not found")
def test_boundary():
    pass

@pytest.mark.bwrap
def test_boundary_skipped_inside():
    pytest.skip("setpriv missing")

@pytest.mark.skipif(True, reason="unrelated")
def test_other():
    pass
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    bwrap: needs bubblewrap\n")
    pytester.makepyfile(test_suite=TESTS)
    return pytester


def test_the_ci_script_sets_the_flag() -> None:
    """CI runs ``.ci/run``, which hands over to ``scripts/dev test``; the flag is exported in
    that verb's function before its pytest command."""
    root = CONFTEST.parents[1]
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    assert "exec ./scripts/dev test" in ci.splitlines()
    dev = (root / "scripts" / "dev").read_text(encoding="utf-8")
    body = dev[dev.index("\nrun_tests() {") :]
    body = body[: body.index("\n}\n")]
    flag = body.index("export CHIMERA_REQUIRE_SANDBOX_TESTS=1")
    assert flag < body.index("python -m pytest")


def test_without_the_flag_skips_stay_skips(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHIMERA_REQUIRE_SANDBOX_TESTS", raising=False)
    suite.runpytest("-p", "no:randomly").assert_outcomes(skipped=3)


def test_with_the_flag_a_skipped_sandbox_test_fails(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHIMERA_REQUIRE_SANDBOX_TESTS", "1")
    result = suite.runpytest("-p", "no:randomly")
    # A skip in setup (a skipif mark) becomes a setup error, one in the body a failure:
    # red either way.
    result.assert_outcomes(failed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*may not be skipped (*bubblewrap unusable: not found*"])
    result.stdout.fnmatch_lines(["*may not be skipped (*setpriv missing*"])
