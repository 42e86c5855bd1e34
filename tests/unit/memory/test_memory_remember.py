"""remember(): ADD / UPDATE / DELETE / NOOP through a scripted model, and the rules that
overrule it in Memory-R1's failure cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chimera.errors import UsageError
from chimera.memory.items import TAINTED, Candidate, Tier
from chimera.memory.manager import MemoryManager
from chimera.memory.store import MemoryStore
from chimera.providers.scripted import ScriptedBackend


def answer(**decision: Any) -> dict[str, Any]:
    return {"purpose": "memory", "text": json.dumps(decision)}


def manager(tmp_path: Path, *turns: dict[str, Any]) -> tuple[MemoryManager, ScriptedBackend]:
    backend = ScriptedBackend(list(turns))
    store = MemoryStore(tmp_path / "memory.db")
    return MemoryManager(store, backend=backend, run_id="r1"), backend


def seed(mm: MemoryManager, text: str, tier: Tier = Tier.SEMANTIC, **kw: Any) -> str:
    backend, mm.backend = mm.backend, None  # seeding needs no decision
    try:
        result = mm.remember(Candidate(text, tier, **kw))
    finally:
        mm.backend = backend
    assert result.op == "ADD"
    return result.item_id


def live(mm: MemoryManager) -> list[str]:
    return [i.text for i in mm.store.items()]


def test_memory_exact_duplicate_is_noop_without_a_model_call(tmp_path: Path) -> None:
    mm, backend = manager(tmp_path)  # an empty script: any call would fail
    first = seed(mm, "Money is stored in cents.")
    mm.store.close()
    before = (tmp_path / "memory.db").read_bytes()
    mm = MemoryManager(MemoryStore(tmp_path / "memory.db"), backend=backend)
    result = mm.remember(Candidate("  money IS stored in cents ", Tier.SEMANTIC))
    assert (result.op, result.target_id, result.called_model) == ("NOOP", first, False)
    assert backend.position == 0
    mm.store.close()
    assert (tmp_path / "memory.db").read_bytes() == before


def test_memory_new_dog_never_deletes_the_old_dog(tmp_path: Path) -> None:
    mm, backend = manager(tmp_path)
    buddy = seed(mm, "The maintainer adopted a dog named Buddy.")
    backend.turns = ScriptedBackend(
        [
            answer(
                op="DELETE",
                target_id=buddy,
                evidence="adopted a dog named Scout",
                reason="the dog is now Scout",
            )
        ]
    ).turns
    result = mm.remember(Candidate("The maintainer adopted a dog named Scout.", Tier.SEMANTIC))
    assert result.proposed == "DELETE" and result.op == "ADD"
    assert "does not contradict" in result.overruled
    assert sorted(live(mm)) == [
        "The maintainer adopted a dog named Buddy.",
        "The maintainer adopted a dog named Scout.",
    ]
    item = mm.store.get(buddy)
    assert item is not None and not item.deleted


def test_memory_wrong_noop_is_overruled(tmp_path: Path) -> None:
    mm, backend = manager(tmp_path)
    buddy = seed(mm, "The maintainer adopted a dog named Buddy.")
    backend.turns = ScriptedBackend([answer(op="noop", target_id=buddy)]).turns
    result = mm.remember(Candidate("The maintainer adopted a dog named Scout.", Tier.SEMANTIC))
    assert (result.proposed, result.op) == ("NOOP", "ADD") and result.overruled
    assert len(live(mm)) == 2


@pytest.mark.parametrize(
    "merged",
    ["The user is allergic to turtles.", "The user likes turtles and is allergic to turtles."],
)
def test_memory_likes_and_allergic_never_merge(tmp_path: Path, merged: str) -> None:
    mm, backend = manager(tmp_path)
    likes = seed(mm, "The user likes turtles.")
    backend.turns = ScriptedBackend([answer(op="UPDATE", target_id=likes, text=merged)]).turns
    result = mm.remember(Candidate("The user is allergic to turtles.", Tier.SEMANTIC))
    assert result.proposed == "UPDATE" and result.op == "ADD"
    assert "UPDATE refused" in result.overruled
    item = mm.store.get(likes)
    assert item is not None and item.text == "The user likes turtles."
    assert mm.store.history(likes)[-1]["op"] == "add"  # no update row
    assert len(live(mm)) == 2


def test_memory_refinement_updates_in_place_with_history(tmp_path: Path) -> None:
    mm, backend = manager(tmp_path)
    target = seed(mm, "Tests run with pytest.")
    backend.turns = ScriptedBackend(
        [answer(op="UPDATE", target_id=target, text="Tests run with pytest -n 2.")]
    ).turns
    result = mm.remember(Candidate("Tests run with pytest -n 2.", Tier.SEMANTIC))
    assert (result.op, result.item_id) == ("UPDATE", target)
    assert live(mm) == ["Tests run with pytest -n 2."]
    rows = mm.store.history(target)
    assert [r["op"] for r in rows] == ["add", "update"]
    assert rows[-1]["old_text"] == "Tests run with pytest."
    assert [o.op.value for o in mm.journal] == ["add", "update"]


def test_memory_contradiction_tombstones_with_quoted_evidence_and_restores(
    tmp_path: Path,
) -> None:
    mm, backend = manager(tmp_path)
    tox = seed(mm, "Tests run with tox.")
    backend.turns = ScriptedBackend(
        [answer(op="DELETE", target_id=tox, evidence="no longer uses tox")]
    ).turns
    result = mm.remember(
        Candidate("The project no longer uses tox; tests run with nox.", Tier.SEMANTIC)
    )
    assert (result.op, result.target_id) == ("DELETE", tox)
    dead = mm.store.get(tox)
    assert dead is not None and dead.deleted and dead.evidence == "no longer uses tox"
    assert [i.id for i in mm.recall("tox tests")] == [result.item_id]
    assert mm.restore(tox, by="alice")
    assert {i.id for i in mm.recall("tox tests")} == {tox, result.item_id}


def test_memory_delete_without_a_verbatim_quote_is_refused(tmp_path: Path) -> None:
    mm, backend = manager(tmp_path)
    tox = seed(mm, "Tests run with tox.")
    backend.turns = ScriptedBackend(
        [answer(op="DELETE", target_id=tox, evidence="tox is not used any more")]
    ).turns
    result = mm.remember(Candidate("The project no longer uses tox.", Tier.SEMANTIC))
    assert result.op == "ADD" and "not quoted verbatim" in result.overruled
    item = mm.store.get(tox)
    assert item is not None and not item.deleted


def test_memory_tainted_text_cannot_change_a_trusted_item(tmp_path: Path) -> None:
    mm, backend = manager(tmp_path)
    target = seed(mm, "Tests run with pytest.")
    backend.turns = ScriptedBackend(
        [answer(op="UPDATE", target_id=target, text="Tests run with pytest -n 2.")]
    ).turns
    result = mm.remember(
        Candidate(
            "Tests run with pytest -n 2.",
            Tier.SEMANTIC,
            provenance=TAINTED,
            taint_sources=("untrusted_task",),
        )
    )
    assert result.op == "ADD" and "tainted text cannot change a trusted item" in result.overruled
    added = mm.store.get(result.item_id)
    assert added is not None and added.provenance == TAINTED
    item = mm.store.get(target)
    assert item is not None and item.text == "Tests run with pytest."


def test_memory_invalid_model_answer_adds_after_one_repair(tmp_path: Path) -> None:
    mm, _ = manager(
        tmp_path,
        {"purpose": "memory", "text": "I think ADD"},
        {"purpose": "memory", "text": '{"op": "MERGE"}'},
    )
    seed(mm, "Tests run with pytest.")
    result = mm.remember(Candidate("Tests need the network off.", Tier.SEMANTIC))
    assert result.op == "ADD" and result.proposed == "invalid"


def test_memory_persona_is_for_people_and_working_is_never_persisted(tmp_path: Path) -> None:
    mm, _ = manager(tmp_path)
    with pytest.raises(UsageError, match="persona"):
        mm.remember(Candidate("Always write in French.", Tier.PERSONA))
    with pytest.raises(UsageError, match="empty"):
        mm.remember(Candidate("   "))
    pid = mm.add_persona("Prefer small pull requests.", by="alice")
    assert [i.id for i in mm.persona()] == [pid]
    mm.remember(Candidate("scratch note for this run", Tier.WORKING))
    assert [i.text for i in mm.working] == ["scratch note for this run"]
    assert [i.tier for i in mm.store.items()] == [Tier.PERSONA]


def test_memory_never_stores_a_credential(tmp_path: Path) -> None:
    mm, backend = manager(tmp_path)
    token = "ghp_" + "a1B2" * 9
    result = mm.remember(Candidate(f"the deploy token is {token}", Tier.SEMANTIC))
    assert result.op == "REFUSED" and "GitHub" in result.overruled and backend.position == 0
    assert mm.store.items() == []
    with pytest.raises(UsageError, match="never stored"):
        mm.add_persona("-----BEGIN RSA PRIVATE KEY-----\nabc", by="alice")
