"""The RE2 literal prefilter and the combined matcher never turn a failed match into "no
match here".

The ``google-re2`` binding drops ``RE2::Set::Match``'s result flag: when the DFA fails (out
of memory) it returns an empty list, exactly as for a text without any literal. RE2 itself
makes that failure hard to reach (``Set::Compile`` probes the DFA, and a many-match DFA
restarts its cache instead of giving up), so these tests drive the binding's failure answer
through a fake ``re2`` module: the real one, whose ``Set.Match`` answers ``[]`` from a given
call on — what the binding returns on failure.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chimera.spec.engine import session
from chimera.spec.engine.prefilter import Prefilter, _LiteralSet
from chimera.spec.kinds import Absent, Contains
from chimera.spec.model import Status
from chimera.spec.results import RequirementResult

re2: Any = pytest.importorskip("re2")


class _FailingSet:
    """An RE2 ``Set`` whose ``Match`` fails (answers ``[]``) from call ``fail_from`` on."""

    def __init__(self, real: Any, fail_from: int) -> None:
        self._real = real
        self._fail_from = fail_from
        self.calls = 0

    def Add(self, pattern: str) -> int:
        return int(self._real.Add(pattern))

    def Compile(self) -> None:
        self._real.Compile()

    def Match(self, data: bytes) -> list[int] | None:
        self.calls += 1
        if self.calls >= self._fail_from:
            return None  # the binding's `matches or None` after a failed match
        found = self._real.Match(data)
        return None if found is None else list(found)


class _FailingRE2:
    """The ``re2`` module, with every ``Set`` failing from the ``fail_from``-th match."""

    Options = re2.Options

    def __init__(self, fail_from: int) -> None:
        self.fail_from = fail_from
        self.sets: list[_FailingSet] = []
        outer = self

        class _Set:
            @staticmethod
            def SearchSet(options: Any) -> _FailingSet:
                made = _FailingSet(re2.Set.SearchSet(options), outer.fail_from)
                outer.sets.append(made)
                return made

        self.Set = _Set


KEYS = {"needle": {("needle", False)}, "other": {("other", False)}}


def test_a_failed_match_falls_back_to_the_automaton() -> None:
    fake = _FailingRE2(fail_from=2)
    prefilter = _LiteralSet(KEYS, fake)
    assert prefilter.hits("a needle here") == {"needle"}  # RE2 answered
    assert prefilter.fallback is None
    # The second match fails: RE2 says "nothing", the answer must still hold the needle.
    assert prefilter.hits("x = 1\nneedle\n") == {"needle"}
    assert isinstance(prefilter.fallback, Prefilter)
    assert prefilter.hits("other and needle") == {"needle", "other"}
    assert prefilter.hits("nothing") == set()
    assert fake.sets[0].calls == 2  # later texts no longer go to the failed set


def test_the_sentinel_is_not_reported_as_a_literal() -> None:
    prefilter = _LiteralSet(KEYS, re2)
    assert prefilter.hits("") == set()
    assert prefilter.hits("needle") == {"needle"}
    assert prefilter.fallback is None


def test_the_tightest_budget_re2_accepts_still_answers_exactly() -> None:
    """At the smallest memory budget that compiles, RE2 answers exactly (no fallback):
    the sentinel costs nothing in the ordinary case."""
    literals = {f"lit{i:04d}x{'ab' * (i % 7)}": {(f"p{i}", False)} for i in range(300)}
    text = " ".join(sorted(literals)[::3]) * 20
    budget = 1 << 14
    while True:
        try:
            prefilter = _LiteralSet(literals, re2, max_mem=budget)
            break
        except re2.error:
            budget += budget // 4
    assert prefilter.hits(text) == {lit for lit in literals if lit in text}
    assert prefilter.fallback is None


@pytest.mark.parametrize("fail_from", [1, 2, 4])
def test_absent_still_fails_when_the_set_match_fails(
    tmp_path: Path,
    evaluate: Callable[..., RequirementResult],
    monkeypatch: pytest.MonkeyPatch,
    fail_from: int,
) -> None:
    for i in range(6):
        body = "print('debug')\n" if i in (2, 5) else f"x = {i}\n"
        (tmp_path / f"m{i}.py").write_text(body, encoding="utf-8")
    fake = _FailingRE2(fail_from)
    # The combined matcher's Set (every pattern of a group, over the file's bytes) fails.
    monkeypatch.setattr(session, "load_re2", lambda: fake)
    res = evaluate(tmp_path, Absent(paths=["*.py"], pattern=r"print\('debug"))
    assert fake.sets and fake.sets[0].calls >= fail_from  # the failure did happen
    assert res.status is Status.FAILED, res.message
    assert [(e.file, e.line) for e in res.evidence] == [("m2.py", 1), ("m5.py", 1)]
    found = evaluate(tmp_path, Contains(paths=["*.py"], pattern=r"print\('debug"))
    assert found.status is Status.PASSED
