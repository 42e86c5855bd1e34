"""The proposal ledger: a person's accept applies one delta (or mints a skill untrusted), a
reject applies nothing; both are ledger lines and audit events; nothing is decided twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.errors import UsageError
from chimera.evolution.proposals import Proposal, ProposalLedger, accept, reject
from chimera.evolution.skills import LearnedSkill, SkillState, SkillStore

BOOK = "## Strategies\n[str-00001] helpful=0 harmful=0 :: Keep helpers small.\n"


def _root(tmp_path: Path) -> Path:
    (tmp_path / ".chimera").mkdir()
    (tmp_path / ".chimera" / "playbook.md").write_text(BOOK)
    return tmp_path


def test_accept_applies_a_counter_as_a_delta_and_reject_applies_nothing(tmp_path: Path) -> None:
    root = _root(tmp_path)
    ledger = ProposalLedger.at(root)
    up = Proposal.make("r1", "counter", "reflection", "passed", bullet_id="str-00001", op="helpful")
    add = Proposal.make("r1", "bullet", "reflection", "passed", section="Pitfalls", text="x" * 9)
    assert ledger.record([up, add, up]) == [up.id, add.id, up.id]  # recorded once
    assert len(ledger.path.read_text().splitlines()) == 2
    assert "str-00001 helpful" in accept(root, up.id, by="ann")
    reject(root, add.id, by="ann")
    text = (root / ".chimera" / "playbook.md").read_text()
    assert text == BOOK.replace("helpful=0", "helpful=1")
    assert ledger.pending() == []
    with pytest.raises(UsageError, match="was decided already"):
        reject(root, add.id, by="ann")
    with pytest.raises(UsageError, match="is not in the ledger"):
        accept(root, "lp-000000000000", by="ann")
    log = (root / ".chimera/skills/audit.jsonl").read_text().splitlines()
    events = [json.loads(x)["event"] for x in log]
    assert events == ["proposal_accepted", "proposal_rejected"]


def test_a_counter_on_a_missing_bullet_is_refused_and_stays_pending(tmp_path: Path) -> None:
    root = _root(tmp_path)
    gone = Proposal.make(
        "r1", "counter", "reflection", "failed", bullet_id="str-00042", op="harmful"
    )
    ProposalLedger.at(root).record([gone])
    with pytest.raises(UsageError, match="no bullet 'str-00042'"):
        accept(root, gone.id, by="ann")
    assert [p.id for p in ProposalLedger.at(root).pending()] == [gone.id]
    assert (root / ".chimera" / "playbook.md").read_text() == BOOK


def test_an_accepted_skill_is_minted_provisional_and_untrusted_whatever_it_claims(
    tmp_path: Path,
) -> None:
    root = _root(tmp_path)
    claimed = LearnedSkill(
        "list-totals", "Sum lists next to helpers.", "Use the builtin sum.\n",
        state=SkillState.PROMOTED, trusted=True,
    )  # fmt: skip
    p = Proposal.make("r9", "skill", "reflection", "passed", skill=claimed.to_markdown())
    ProposalLedger.at(root).record([p])
    accept(root, p.id, by="ann")
    kept = SkillStore(root / ".chimera" / "skills").get("list-totals")
    assert kept is not None
    assert (kept.state, kept.trusted, kept.sources) == (SkillState.PROVISIONAL, False, ("r9",))


def test_a_persons_acceptance_alone_never_puts_a_skill_in_a_prompt(tmp_path: Path) -> None:
    """Accepted but untested: no prompt sees it; only the re-run gate's pass (``tested``)
    together with the acceptance makes it retrievable."""
    from dataclasses import replace

    from chimera.evolution.learned_context import EvolutionContext

    root = _root(tmp_path)
    claimed = LearnedSkill(
        "list-totals", "Sum lists next to helpers.", "Use the builtin sum.\n",
        tested="claimed by the proposal", accepted_by="someone",
    )  # fmt: skip
    p = Proposal.make("r9", "skill", "reflection", "passed", skill=claimed.to_markdown())
    ProposalLedger.at(root).record([p])
    assert "untested" in accept(root, p.id, by="ann")
    store = SkillStore(root / ".chimera" / "skills")
    kept = store.get("list-totals")
    assert kept is not None and (kept.accepted_by, kept.tested) == ("ann", "")
    assert EvolutionContext.open(root).retrieve("sum lists totals") == []
    store.put(replace(kept, tested="re-run gate on t1..t5: significantly better"))
    assert [s.name for s in EvolutionContext.open(root).retrieve("sum lists totals")] == [
        "list-totals"
    ]


def test_a_recorded_line_claiming_trust_reads_back_untrusted(tmp_path: Path) -> None:
    p = Proposal.make("r1", "bullet", "action", "passed", section="S", text="y" * 9)
    forged = p.to_json() | {"trusted": True, "state": "promoted"}
    back = Proposal.from_json(forged)
    assert (back.trusted, back.state) == (False, "provisional")
