"""The Action's memory helpers without a network: the agent job's proposal, the Memory
section, and its place before the PR body's marker trailer."""

from __future__ import annotations

import json
from pathlib import Path

from chimera.github.conversation.documents import pr_body
from chimera.github.publish.memory import (
    MAX_BYTES,
    MemoryNote,
    memory_sections,
    propose,
    read_memory_artifact,
)
from chimera.github.trust.summary import parse_marker
from chimera.memory.artifact import admit_artifact
from chimera.memory.items import TAINTED, TRUSTED, JournalOp, OpKind, Tier
from chimera.memory.part import MEMORY_DB
from chimera.memory.store import MemoryStore

TS = "2026-01-01T00:00:00+00:00"


def test_propose_lists_only_the_runs_new_items_and_what_it_recalled(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / MEMORY_DB)
    store.apply(JournalOp(OpKind.ADD, "m-00000000000a", TS, "old", Tier.SEMANTIC, "old fact"))
    store.apply(JournalOp(OpKind.ADD, "m-00000000000b", TS, "old", Tier.SEMANTIC, "unused"))
    before = {i.id: i.uses for i in store.items()}
    store.touch(["m-00000000000a"], TS)
    store.apply(
        JournalOp(OpKind.ADD, "m-00000000000c", TS, "r", Tier.EPISODIC, "attempt 1 failed",
                  TAINTED, ("untrusted_task",), "failure")
    )  # fmt: skip
    store.close()
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    path = propose(tmp_path, artifacts, "gh-1-9", before)
    assert path is not None
    doc = json.loads(path.read_text())
    assert [op["id"] for op in doc["ops"]] == ["m-00000000000c"]
    assert doc["ops"][0]["op"] == "add" and doc["ops"][0]["provenance"] == TAINTED
    assert doc["recalled"] == ["m-00000000000a"] and doc["run_id"] == "gh-1-9"
    assert propose(tmp_path, artifacts, "gh-1-9", None) is None  # memory off


def test_the_memory_sections_name_ids_and_provenance_before_the_marker() -> None:
    assert memory_sections(MemoryNote(enabled=False)) == () and memory_sections(None) == ()
    note = MemoryNote(
        recalled=["m-00000000000a"],
        remembered=[("m-00000000000b", TRUSTED), ("m-00000000000c", TAINTED)],
        refused=[("delete episodic", "refused")],
        commit="0123456789abcdef" * 2 + "01234567",
    )
    body = pr_body(
        issue=1, report=None, marker={"issue": 1}, repository="octo/app",
        server_url="https://github.example", workflow_run=7, sections=memory_sections(note),
    )  # fmt: skip
    assert (
        "### Memory" in body and "Recalled (as the agent job reports it): `m-00000000000a`" in body
    )
    assert "`m-00000000000b` trusted" in body and "`m-00000000000c` tainted" in body
    assert "in `0123456789ab`" in body and "1 op(s)" in body
    assert body.index("### Memory") < body.index("chimera:pr")
    assert parse_marker(body, "pr") == {"issue": 1}
    empty = "\n\n".join(s.render() for s in memory_sections(MemoryNote()))
    assert "Recalled (as the agent job reports it): nothing" in empty
    assert "Remembered: nothing new" in empty


def test_an_unreadable_or_huge_memory_artifact_is_refused_whole(tmp_path: Path) -> None:
    assert read_memory_artifact(tmp_path) is None
    (tmp_path / "memory.json").write_text("{not json")
    for content in ("{not json", " " * (MAX_BYTES + 1)):
        (tmp_path / "memory.json").write_text(content)
        verdict = admit_artifact(read_memory_artifact(tmp_path), run_id="r", ts=TS)
        assert verdict.accepted == [] and verdict.refused[0][0] == -1
