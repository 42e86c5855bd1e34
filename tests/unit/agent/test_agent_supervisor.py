"""Manager review: robust APPROVE/REJECT parsing and a real review call."""

from __future__ import annotations

import pytest

from chimera.core.supervisor import ManagerReview, parse_review
from chimera.protocols import Purpose
from chimera.providers import ScriptedBackend


@pytest.mark.parametrize(
    ("text", "approved", "reason"),
    [
        ("APPROVE", True, ""),
        ("approve\nLooks right.", True, "Looks right."),
        ("**APPROVED** — tests cover it", True, "tests cover it"),
        ("REJECT: the change only adds a comment", False, "the change only adds a comment"),
        ("Verdict: **REJECT**\nIt hard-codes the answer.", False, "It hard-codes the answer."),
        ("> REJECTED - edits specs/", False, "edits specs/"),
        ('{"verdict": "reject", "reason": "games the check"}', False, "games the check"),
        ('```json\n{"verdict": "approve"}\n```', True, ""),
        ("I cannot approve this: it deletes the tests.", False, "I cannot approve this: it"),
        ("The change is fine overall. APPROVE.", True, ""),
        ("After reading it I would REJECT it. It is incomplete.", False, "After reading"),
    ],
)
def test_agent_parse_review_forms(text: str, approved: bool, reason: str) -> None:
    ok, why, parsed = parse_review(text)
    assert parsed
    assert ok is approved
    assert why.startswith(reason)


def test_agent_parse_review_unparseable_is_no_review_not_an_approval() -> None:
    assert parse_review("hmm, interesting") == (False, "", False)
    assert parse_review("") == (False, "", False)


def test_agent_manager_review_call_uses_review_purpose_and_sees_the_diff() -> None:
    backend = ScriptedBackend(
        [{"purpose": "review", "text": "REJECT: writes the pattern into a comment"}]
    )
    verdict = ManagerReview().review(
        backend, task="add total()", targets=["total"], diff="+# total\n", summary="done"
    )
    assert not verdict.approved
    assert verdict.reason == "writes the pattern into a comment"
    call = backend.calls[0]
    assert call.purpose is Purpose.REVIEW and call.tools is None
    assert "+# total" in call.messages[1]["content"]
