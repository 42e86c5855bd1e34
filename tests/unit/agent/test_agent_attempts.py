"""Attempt records, failure signatures, history rendering under a ceiling, the task ledger."""

from __future__ import annotations

from pathlib import Path

from chimera.core.attempts import (
    DIFF_TRUNCATION_MARKER,
    HISTORY_HEADING,
    LEDGER_HEADING,
    AttemptHistory,
    AttemptRecord,
    FailureSignature,
    TaskLedger,
    Verdict,
    normalise,
)
from chimera.spec.kinds.text import Contains
from chimera.spec.model import Requirement, SourceLocation, Status
from chimera.spec.results import RequirementResult


def _result(rid: str, message: str, status: Status = Status.FAILED) -> RequirementResult:
    check = Contains.model_validate({"path": "README.md", "pattern": "x"})
    req = Requirement(id=rid, check=check, location=SourceLocation("specs/a.yaml", 1, 1))
    return RequirementResult(req, status, message)


def _record(n: int, sig: FailureSignature, diff: str = "", limit: int = 2000) -> AttemptRecord:
    return AttemptRecord.build(
        number=n,
        verdict=sig.verdict,
        signature=sig,
        cause=f"cause of attempt {n}",
        verifier_output=f"[r] failed: output {n}",
        diff=diff,
        record_diff_chars=limit,
        files_changed=1,
        added=3,
        removed=1,
    )


def test_agent_normalise_strips_numbers_paths_and_hex() -> None:
    a = normalise("pattern not found in src/app/main.py:12:4 after 0.53s (commit deadbeef12)")
    b = normalise("pattern not found in lib/other.py:99:1 after 1.2s (commit 0badc0ffee)")
    assert a == b
    assert "<path>" in a and "<n>" in a and "<hex>" in a


def test_agent_signature_is_stable_for_the_same_failure() -> None:
    s1 = FailureSignature.from_results(
        Verdict.VERIFY_FAILED, [_result("b", "exit 1 after 3.2s"), _result("a", "missing x.py")]
    )
    s2 = FailureSignature.from_results(
        Verdict.VERIFY_FAILED, [_result("a", "missing y.py"), _result("b", "exit 1 after 9.0s")]
    )
    s3 = FailureSignature.from_results(Verdict.REGRESSION, [_result("a", "missing y.py")])
    assert s1 == s2 and s1.digest == s2.digest
    assert s1 != s3
    assert FailureSignature.from_json(s1.to_json()) == s1


def test_agent_record_caps_the_diff_with_a_marker() -> None:
    sig = FailureSignature(Verdict.VERIFY_FAILED, ("a: failed: x",))
    rec = _record(1, sig, diff="+" * 50_000)
    assert rec.diff_chars == 50_000
    assert rec.diff.startswith("+" * 2000)
    assert "diff truncated: 48,000 more characters" in rec.diff
    assert DIFF_TRUNCATION_MARKER.split("{")[0] in rec.diff
    assert AttemptRecord.from_json(rec.to_json()) == rec


def test_agent_history_renders_oldest_first_with_verdicts_and_dedupes() -> None:
    h = AttemptHistory()
    s1 = FailureSignature(Verdict.VERIFY_FAILED, ("a: failed: one",))
    s2 = FailureSignature(Verdict.REGRESSION, ("b: failed: two",))
    assert h.add(_record(1, s1)) is True
    assert h.add(_record(2, s2)) is True
    assert h.add(_record(3, s1)) is False
    text = h.render().text
    assert text.startswith(f"## {HISTORY_HEADING}")
    assert "reverted" in text
    first = text.index("Attempt 1 — verdict: verify_failed")
    second = text.index("Attempt 2 — verdict: regression")
    assert first < second
    assert "repeated 2× (also attempt 3)" in text
    assert "Attempt 3 —" not in text  # the repeat is counted, not appended
    assert text.count("### Attempt") == 2


def test_agent_history_diff_only_with_diff_feedback() -> None:
    h = AttemptHistory()
    sig = FailureSignature(Verdict.VERIFY_FAILED, ("a: failed: one",))
    h.add(_record(1, sig, diff="--- a/x\n+++ b/x\n+SECRET_PATCH_LINE\n"))
    off = h.render(diff_feedback=False).text
    on = h.render(diff_feedback=True).text
    assert "SECRET_PATCH_LINE" not in off
    assert "cause of attempt 1" in off and "1 file(s), +3 -1" in off
    assert "SECRET_PATCH_LINE" in on and "```diff" in on


def test_agent_history_collapses_oldest_under_the_ceiling_never_drops() -> None:
    h = AttemptHistory()
    for n in range(1, 21):
        sig = FailureSignature(Verdict.VERIFY_FAILED, (f"r{n}: failed: reason {n}",))
        h.add(_record(n, sig, diff=("+line\n" * 10_000)))
    full = h.render(diff_feedback=True, token_ceiling=10**9)
    assert full.collapsed == 0
    tight = h.render(diff_feedback=True, token_ceiling=3000)
    assert tight.tokens <= 3000 and not tight.over_ceiling
    assert tight.collapsed > 0
    for n in range(1, 21):
        assert f"- Attempt {n} —" in tight.text or f"### Attempt {n} —" in tight.text
    # The newest record keeps its details; the oldest is a single collapsed line.
    assert "### Attempt 20 —" in tight.text
    assert "- Attempt 1 — verify_failed — signature" in tight.text


def test_agent_task_ledger_context_lists_causes_and_plans(tmp_path: Path) -> None:
    ledger = TaskLedger("make it work")
    sig = FailureSignature(Verdict.VERIFY_FAILED, ("a: failed: one",))
    ledger.note_plan("1. edit a.py")
    ledger.note_attempt(_record(1, sig))
    ledger.note_attempt(_record(2, sig))
    ctx = ledger.context()
    assert ctx.startswith(LEDGER_HEADING)
    assert "Attempt 1, 2 (verify_failed, 2×" in ctx
    assert "cause of attempt 1" in ctx
    assert "Plan 1:" in ctx and "edit a.py" in ctx
    assert TaskLedger.from_json(ledger.to_json()).context() == ctx
