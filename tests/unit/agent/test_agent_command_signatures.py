"""Failure signatures of ``command`` requirements: a digest of the output, not just the exit.

The outputs below have the shape pytest and unittest print (taken from real runs). Two runs
of the same failure differ in timings, temporary paths and object addresses and must give the
same signature; two different failures with the same exit code must not.
"""

from __future__ import annotations

from chimera.core.attempts import FailureSignature, Verdict, evidence_digest
from chimera.spec.kinds.command import Command
from chimera.spec.model import Evidence, Requirement, SourceLocation, Status
from chimera.spec.results import RequirementResult

ADD_FAILS = """\
tmp_path = PosixPath('/tmp/pytest-of-ci/pytest-{run}/test_add0')

    def test_add(tmp_path):
>       assert add(1, 2) == 3, f"after {{time.perf_counter()}} in {{tmp_path}}"
E       AssertionError: after {secs} in /tmp/pytest-of-ci/pytest-{run}/t0 for <object at 0x{addr}>
E       assert -1 == 3
E        +  where -1 = add(1, 2)

tests/test_calc.py:4: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - AssertionError: after {secs} in /...
1 failed, 1 passed in {total}s
"""

PARSE_FAILS = """\
    def test_parse():
>       from calc.parse import parse
E       ImportError: cannot import name 'parse' from 'calc.parse' (/home/ci/work/calc/parse.py)

tests/test_parse.py:7: ImportError
=========================== short test summary info ============================
FAILED tests/test_parse.py::test_parse - ImportError: cannot import name 'parse' from 'c...
1 failed, 1 passed in 0.21s
"""

UNITTEST_FAILS = """\
======================================================================
FAIL: test_add (tests.test_calc.CalcTest.test_add)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/home/ci/work/tests/test_calc.py", line 9, in test_add
    self.assertEqual(add(1, 2), 3)
AssertionError: -1 != 3

----------------------------------------------------------------------
Ran 2 tests in {secs}s

FAILED (failures=1)
"""


def _command_result(output: str, message: str = "`pytest -q` failed: exit 1") -> RequirementResult:
    check = Command.model_validate({"run": "pytest -q"})
    req = Requirement(id="tests-pass", check=check, location=SourceLocation("specs/a.yaml", 1, 1))
    return RequirementResult(
        req, Status.FAILED, message, (Evidence(snippet=output, note="exit 1"),)
    )


def _signature(output: str) -> FailureSignature:
    return FailureSignature.from_results(Verdict.VERIFY_FAILED, [_command_result(output)])


def test_agent_same_command_failure_with_other_timings_paths_and_addresses_matches() -> None:
    first = ADD_FAILS.format(run=51, secs="752.04029404", addr="7f332c4c7a30", total="0.17")
    second = ADD_FAILS.format(run=52, secs="9.5", addr="7fe0aa01b2c0", total="1.03")
    assert first != second
    assert _signature(first) == _signature(second)
    assert _signature(first).digest == _signature(second).digest
    a = UNITTEST_FAILS.format(secs="0.001")
    b = UNITTEST_FAILS.format(secs="12.250")
    assert _signature(a) == _signature(b)


def test_agent_different_command_failures_with_the_same_exit_differ() -> None:
    add = _signature(ADD_FAILS.format(run=1, secs="1.0", addr="7f00", total="0.1"))
    parse = _signature(PARSE_FAILS)
    assert add != parse and add.digest != parse.digest
    # The parts name what failed, so a collapsed record still says it.
    assert "tests/test_calc.py::test_add" in add.parts[0] and "AssertionError" in add.parts[0]
    assert "tests/test_parse.py::test_parse" in parse.parts[0]
    assert "ImportError" in parse.parts[0]


def test_agent_evidence_digest_names_tests_and_error_types() -> None:
    digest = evidence_digest(UNITTEST_FAILS.format(secs="0.5"))
    assert "tests.test_calc.CalcTest.test_add" in digest and "AssertionError" in digest
    assert "0.5" not in digest


def test_agent_evidence_digest_without_tests_uses_the_normalised_last_lines() -> None:
    one = evidence_digest("checking...\nsrc/a.py:3: error: Incompatible types (took 0.3s)\n")
    two = evidence_digest("checking...\nlib/b.py:9: error: Incompatible types (took 1.7s)\n")
    other = evidence_digest("checking...\nsrc/a.py:3: error: Name 'x' is not defined\n")
    assert one == two
    assert one != other
