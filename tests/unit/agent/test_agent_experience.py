"""ExperienceBuffer: append-only JSONL, failures kept, retrieval by token overlap."""

from __future__ import annotations

from pathlib import Path

from chimera.memory.experience import Experience, ExperienceBuffer


def test_agent_experience_appends_and_retrieves_similar_failures(tmp_path: Path) -> None:
    buf = ExperienceBuffer(tmp_path / "exp" / "experience.jsonl")
    buf.append(Experience("add a total() function to billing", "verify_failed", "abc", "red"))
    buf.append(Experience("add a total() function to billing", "passed", model="m"))
    buf.append(Experience("rename the README section", "regression", "def", "broke docs"))
    assert len(buf) == 3
    assert [e.verdict for e in buf.failures()] == ["verify_failed", "regression"]
    found = buf.similar("billing: add total function", k=2)
    assert found and found[0][1].task.startswith("add a total()")
    only_fail = buf.similar("billing total function", k=5, failures_only=True)
    assert [e.verdict for _, e in only_fail] == ["verify_failed"]
    assert "verify_failed on: add a total()" in only_fail[0][1].lesson()
    assert buf.similar("completely unrelated words here", k=3) == []


def test_agent_experience_skips_torn_lines(tmp_path: Path) -> None:
    path = tmp_path / "experience.jsonl"
    buf = ExperienceBuffer(path)
    buf.append(Experience("task one", "passed"))
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"task": "torn')
    buf.append(Experience("task two", "verify_failed"))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2  # the torn line fused with the next append
    assert [e.task for e in buf] == ["task one"]


def test_agent_experience_round_trips(tmp_path: Path) -> None:
    e = Experience("t", "hollow", targets=("a", "b"), cost_usd=None, tokens=5)
    assert Experience.from_json(e.to_json()) == e


def test_agent_experience_records_provenance_and_old_lines_read_tainted(tmp_path: Path) -> None:
    path = tmp_path / "experience.jsonl"
    path.write_text('{"task": "written before provenance", "verdict": "verify_failed"}\n')
    buf = ExperienceBuffer(path)
    buf.append(Experience("t", "passed", provenance="tainted", taint_sources=("untrusted_task",)))
    buf.append(Experience("u", "passed"))
    old, tainted, clean = list(buf)
    assert (old.provenance, old.taint_sources) == ("tainted", ("legacy",)) and old.tainted
    assert tainted.taint_sources == ("untrusted_task",) and tainted.tainted
    assert not clean.tainted
