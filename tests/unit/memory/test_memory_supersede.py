"""A changed fact supersedes the old one (history kept), with no negation word; a tainted
source's supersession of a trusted item becomes a proposal a person accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chimera.errors import UsageError
from chimera.memory.decide import changed_value
from chimera.memory.items import PROPOSED_UPDATE, TAINTED, TRUSTED, Candidate, Tier
from chimera.memory.manager import MemoryManager
from chimera.memory.store import MemoryStore
from chimera.providers.scripted import ScriptedBackend


def answer(**decision: Any) -> dict[str, Any]:
    return {"purpose": "memory", "text": json.dumps(decision)}


def seeded(tmp_path: Path, text: str, **kw: Any) -> tuple[MemoryManager, str]:
    mm = MemoryManager(MemoryStore(tmp_path / "memory.db"), run_id="r0")
    first = mm.remember(Candidate(text, Tier.SEMANTIC, **kw))
    assert first.op == "ADD"
    return mm, first.item_id


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Tests run with pytest -n 2.", "Tests run with pytest -n 4."),
        ("The public API is served at /api/v1.", "The public API is served at /api/v2."),
        ("CI installs Python 3.11 before the tests.", "CI installs Python 3.12 before the tests."),
    ],
)
def test_memory_a_changed_value_replaces_the_old_fact_with_history(
    tmp_path: Path, old: str, new: str
) -> None:
    mm, target = seeded(tmp_path, old)
    mm.backend = ScriptedBackend([answer(op="UPDATE", target_id=target, text=new)])
    result = mm.remember(Candidate(new, Tier.SEMANTIC))
    assert (result.op, result.item_id, result.overruled) == ("UPDATE", target, "")
    assert [i.text for i in mm.store.items()] == [new]  # one live fact, not two
    rows = mm.store.history(target)
    assert [r["op"] for r in rows] == ["add", "update"] and rows[-1]["old_text"] == old
    assert [i.text for i in mm.recall(new)] == [new]


def test_memory_a_changed_value_may_also_come_as_a_quoted_delete(tmp_path: Path) -> None:
    mm, target = seeded(tmp_path, "Tests run with pytest -n 2.")
    new = "Tests run with pytest -n 4."
    mm.backend = ScriptedBackend([answer(op="DELETE", target_id=target, evidence="pytest -n 4")])
    result = mm.remember(Candidate(new, Tier.SEMANTIC))
    assert (result.op, result.target_id) == ("DELETE", target)
    assert [i.text for i in mm.store.items()] == [new]
    old = mm.store.get(target)
    assert old is not None and old.deleted and old.text == "Tests run with pytest -n 2."


def test_memory_plain_words_are_never_a_changed_value() -> None:
    assert changed_value("Tests run with pytest -n 2.", "Tests run with pytest -n 4.")
    assert changed_value("We install with `poetry`.", "We install with `uv`.")
    assert not changed_value("The maintainer adopted Buddy.", "The maintainer adopted Scout.")
    assert not changed_value("The user likes turtles.", "The user is allergic to turtles.")
    assert not changed_value("Port 8080 serves the API.", "Port 9090 serves the metrics.")
    assert not changed_value("Staging runs Python 3.11.", "Production runs Python 3.12.")


def test_memory_a_tainted_supersession_of_a_trusted_item_is_a_proposal(tmp_path: Path) -> None:
    mm, target = seeded(tmp_path, "Tests run with pytest -n 2.")
    new = "Tests run with pytest -n 4."
    mm.backend = ScriptedBackend([answer(op="UPDATE", target_id=target, text=new)])
    result = mm.remember(
        Candidate(new, Tier.SEMANTIC, provenance=TAINTED, taint_sources=("untrusted_task",))
    )
    assert result.proposal and result.op == "ADD" and result.target_id == target
    assert "tainted text cannot change a trusted item" in result.overruled
    kept = mm.store.get(target)
    assert kept is not None and kept.text == "Tests run with pytest -n 2." and not kept.tainted
    (proposal,) = mm.proposals()
    assert proposal.id == result.item_id and proposal.supersedes == target
    assert proposal.kind == PROPOSED_UPDATE and proposal.provenance == TAINTED
    assert [op.to_json()["supersedes"] for op in mm.journal if op.id == proposal.id] == [target]
    with pytest.raises(UsageError, match="not an open proposal"):
        mm.accept(target, by="alice")
    assert mm.accept(proposal.id, by="alice") == target
    after = mm.store.get(target)
    assert after is not None and after.text == new and after.provenance == TRUSTED
    assert mm.store.history(target)[-1]["old_text"] == "Tests run with pytest -n 2."
    assert mm.proposals() == [] and [i.text for i in mm.store.items()] == [new]
    with pytest.raises(UsageError, match="not an open proposal"):
        mm.accept(proposal.id, by="alice")


def test_memory_a_tainted_supersession_of_a_tainted_item_applies(tmp_path: Path) -> None:
    mm, target = seeded(
        tmp_path, "Tests run with pytest -n 2.", provenance=TAINTED, taint_sources=("artifact",)
    )
    new = "Tests run with pytest -n 4."
    mm.backend = ScriptedBackend([answer(op="UPDATE", target_id=target, text=new)])
    result = mm.remember(
        Candidate(new, Tier.SEMANTIC, provenance=TAINTED, taint_sources=("untrusted_task",))
    )
    assert (result.op, result.proposal) == ("UPDATE", False)
    item = mm.store.get(target)
    assert item is not None and item.text == new and item.tainted
