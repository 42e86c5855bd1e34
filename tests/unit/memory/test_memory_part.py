"""MemoryPart: plugs into a session's shape; attempts become episodic items, hollow never a
success, provenance carried."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from chimera.governance.audit import AuditLog
from chimera.memory.experience import ExperienceBuffer
from chimera.memory.items import TAINTED, Tier
from chimera.memory.part import MEMORY_DB, MemoryExperience, MemoryPart
from chimera.protocols import Experience, ExperienceStore


@dataclass(frozen=True)
class Deps:
    experience: ExperienceStore | None = None


def test_memory_part_records_attempts_as_episodic_items(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl", "r1")
    session = SimpleNamespace(root=tmp_path, audit=audit, run_id="r1", ladder=())
    part = MemoryPart()
    part.attach(session)
    buffer = ExperienceBuffer(tmp_path / "experience.jsonl")
    deps = part.agent_deps(Deps(experience=buffer), session)
    store = deps.experience
    assert isinstance(store, MemoryExperience) and store.buffer is buffer
    store.append(
        Experience(
            "add total()", "verify_failed", "sig", "total-defined red", run_id="r1", attempt=1
        )
    )
    store.append(Experience("add total()", "passed", files_changed=0, run_id="r1", attempt=2))
    store.append(
        Experience(
            "add total()",
            "passed",
            files_changed=1,
            added=3,
            run_id="r1",
            attempt=3,
            provenance=TAINTED,
            taint_sources=("untrusted_task",),
        )
    )
    store.append(
        Experience(
            "add total()",
            "passed",
            files_changed=1,
            added=3,
            run_id="r1",
            attempt=3,
            provenance=TAINTED,
            taint_sources=("untrusted_task",),
        )
    )  # a duplicate
    assert part.manager is not None
    items = part.manager.store.items([Tier.EPISODIC])
    assert [i.kind for i in items] == ["failure", "hollow", "success"]
    assert "total-defined red" in items[0].text and "hollow pass" in items[1].text
    assert items[2].tainted and items[2].taint_sources == ("untrusted_task",)
    assert len(buffer) == 4 and store.similar("add total", 2)
    assert (tmp_path / MEMORY_DB).exists()
    writes = [line for line in audit.path.read_text().splitlines() if "memory_write" in line]
    assert len(writes) == 4 and '"op":"NOOP"' in writes[-1]


def test_memory_part_disabled_changes_nothing(tmp_path: Path) -> None:
    session = SimpleNamespace(root=tmp_path, audit=None, run_id="r1", ladder=())
    part = MemoryPart(enabled=False)
    part.attach(session)
    deps = Deps()
    assert part.agent_deps(deps, session) is deps
    assert not (tmp_path / MEMORY_DB).exists()
