"""Failure carry-forward: one record per attempt, rendered into the next attempt's prompt.

The rules (Chimera's "carry the failure forward" note, DESIGN.md step 4):

1. attempts live in a list, one :class:`AttemptRecord` each: the verifier's output, the real
   diff the attempt wrote (taken from the workspace snapshot *before* the revert, since after
   the revert nothing on disk remembers the bad path), and the first failing tool step;
2. the retry prompt renders every record oldest first, numbered, with its verdict, under a
   heading saying they were tried and reverted (:meth:`AttemptHistory.render`);
3. each record is capped (the diff at ``record_diff_chars``, 2,000 by default, with a
   truncation marker) and the whole history stays under a token ceiling: past it the oldest
   records collapse to one line each (number, verdict, signature), never silently dropped;
4. records are deduplicated by :class:`FailureSignature` with a repeat count — a repeat is a
   signal, not new information;
5. a repeated signature forces a structural change (replan with :meth:`TaskLedger.context`, or
   escalate; see :mod:`chimera.core.autonomous`);
6. diff feedback is opt-in: a shown bad patch can anchor the model (the registered
   counter-hypothesis), so by default records carry verdicts and causes but no diff.

The task ledger follows Magentic-One's outer-loop ledger (Fourney et al., 2024): facts and
failed plans are kept apart from the inner loop's transcript and fed to the planner.

The parts live in :mod:`~chimera.core.failure_signature` (verdicts, signatures),
:mod:`~chimera.core.attempt_record` and :mod:`~chimera.core.attempt_history` (the rendered
history, the ledger); this module re-exports them.
"""

from __future__ import annotations

from chimera.core.attempt_history import (
    HISTORY_HEADING,
    LEDGER_HEADING,
    AttemptHistory,
    HistoryEntry,
    RenderedHistory,
    TaskLedger,
    approx_tokens,
)
from chimera.core.attempt_record import DIFF_TRUNCATION_MARKER, AttemptRecord
from chimera.core.failure_signature import (
    FailureSignature,
    Verdict,
    cap_text,
    evidence_digest,
    normalise,
)

__all__ = [
    "DIFF_TRUNCATION_MARKER",
    "HISTORY_HEADING",
    "LEDGER_HEADING",
    "AttemptHistory",
    "AttemptRecord",
    "FailureSignature",
    "HistoryEntry",
    "RenderedHistory",
    "TaskLedger",
    "Verdict",
    "approx_tokens",
    "cap_text",
    "evidence_digest",
    "normalise",
]
