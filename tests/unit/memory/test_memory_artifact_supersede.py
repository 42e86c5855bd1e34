"""The Action's side of supersession: the agent job proposes UPDATE / DELETE / proposal ops;
publish applies them to tainted items only and turns the rest into proposals for a person."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chimera.github.publish.memory import propose
from chimera.memory.artifact import admit_artifact
from chimera.memory.items import (
    PROPOSED_DELETE,
    PROPOSED_UPDATE,
    TAINTED,
    Candidate,
    JournalOp,
    OpKind,
    Tier,
)
from chimera.memory.manager import MemoryManager
from chimera.memory.part import MEMORY_DB
from chimera.memory.store import MemoryStore
from chimera.providers.scripted import ScriptedBackend

TS = "2026-01-03T00:00:00+00:00"
TRUSTED_ID, TAINTED_ID = "m-00000000000a", "m-00000000000b"


def branch_store() -> MemoryStore:
    store = MemoryStore(":memory:")
    store.apply(
        JournalOp(
            OpKind.ADD, TRUSTED_ID, TS, "p", Tier.SEMANTIC, "The public API is served at /api/v1."
        )
    )
    store.apply(
        JournalOp(OpKind.ADD, TAINTED_ID, TS, "p", Tier.SEMANTIC, "Tests run with pytest -n 2.",
                  TAINTED, ("artifact",))
    )  # fmt: skip
    return store


def test_publish_supersedes_tainted_items_and_proposes_for_trusted_ones() -> None:
    store = branch_store()
    doc = {
        "version": 1,
        "ops": [
            {"op": "update", "id": TAINTED_ID, "text": "Tests run with pytest -n 4."},
            {"op": "update", "id": TRUSTED_ID, "text": "The public API is served at /api/v2."},
            {"op": "delete", "id": TRUSTED_ID, "evidence": "the API moved to /api/v2"},
            {"op": "add", "text": "The public API is served at /api/v2.", "kind": PROPOSED_UPDATE,
             "supersedes": TRUSTED_ID},
            {"op": "delete", "id": "m-ffffffffffff", "evidence": "gone"},
            {"op": "promote", "id": TAINTED_ID},
        ],
    }  # fmt: skip
    verdict = admit_artifact(doc, run_id="gh-1-2", ts=TS, store=store)
    update, prop_update, prop_delete, prop_add = verdict.accepted
    assert (update.op, update.id, update.text, update.provenance) == (
        OpKind.UPDATE, TAINTED_ID, "Tests run with pytest -n 4.", TAINTED,
    )  # fmt: skip
    for op, kind in ((prop_update, PROPOSED_UPDATE), (prop_delete, PROPOSED_DELETE)):
        assert (op.op, op.kind, op.supersedes, op.provenance) == (
            OpKind.ADD, kind, TRUSTED_ID, TAINTED,
        )  # fmt: skip
        assert op.tier is Tier.SEMANTIC and op.id not in (TRUSTED_ID, TAINTED_ID)
    assert prop_add.supersedes == TRUSTED_ID and prop_add.kind == PROPOSED_UPDATE
    reasons = [r for _, _, r in verdict.refused]
    assert "not a live item" in reasons[0] and "promote" in reasons[1]
    assert store.apply_many(verdict.accepted) == 3  # the two equal proposals are one item
    trusted = store.get(TRUSTED_ID)
    assert (
        trusted is not None
        and trusted.text == "The public API is served at /api/v1."
        and not trusted.deleted
    )
    # Without the branch store, publish refuses every UPDATE and DELETE as before.
    bare = admit_artifact(doc, run_id="gh-1-2", ts=TS)
    assert [op.op for op in bare.accepted] == [OpKind.ADD]
    assert bare.accepted[0].supersedes == "" and bare.accepted[0].tier is Tier.EPISODIC


def test_the_agent_job_proposes_its_supersessions(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / MEMORY_DB)
    seeded = branch_store()
    store.apply_many(
        JournalOp(OpKind.ADD, i.id, TS, "p", i.tier, i.text, i.provenance, i.taint_sources)
        for i in seeded.items()
    )
    before = {i.id: i.uses for i in store.items()}
    pairs = ((TAINTED_ID, "Tests run with pytest -n 4."),
             (TRUSTED_ID, "The public API is served at /api/v2."))  # fmt: skip
    turns = [
        {"purpose": "memory", "text": json.dumps({"op": "UPDATE", "target_id": t, "text": x})}
        for t, x in pairs
    ]
    mm = MemoryManager(store, backend=ScriptedBackend(turns), run_id="gh-1-2")
    tainted: dict[str, Any] = {"provenance": TAINTED, "taint_sources": ("untrusted_task",)}
    assert mm.remember(Candidate("Tests run with pytest -n 4.", Tier.SEMANTIC, **tainted)).op == (
        "UPDATE"
    )
    assert mm.remember(
        Candidate("The public API is served at /api/v2.", Tier.SEMANTIC, **tainted)
    ).proposal
    store.close()
    (tmp_path / "artifacts").mkdir()
    path = propose(tmp_path, tmp_path / "artifacts", "gh-1-2", before)
    assert path is not None
    ops = json.loads(path.read_text())["ops"]
    assert [(o["op"], o.get("supersedes")) for o in ops] == [
        ("add", TRUSTED_ID),
        ("update", None),
    ]
    assert ops[1]["id"] == TAINTED_ID and ops[1]["text"] == "Tests run with pytest -n 4."
    # Publish takes them as they are: the tainted item's update applies, the proposal stays.
    verdict = admit_artifact(json.loads(path.read_text()), run_id="gh-1-2", ts=TS,
                             store=branch_store())  # fmt: skip
    assert [(o.op, o.supersedes) for o in verdict.accepted] == [
        (OpKind.ADD, TRUSTED_ID),
        (OpKind.UPDATE, ""),
    ]
