"""Every run's use of skills and bullets, counted with its verified outcome and applied."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from chimera.evolution.learned_context import EvolutionContext
from chimera.evolution.ledger import SkillEvalLog
from chimera.evolution.lifecycle import retrievable
from chimera.evolution.skills import LearnedSkill, SkillState, SkillStore
from chimera.evolution.usage import UsageLedger, UseRecord, apply_use, retired_bullets

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def _store(root: Path, **kw: object) -> SkillStore:
    store = SkillStore(root / ".chimera" / "skills")
    skill = LearnedSkill(
        "calc-totals", "Totals in calc.py.", "[calc-rule] use sum.\n", trusted=True,
        created=NOW.isoformat(), last_used=NOW.isoformat(), tested="gate", accepted_by="ana",
    )  # fmt: skip
    store.put(replace(skill, **kw))  # type: ignore[arg-type]
    return store


def test_a_failing_run_retires_a_skill_at_zero_of_thirty_and_it_leaves_prompts(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path, uses=29, successes=0)
    ctx = EvolutionContext.open(tmp_path)
    assert [s.name for s in ctx.retrieve("calc totals")] == ["calc-totals"]
    record = UseRecord("run-30", (("calc-totals", 1),), (), False, "t-works")
    lines = apply_use(tmp_path, record, NOW)
    assert lines and "provisional -> retired" in lines[0]
    skill = store.get("calc-totals")
    assert skill is not None and skill.state is SkillState.RETIRED and skill.uses == 30
    assert ctx.retrieve("calc totals") == []
    (entry,) = SkillEvalLog(store.root / "evals.jsonl").entries()
    assert (entry.task, entry.passed) == ("t-works", False)
    events = [json.loads(x)["event"] for x in (store.root / "audit.jsonl").read_text().splitlines()]
    assert events == ["skill_retired"]


def test_the_same_run_counts_once_and_an_old_version_is_not_charged(tmp_path: Path) -> None:
    store = _store(tmp_path)
    record = UseRecord("run-1", (("calc-totals", 1),), (), True)
    apply_use(tmp_path, record, NOW)
    assert apply_use(tmp_path, record, NOW) == []
    apply_use(tmp_path, UseRecord("run-2", (("calc-totals", 7),), (), False), NOW)
    skill = store.get("calc-totals")
    assert skill is not None and (skill.uses, skill.successes) == (1, 1)
    assert len(UsageLedger.at(tmp_path).records()) == 2


def test_an_agent_jobs_claims_count_apart_and_never_promote(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for n in range(25):
        record = UseRecord(f"gh-{n}", (("calc-totals", 1),), (), True, source="action")
        apply_use(tmp_path, record, NOW)
    skill = store.get("calc-totals")
    assert skill is not None and (skill.claimed_uses, skill.uses) == (25, 0)
    assert skill.state is SkillState.PROVISIONAL and retrievable(skill)


def test_a_bullet_that_keeps_failing_is_retired_from_prompts(tmp_path: Path) -> None:
    book = "## Strategies\n[str-00001] helpful=0 harmful=0 :: Prefer sum over loops.\n"
    (tmp_path / ".chimera").mkdir()
    (tmp_path / ".chimera" / "playbook.md").write_text(book)
    ctx = EvolutionContext.open(tmp_path)
    assert ctx.render("anything").bullets == ("str-00001",)
    for n in range(16):
        apply_use(tmp_path, UseRecord(f"run-{n}", (), ("str-00001",), False), NOW)
    assert retired_bullets(UsageLedger.at(tmp_path).records()) == {"str-00001"}
    assert ctx.render("anything").bullets == ()
