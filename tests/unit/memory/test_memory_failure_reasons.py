"""A failed attempt is remembered with why it failed — its cause, the failing requirement and
the first error of the evidence, bounded — so the next plan prompt says why, not only that."""

from __future__ import annotations

from pathlib import Path

from chimera.core.attempt_record import GIST_CHARS, AttemptRecord
from chimera.core.failure_signature import FailureSignature, Verdict
from chimera.memory.items import Tier
from chimera.memory.manager import MemoryManager
from chimera.memory.part import MemoryExperience, PlanMemory, attempt_candidate
from chimera.memory.store import MemoryStore
from chimera.protocols import Experience
from chimera.spec.drift import check_drift
from chimera.spec.loader import load_spec

SPEC = """\
requirements:
  - id: tests-pass
    command:
      run: >-
        python -c "print('collected 3 items'); print('E   AssertionError: assert total([1, 2])
        == 3, got 0'); print('FAILED test_calc.py::test_total'); raise SystemExit(1)"
  - id: keeps-add
    defines: {path: calc.py, symbol: add}
"""


def failed_record(tmp_path: Path) -> AttemptRecord:
    (tmp_path / "specs").mkdir(parents=True)
    (tmp_path / "specs" / "reqs.yaml").write_text(SPEC)
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    report = check_drift(load_spec(tmp_path / "specs"), tmp_path)
    red = [r for r in report.results if not r.passed]
    (result,) = red
    return AttemptRecord.build(
        number=1,
        verdict=Verdict.VERIFY_FAILED,
        signature=FailureSignature.from_results(Verdict.VERIFY_FAILED, red),
        cause=f"verification failed; still red: tests-pass (failed: {result.message[:160]})",
        verifier_output=f"[{result.id}] {result.status.value}: " + result.render(max_evidence=3),
        diff="",
        first_failing_step="step 2: run_command: exit 1",
    )


def test_memory_gist_names_the_requirement_and_the_first_error(tmp_path: Path) -> None:
    gist = failed_record(tmp_path).gist()
    assert gist.startswith("failing: tests-pass; first error: E AssertionError: assert total")
    assert gist.endswith("first failing step: step 2: run_command: exit 1")
    long = AttemptRecord.build(
        number=1, verdict=Verdict.VERIFY_FAILED, signature=FailureSignature.from_results(
            Verdict.VERIFY_FAILED, []), cause="x",
        verifier_output="[r] failed: m\n  " + "error " * 500, diff="",
    )  # fmt: skip
    assert len(long.gist()) <= GIST_CHARS + 3


def test_memory_the_next_plan_prompt_says_why_an_attempt_failed(tmp_path: Path) -> None:
    record = failed_record(tmp_path / "p")
    manager = MemoryManager(MemoryStore(tmp_path / "m.db"), run_id="r1")
    MemoryExperience(manager).append(
        Experience(
            task="Add total() to calc.py " + "with care " * 80,
            verdict=record.verdict.value,
            signature=record.signature.digest,
            cause=record.cause,
            evidence=record.gist(),
            run_id="r1",
            attempt=1,
            targets=("tests-pass",),
        )
    )
    (item,) = manager.store.items([Tier.EPISODIC])
    assert "why: verification failed; still red: tests-pass" in item.text
    assert "first error: E AssertionError: assert total([1, 2]) == 3, got 0" in item.text
    assert len(item.text) < 1400  # task, cause and evidence each bounded
    # Run 2's plan prompt: the memory block carries the reason.
    block = PlanMemory(manager).recall_block("Add total() to calc.py", budget_tokens=2000)
    assert item.id in block.ids
    assert "first error: E AssertionError: assert total([1, 2]) == 3, got 0" in block.text


def test_memory_an_attempt_item_without_evidence_still_says_why() -> None:
    exp = Experience("fix it", "regression", "sig", "broke keeps-add (failed: gone)", attempt=1)
    assert "attempt 1 regression on: fix it — why: broke keeps-add" in attempt_candidate(exp).text
