"""The learning loop end to end, through the commands a person runs, with no hand-written state.

A person imports a skill (accepted, untested: no prompt sees it); ``chimera skills test``
re-runs five chain tasks without and with it (the re-run gate, on tasks it was not proposed
from) and admits it; three real ``chimera solve`` runs show it in their plan prompts and fail
(their task needs a rule the skill lacks), and each failure lands in the skill's ledger;
``chimera evolve`` picks the skill from the scorecard's weakest family, runs GEPA (the real
``gepa`` package) training on one failure and validating on another, and the transfer gate
decides on the held-out rest (one failure plus the family's tasks never recorded) with no
regression on the tasks the skill passed. Every model is scripted: the chain's effect is known
in advance, so this measures the loop's bookkeeping, never a model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from chimera.eval.chain import Chain
from chimera.eval.harness import SCRIPTED, ArmSettings, prepare_workspace, run_task
from chimera.evolution.learned_context import EvolutionContext
from chimera.evolution.ledger import SkillEvalLog
from chimera.evolution.skills import SkillStore
from chimera.evolution.usage import UsageLedger
from chimera.testing.chains import IRREGULAR, REGULAR, write_rule_chain

pytestmark = pytest.mark.slow

OLD_RULE = "[regular-plural-rule]"
NEW_RULE = "[irregular-plural-rule]"
SKILL = f"""---
name: plural-nouns
description: How this project writes plural nouns. Use when a task returns plural nouns.
---
Plural nouns: {OLD_RULE} a regular noun takes -s or -es from the pluralize helper.
"""


def _chain(tmp_path: Path) -> Path:
    return write_rule_chain(tmp_path / "chain", {OLD_RULE: REGULAR, NEW_RULE: IRREGULAR})


def _chimera(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chimera", *args], capture_output=True, text=True, timeout=1200
    )


def test_import_gate_fail_record_evolve_and_adopt_through_the_gate(tmp_path: Path) -> None:
    chain_path = _chain(tmp_path)
    chain = Chain.load(chain_path)
    root = prepare_workspace(chain, tmp_path / "repo")
    (tmp_path / "incoming" / "plural-nouns").mkdir(parents=True)
    (tmp_path / "incoming" / "plural-nouns" / "SKILL.md").write_text(SKILL)
    store = SkillStore(root / ".chimera" / "skills")

    # 1. A person brings the skill: accepted, untested, in no prompt.
    done = _chimera("skills", "--root", str(root), "import", str(tmp_path / "incoming"))
    assert done.returncode == 0, done.stderr
    assert EvolutionContext.open(root).retrieve("plural nouns") == []

    # 2. The re-run gate: five regular-plural tasks, without and with the skill.
    tasks = [arg for t in ("a1", "a2", "a3", "a4", "a5") for arg in ("--task", t)]
    done = _chimera("skills", "--root", str(root), "test", "plural-nouns",
                    "--chain", str(chain_path), *tasks)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "re-run gate passed" in done.stdout and "5 task(s) gained, 0 lost of 5" in done.stdout
    assert "plural-nouns: usable" in done.stdout and "bookkeeping" in done.stdout
    assert [s.name for s in EvolutionContext.open(root).retrieve("plural nouns")] == [
        "plural-nouns"
    ]

    # 3. Three real runs show the skill and fail: irregular plurals need a rule it lacks.
    for tid in ("b1", "b2", "b3"):
        run = run_task(
            root, chain.task(tid), model=SCRIPTED, arm=ArmSettings(memory=False), attempts=1,
            scripts_dir=tmp_path / "scripts",
        )  # fmt: skip
        assert not run.passed, run
    skill = store.get("plural-nouns")
    assert skill is not None and (skill.uses, skill.successes) == (3, 0)
    uses = UsageLedger.at(root).records()
    assert [(u.task, u.passed) for u in uses] == [
        ("b1-works", False),
        ("b2-works", False),
        ("b3-works", False),
    ]
    ledger = SkillEvalLog(store.root / "evals.jsonl")
    failing, passing = ledger.split("plural-nouns", 1)
    assert failing == ["b1-works", "b2-works", "b3-works"]
    assert passing == ["a1", "a2", "a3", "a4", "a5"]

    # 4. evolve: the weakest family, GEPA on disjoint train/validation, the gate on the rest.
    reflect = tmp_path / "reflect.yaml"
    body = f"Plural nouns: {OLD_RULE} regular nouns take -s or -es; {NEW_RULE} irregular ones."
    reflect.write_text(
        yaml.safe_dump({"turns": [{"purpose": "plan", "text": f"```\n{body}\n```"}]})
    )
    done = _chimera("evolve", "--chain", str(chain_path), "--model", f"scripted:{reflect}",
                    "--max-metric-calls", "30", "--root", str(root), "--by", "ana")  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The weakest capability by lower bound that the skill's failures cover picks the skill.
    assert "(weakest #1 by lower bound) -> plural-nouns" in done.stdout, done.stdout
    assert "plural-nouns: replaced" in done.stdout, done.stdout
    summaries = [
        json.loads(p.read_text()) for p in (root / ".chimera" / "runs").glob("*/summary.json")
    ]
    (summary,) = [s for s in summaries if s.get("command") == "evolve"]
    run_dir = root / ".chimera" / "runs" / summary["run_id"]
    events = [json.loads(x) for x in (run_dir / "audit.jsonl").read_text().splitlines()]
    (started,) = [e["fields"] for e in events if e["event"] == "skill_refine_started"]
    train, validation, holdout = started["train"], started["validation"], started["holdout"]
    assert len(train) == len(validation) == 1 and not set(train) & set(validation)
    assert not (set(train) | set(validation)) & set(holdout) and len(holdout) >= 5
    assert summary["gate"]["transfer"]["outcome"] == "promote"
    assert summary["metric_calls"] <= 30
    refined = store.get("plural-nouns")
    assert refined is not None and refined.version == 2 and NEW_RULE in refined.body
    assert refined.usable and refined.accepted_by == "ana"
    assert (store.root / "plural-nouns" / "v1.md").is_file()  # `chimera skills rollback` undoes
