"""Verify-or-revert with the failure carried forward, on real git repositories."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from chimera.core.agent import Transcript
from chimera.core.attempts import HISTORY_HEADING, LEDGER_HEADING, Verdict
from chimera.protocols import Purpose
from chimera.providers import ScriptedBackend


def _act_prompts(backend: ScriptedBackend) -> list[str]:
    """The user prompt of each attempt's first ACT call."""
    out = []
    for call in backend.calls:
        if call.purpose is Purpose.ACT and len(call.messages) == 2:
            out.append(call.messages[1]["content"])
    return out


def test_autonomous_wrong_first_attempt_is_reverted_and_carried_forward(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env()
    backend = ScriptedBackend(
        [
            t.plan(),
            t.write("calc_total.py", "def total(xs):\n    return sum(xs)\n"),
            t.done("Added total() in a new module."),
            t.review(),
            t.write("calc.py", t.CALC_WITH_TOTAL, expect=[HISTORY_HEADING]),
            t.done(),
            t.review(),
        ]
    )
    result = env.agent([backend]).solve("Add a total() function to calc.py")
    assert result.outcome == "solved", result.final_report
    assert [a.verdict for a in result.attempts] == [Verdict.VERIFY_FAILED, Verdict.PASSED]
    first = result.attempts[0]
    # The real diff was captured from the snapshot before the revert...
    assert "calc_total.py" in first.diff and "+def total(xs):" in first.diff
    assert first.files_changed == 1
    # ...and the revert happened: the wrong file is gone, the right change stays.
    assert not (env.root / "calc_total.py").exists()
    assert (env.root / "calc.py").read_text() == t.CALC_WITH_TOTAL
    assert env.git_status().strip() == "M calc.py"
    prompts = _act_prompts(backend)
    assert len(prompts) == 2
    assert HISTORY_HEADING not in prompts[0]
    second = prompts[1]
    assert "Attempt 1 — verdict: verify_failed" in second
    assert "tried" in second.lower() and "reverted" in second.lower()
    assert "total-defined" in second  # the verifier output names the failing requirement
    assert "+def total(xs):" not in second  # diff feedback is off by default
    injected = env.audit_events("history_injected")
    assert len(injected) == 1 and injected[0]["fields"]["attempt"] == 2
    assert result.history_injections == 1
    assert (env.run_dir / "transcript.jsonl").is_file()
    assert first.diff_path == "attempts/solve/1.diff"
    assert (env.run_dir / first.diff_path).read_text() == first.diff
    saved = json.loads((env.run_dir / "attempts" / "solve" / "2.transcript.json").read_text())
    assert Transcript.from_json(saved).messages[1]["content"] == second
    snaps = env.audit_events("snapshot")
    assert [e["fields"]["attempt"] for e in snaps] == [1, 2]
    assert result.files_changed == 1 and result.added == 4


def test_autonomous_diff_feedback_opt_in_shows_the_capped_diff(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env()
    big = "def total(xs):\n" + "".join(f"    # {i:05d} padding\n" for i in range(400))
    backend = ScriptedBackend(
        [
            t.plan(),
            t.write("calc_total.py", big + "    return 0\n"),
            t.done(),
            t.review(),
            t.write("calc.py", t.CALC_WITH_TOTAL),
            t.done(),
            t.review(),
        ]
    )
    result = env.agent([backend], diff_feedback=True).solve("Add total()")
    assert result.outcome == "solved"
    second = _act_prompts(backend)[1]
    assert "```diff" in second and "+def total(xs):" in second
    assert "diff truncated:" in second
    assert result.attempts[0].diff_chars > 2000 and len(result.attempts[0].diff) < 2100


def test_autonomous_repeated_signature_dedupes_and_replans(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env()
    wrong = t.write("calc_total.py", "def total(xs):\n    return 0\n")
    backend = ScriptedBackend(
        [
            t.plan(),
            wrong,
            t.done(),
            t.review(),
            t.write("calc_total.py", "def total(values):\n    return 1\n"),
            t.done(),
            t.review(),
            t.replan("1. Put total() in calc.py itself.", expect=[LEDGER_HEADING]),
            t.write("calc.py", t.CALC_WITH_TOTAL, expect=["Put total() in calc.py itself"]),
            t.done(),
            t.review(),
        ]
    )
    result = env.agent([backend], max_attempts=3).solve("Add total()")
    assert result.outcome == "solved", result.final_report
    a1, a2, a3 = result.attempts
    assert a1.signature == a2.signature  # same failure, normalised
    assert a3.verdict is Verdict.PASSED
    replan_call = next(c for c in backend.calls if c.purpose is Purpose.REPLAN)
    ledger = replan_call.messages[1]["content"]
    assert "Attempt 1, 2 (verify_failed, 2×" in ledger
    third = _act_prompts(backend)[2]
    assert third.count("### Attempt") == 1  # the repeat is counted, not appended
    assert "repeated 2× (also attempt 2)" in third
    assert len(env.audit_events("replan")) == 1
    assert len(env.audit_events("history_injected")) == 2


def test_autonomous_escalates_to_next_rung_after_replan_repeats(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env()
    wrong = t.write("calc_total.py", "def total(xs):\n    return 0\n")
    weak = ScriptedBackend(
        [
            t.plan(),
            wrong,
            t.done(),
            t.review(),
            wrong,
            t.done(),
            t.review(),
            t.replan(),
            wrong,
            t.done(),
            t.review(),
        ],
        name="weak",
    )
    strong = ScriptedBackend(
        [
            t.replan("1. Edit calc.py.", expect=[LEDGER_HEADING]),
            t.write("calc.py", t.CALC_WITH_TOTAL),
            t.done(),
            t.review(),
        ],
        name="strong",
    )
    result = env.agent([weak, strong], max_attempts=4).solve("Add total()")
    assert result.outcome == "solved", result.final_report
    assert [a.model for a in result.attempts] == [
        "scripted:weak",
        "scripted:weak",
        "scripted:weak",
        "scripted:strong",
    ]
    assert result.model == "scripted:strong"
    assert [c.purpose for c in strong.calls] == [
        Purpose.REPLAN,
        Purpose.ACT,
        Purpose.ACT,
        Purpose.REVIEW,
    ]
    esc = env.audit_events("escalate")
    assert len(esc) == 1 and esc[0]["fields"]["model"] == "scripted:strong"
    assert weak.remaining == 0 and strong.remaining == 0


def test_autonomous_regression_in_a_passing_requirement_is_caught_and_reverted(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env()
    backend = ScriptedBackend(
        [
            t.plan(),
            t.write("calc.py", "def total(xs):\n    return sum(xs)\n"),  # drops add()
            t.done(),
            t.review(),
            t.write("calc.py", t.CALC_WITH_TOTAL, expect=["keeps-add"]),
            t.done(),
            t.review(),
        ]
    )
    result = env.agent([backend]).solve("Add total()")
    assert result.outcome == "solved"
    first = result.attempts[0]
    assert first.verdict is Verdict.REGRESSION
    assert "keeps-add" in first.cause and "keeps-add" in first.verifier_output
    assert "-def add(a, b):" in first.diff
    assert "def add" in (env.root / "calc.py").read_text()


def test_autonomous_review_rejection_sends_a_passing_attempt_back(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env()
    backend = ScriptedBackend(
        [
            t.plan(),
            t.write("calc.py", t.CALC + "\n\ndef total(xs):\n    return 6\n"),
            t.done(),
            t.review("REJECT: total() hard-codes the expected result"),
            t.write("calc.py", t.CALC_WITH_TOTAL, expect=["hard-codes the expected result"]),
            t.done(),
            t.review("APPROVE"),
        ]
    )
    result = env.agent([backend]).solve("Add total()")
    assert result.outcome == "solved"
    assert result.attempts[0].verdict is Verdict.REVIEW_REJECTED
    assert result.attempts[0].review == "total() hard-codes the expected result"
    assert (env.root / "calc.py").read_text() == t.CALC_WITH_TOTAL
    reviews = env.audit_events("review")
    assert [r["fields"]["approved"] for r in reviews] == [False, True]


def test_autonomous_attempts_exhausted_fail_and_leave_the_tree_clean(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env()
    backend = ScriptedBackend(
        [
            t.plan(),
            t.write("notes.txt", "thinking\n"),
            t.done(),
            t.review(),
            t.write("other.txt", "more\n"),
            t.done(),
            t.review(),
        ]
    )
    result = env.agent([backend], max_attempts=2).solve("Add total()")
    assert result.outcome == "failed"
    assert len(result.attempts) == 2
    assert env.git_status() == ""
    assert "outcome: failed" in result.final_report
    assert len(env.audit_events("attempt")) == 2
    assert len(env.audit_events("revert")) == 2


def test_autonomous_history_stays_under_the_ceiling_and_collapses_oldest(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env()
    garbage = {"purpose": "act", "tool_calls": [{"name": "nope", "arguments": {}}]}
    turns: list[dict[str, Any]] = [
        t.plan(),
        # 1: regression (drops add), 2: verify_failed, 3: review_rejected, 4: agent_stopped
        *(t.write("calc.py", "def other(a):\n    return a\n"), t.done(), t.review()),
        *(t.write("notes.txt", "x\n"), t.done(), t.review()),
        *(t.write("calc.py", t.CALC_WITH_TOTAL), t.done(), t.review("REJECT: no tests")),
        garbage,
        garbage,
        *(t.write("calc.py", t.CALC_WITH_TOTAL), t.done(), t.review()),
    ]
    backend = ScriptedBackend(turns)
    agent = env.agent([backend], max_attempts=5, max_steps=2, history_token_ceiling=260)
    result = agent.solve("Add total()")
    assert result.outcome == "solved", result.final_report
    assert [a.verdict.value for a in result.attempts] == [
        "regression",
        "verify_failed",
        "review_rejected",
        "agent_stopped",
        "passed",
    ]
    injected = [e["fields"] for e in env.audit_events("history_injected")]
    assert [f["records"] for f in injected] == [1, 2, 3, 4]
    assert all(f["tokens"] <= 260 or f["over_ceiling"] for f in injected)
    assert injected[-1]["collapsed"] >= 1
    last = _act_prompts(backend)[-1]
    for n in (1, 2, 3, 4):
        assert f"Attempt {n} " in last  # collapsed or full, never dropped


# -- command requirements: the signature digests the output -------------------------------------

# unittest rather than pytest: the same kind of output (test ids, tracebacks) at a fraction
# of the start-up time.
CMD_SPEC = """\
requirements:
  - id: tests-pass
    command: {{run: '{python} -m unittest discover -s tests -t .', timeout: 120}}
"""

# The assertion message carries a timing and a temporary path, as real failures often do:
# two runs of the same failure differ there and must still share a signature.
CMD_TESTS = """\
import tempfile
import time
import unittest

from calc import total


class TotalTest(unittest.TestCase):
    def test_total(self):
        where = tempfile.mkdtemp()
        self.assertEqual(total([1, 2, 3]), 6, f"after {time.perf_counter()}s in {where}")

    def test_total_empty(self):
        self.assertEqual(total([]), 0)
"""

RETURNS_ZERO = "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n    return 0\n"
TYPE_ERROR = "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n    return sum(xs) + None\n"


def _cmd_env(make_env: Callable[..., Any]) -> Any:
    import sys

    return make_env(
        spec=CMD_SPEC.format(python=sys.executable),
        files={"tests/__init__.py": "", "tests/test_calc.py": CMD_TESTS},
    )


def test_autonomous_different_command_failures_are_both_carried_forward(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = _cmd_env(make_env)
    backend = ScriptedBackend(
        [
            t.plan(),
            t.write("calc.py", RETURNS_ZERO),  # test_total fails: AssertionError, exit 1
            t.done(),
            t.review(),
            t.write("calc.py", TYPE_ERROR),  # both tests fail: TypeError, exit 1 too
            t.done(),
            t.review(),
            t.write("calc.py", t.CALC_WITH_TOTAL),
            t.done(),
            t.review(),
        ]
    )
    result = env.agent([backend], max_attempts=3).solve("Add total()")
    assert result.outcome == "solved", result.final_report
    a1, a2, _ = result.attempts
    assert a1.signature != a2.signature  # same exit code, different failures
    assert "AssertionError" in a1.signature.parts[0] and "TypeError" in a2.signature.parts[0]
    assert env.audit_events("replan") == []  # not taken for a repeat
    third = _act_prompts(backend)[2]
    assert third.count("### Attempt") == 2  # the second failure's output reached the prompt
    assert "TypeError" in third and "test_total_empty" in third


def test_autonomous_same_command_failure_with_other_timings_is_a_repeat(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = _cmd_env(make_env)
    backend = ScriptedBackend(
        [
            t.plan(),
            t.write("calc.py", RETURNS_ZERO),
            t.done(),
            t.review(),
            t.write("calc.py", RETURNS_ZERO + "\n# tried again\n"),
            t.done(),
            t.review(),
            t.replan("1. Return the sum.", expect=[LEDGER_HEADING]),
            t.write("calc.py", t.CALC_WITH_TOTAL),
            t.done(),
            t.review(),
        ]
    )
    result = env.agent([backend], max_attempts=3).solve("Add total()")
    assert result.outcome == "solved", result.final_report
    a1, a2, _ = result.attempts
    assert a1.verifier_output != a2.verifier_output  # the timings differ...
    assert a1.signature == a2.signature  # ...the failure does not
    assert len(env.audit_events("replan")) == 1
