"""With a model, migrated curated memory goes through the model-decided ADD / UPDATE /
DELETE / NOOP: a changed fact supersedes a tainted item and is proposed against a trusted one."""

from __future__ import annotations

import json
from pathlib import Path

from chimera.memory.items import TAINTED, Candidate, Tier
from chimera.memory.part import open_local
from chimera.migration.model import Found, Status
from chimera.migration.run import migrate
from chimera.providers.scripted import ScriptedBackend


def test_migration_with_a_model_supersedes_and_proposes(tmp_path: Path) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    manager = open_local(root)
    old_tainted = manager.remember(
        Candidate("Tests run with pytest -n 2.", Tier.SEMANTIC, provenance=TAINTED,
                  taint_sources=("migration:hermes:MEMORY.md",))
    ).item_id  # fmt: skip
    old_trusted = manager.remember(
        Candidate("The public API is served at /api/v1.", Tier.SEMANTIC)
    ).item_id
    manager.store.close()
    turns = [
        {"purpose": "memory", "text": json.dumps({"op": "UPDATE", "target_id": t, "text": x})}
        for t, x in (
            (old_tainted, "Tests run with pytest -n 4."),
            (old_trusted, "The public API is served at /api/v2."),
        )
    ]
    found = [
        Found("memory", "MEMORY.md", "Tests run with pytest -n 4.", tier="semantic"),
        Found("memory", "MEMORY.md", "The public API is served at /api/v2.", tier="semantic"),
    ]
    result = migrate("hermes", home, found, root, apply=True, by="alice",
                     backend=ScriptedBackend(turns))  # fmt: skip
    first, second = result.outcomes
    assert first.status is Status.MIGRATED and f"superseded {old_tainted}" in first.reason
    assert second.status is Status.MIGRATED and f"supersede {old_trusted}" in second.reason
    manager = open_local(root)
    texts = {i.id: i.text for i in manager.store.items()}
    assert texts[old_tainted] == "Tests run with pytest -n 4."
    assert texts[old_trusted] == "The public API is served at /api/v1."  # a person decides
    (proposal,) = manager.proposals()
    assert proposal.supersedes == old_trusted
