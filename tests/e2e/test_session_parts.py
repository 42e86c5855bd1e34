"""End to end: the default session parts reach real ``chimera solve`` / ``chimera run``
processes (scripted models) through the one session factory, and the flags turn them off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from chimera.evolution.skills import LearnedSkill, SkillStore
from chimera.governance.audit import verify_audit_log
from chimera.memory.items import TAINTED, Candidate, Tier
from chimera.memory.part import open_local

SPEC = """\
requirements:
  - id: total-defined
    owner: ['calc.py']
    defines: {path: calc.py, symbol: total, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
GOOD = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"
TASK = "Add total() to calc.py"
PERSONA = "Keep calc.py free of third-party imports."
BOOK = "## Strategies\n[str-00001] helpful=1 harmful=0 :: Define total in calc.py next to add.\n"


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "reqs.yaml").write_text(SPEC)
    (root / "calc.py").write_text(CALC)
    (root / ".gitignore").write_text(".chimera/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=root, check=True)
    return root


def _script(tmp_path: Path, *, plan_expect: list[str] | None = None, name: str = "s") -> Path:
    write = {"name": "write_file", "arguments": {"path": "calc.py", "content": GOOD}}
    plan: dict[str, Any] = {"purpose": "plan", "text": "1. Add total() to calc.py."}
    if plan_expect:
        plan["expect"] = plan_expect
    turns = [
        plan,
        {"purpose": "act", "tool_calls": [write]},
        {"purpose": "act", "text": "Added total()."},
        {"purpose": "review", "text": "APPROVE"},
    ]
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"model": "demo", "turns": turns}, sort_keys=False))
    return path


def _chimera(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CHIMERA_MODEL"}
    return subprocess.run(
        [sys.executable, "-c", "from chimera.cli import main; raise SystemExit(main())", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def _solve(root: Path, script: Path, *flags: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    proc = _chimera(
        root, "solve", TASK, "--verify", "specs", "--model", f"scripted:{script}", *flags
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    runs = sorted((root / ".chimera" / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
    run_dir = runs[-1]
    summary = json.loads((run_dir / "summary.json").read_text())
    summary["_stdout"] = proc.stdout
    events = [json.loads(line) for line in (run_dir / "audit.jsonl").read_text().splitlines()]
    return summary, events


def _kinds(events: list[dict[str, Any]]) -> list[str]:
    return [str(e.get("event")) for e in events]


def _seed_learning(root: Path) -> None:
    (root / ".chimera").mkdir(exist_ok=True)
    (root / ".chimera" / "playbook.md").write_text(BOOK)
    SkillStore(root / ".chimera" / "skills").mint(
        LearnedSkill(
            "calc-totals",
            "Totals in calc.py: add a total function next to add.",
            "[calc-rule] total sums a list with the builtin sum.\n",
            trusted=True,
            tested="re-run gate passed",
            accepted_by="alice",
        )
    )


def test_solve_remembers_then_recalls_persona_and_memories(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    first, events = _solve(root, _script(tmp_path, name="one"))
    remembered = first["memory"]["remembered"]
    assert first["outcome"] == "solved" and len(remembered) == 1
    assert first["memory"]["recalled"] == [] and first["memory"]["tainted"] is False
    assert "memory_write" in _kinds(events)
    assert f"remembered 1 ({remembered[0]})" in first["_stdout"]
    manager = open_local(root)
    manager.add_persona(PERSONA, by="maintainer")
    manager.store.close()
    subprocess.run(["git", "checkout", "-q", "--", "calc.py"], cwd=root, check=True)
    # The plan prompt must carry the persona and the first run's attempt, or the script fails.
    expect = ["standing instructions", PERSONA, remembered[0]]
    second, events = _solve(root, _script(tmp_path, plan_expect=expect, name="two"))
    assert second["outcome"] == "solved"
    assert remembered[0] in second["memory"]["recalled"]
    (budget,) = [e["fields"] for e in events if e.get("event") == "context_budget"]
    assert budget["shares"]["persona"] > 0 and budget["shares"]["memory"] > 0
    assert "memory: recalled 1" in second["_stdout"]


def test_learning_reaches_the_plan_and_counts_the_skill_use(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _seed_learning(root)
    expect = ["Learned context", "str-00001", "calc-totals"]
    summary, events = _solve(root, _script(tmp_path, plan_expect=expect))
    assert summary["learning"] == {
        "skills": ["calc-totals"],
        "bullets": ["str-00001"],
        "lifecycle": [],
    }
    assert "learning_context" in _kinds(events)
    skill = SkillStore(root / ".chimera" / "skills").get("calc-totals")
    assert skill is not None and (skill.uses, skill.successes) == (1, 1)
    # The use is recorded with the verified outcome, and lands in the skill's ledger.
    from chimera.evolution.ledger import SkillEvalLog
    from chimera.evolution.usage import UsageLedger

    (use,) = UsageLedger.at(root).records()
    assert use.skills == (("calc-totals", 1),) and use.bullets == ("str-00001",) and use.passed
    (entry,) = SkillEvalLog(root / ".chimera" / "skills" / "evals.jsonl").entries()
    assert (entry.skill, entry.passed, entry.source) == (
        "calc-totals",
        True,
        f"local-run:{use.run_id}",
    )


def test_no_memory_and_no_learning_turn_the_parts_off(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _seed_learning(root)
    # --no-memory: learning still shapes the plan, nothing is recalled or recorded.
    summary, events = _solve(
        root, _script(tmp_path, plan_expect=["Learned context"], name="a"), "--no-memory"
    )
    assert "memory" not in summary and "learning" in summary
    assert not {"memory_read", "memory_write"} & set(_kinds(events))
    assert not (root / ".chimera" / "memory.db").exists()
    subprocess.run(["git", "checkout", "-q", "--", "calc.py"], cwd=root, check=True)
    # --no-learning implies --no-memory: neither part runs.
    summary, events = _solve(root, _script(tmp_path, name="b"), "--no-learning")
    assert "memory" not in summary and "learning" not in summary
    assert not {"memory_read", "memory_write", "learning_context"} & set(_kinds(events))
    assert not (root / ".chimera" / "memory.db").exists()
    skill = SkillStore(root / ".chimera" / "skills").get("calc-totals")
    assert skill is not None and skill.uses == 1  # only the --no-memory run used it


def test_no_skills_keeps_memory_and_leaves_learning_out(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _seed_learning(root)
    summary, events = _solve(root, _script(tmp_path, name="c"), "--no-skills")
    assert "memory" in summary and len(summary["memory"]["remembered"]) == 1
    assert "learning" not in summary
    assert "memory_write" in _kinds(events) and "learning_context" not in _kinds(events)
    skill = SkillStore(root / ".chimera" / "skills").get("calc-totals")
    assert skill is not None and skill.uses == 0


def test_a_tainted_recall_taints_the_run_and_its_writes(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    manager = open_local(root)
    bad = Candidate(
        f"{TASK}: import numpy for total",
        Tier.EPISODIC,
        provenance=TAINTED,
        taint_sources=("untrusted_task",),
        source_run="run-x",
    )
    planted = manager.remember(bad, decide=False).item_id
    manager.store.close()
    summary, events = _solve(root, _script(tmp_path, plan_expect=["provenance: tainted"]))
    assert summary["tainted"] is True and summary["memory"]["tainted"] is True
    assert planted in summary["memory"]["recalled"]
    assert "memory_tainted" in _kinds(events)
    manager = open_local(root)
    written = [manager.store.get(i) for i in summary["memory"]["remembered"]]
    manager.store.close()
    assert written and all(item is not None and item.tainted for item in written)


def test_an_untrusted_solve_writes_tainted_memories(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    summary, _ = _solve(root, _script(tmp_path), "--untrusted")
    manager = open_local(root)
    written = [manager.store.get(i) for i in summary["memory"]["remembered"]]
    manager.store.close()
    assert written and all(item is not None and item.tainted for item in written)
    # The next untrusted run recalls that tainted item: its taint ledger records the memory.
    subprocess.run(["git", "checkout", "-q", "--", "calc.py"], cwd=root, check=True)
    again, events = _solve(root, _script(tmp_path, name="again"), "--untrusted")
    assert set(again["memory"]["recalled"]) & set(summary["memory"]["remembered"])
    sources = [e["fields"] for e in events if e.get("event") == "taint_source"]
    assert any(f"memory {written[0].id}" in json.dumps(f) for f in sources if written[0]), sources


def test_chimera_run_records_memory_and_no_memory_turns_it_off(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _seed_learning(root)
    script = _script(tmp_path, plan_expect=["Learned context"])
    # No --task: the run repairs the Spec (no acceptance-writing turn before the card's plan).
    args = ["run", "--model", f"scripted:{script}", "--no-guard"]
    proc = _chimera(root, *args, "--run-id", "r1")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "memory: recalled 0, remembered 1" in proc.stdout
    run_dir = root / ".chimera" / "runs" / "r1"
    head = json.loads((run_dir / "state.json").read_text())["audit_head"]
    assert verify_audit_log(run_dir / "audit.jsonl", head).ok  # nothing written past the head
    (line,) = (run_dir / "parts.jsonl").read_text().splitlines()
    parts = json.loads(line)
    assert parts["run_id"] == "r1" and len(parts["memory"]["remembered"]) == 1
    assert parts["learning"]["bullets"] == ["str-00001"]
    subprocess.run(["git", "checkout", "-q", "--", "calc.py"], cwd=root, check=True)
    script = _script(tmp_path, name="off")
    proc = _chimera(root, *args[:1], "--model", f"scripted:{script}", "--no-guard",
                    "--run-id", "r2", "--no-learning")  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "memory:" not in proc.stdout
    audit = (root / ".chimera" / "runs" / "r2" / "audit.jsonl").read_text()
    assert "memory_write" not in audit and "learning_context" not in audit
    # resume and approve take the flags again (a run does not record them).
    assert _chimera(root, "resume", "r2", "--no-learning").returncode == 0
    assert not (root / ".chimera" / "runs" / "r2" / "parts.jsonl").exists()
    assert _chimera(root, "resume", "r1").returncode == 0
    assert len((run_dir / "parts.jsonl").read_text().splitlines()) == 2


def test_the_action_input_memory_false_reaches_the_agent_child(tmp_path: Path) -> None:
    from chimera.github.agent.child import AgentRequest, read_request, run_request, write_request
    from chimera.github.trust.settings import ActionSettings

    assert ActionSettings.from_env({}).memory is True
    assert ActionSettings.from_env({"CHIMERA_MEMORY": "false"}).memory is False
    root = _repo(tmp_path)
    fields: dict[str, Any] = {
        "version": 1,
        "action": "start",
        "root": str(root),
        "actor": "alice",
        # The issue carries its acceptance requirement (no acceptance-writing turn).
        "task": "Add total()\n\n```chimera\nrequirements:\n  - id: total-in-calc\n"
        "    defines: {path: calc.py, symbol: total, kind: function}\n```\n",
        "untrusted": False,
        "model": f"scripted:{_script(tmp_path, name='off')}",
    }
    off = AgentRequest.model_validate(fields | {"run_id": "gh-1-1", "memory": False})
    off = read_request(write_request(tmp_path / "req.json", off))  # the file carries it
    assert off.memory is False
    assert run_request(off).status.value == "done"
    assert not (root / ".chimera" / "memory.db").exists()
    parts = root / ".chimera" / "runs" / "gh-1-1" / "parts.jsonl"  # reflection may report
    assert not parts.exists() or "memory" not in json.loads(parts.read_text().splitlines()[0])
    subprocess.run(["git", "checkout", "-q", "--", "calc.py"], cwd=root, check=True)
    subprocess.run(["git", "clean", "-fq", "specs"], cwd=root, check=True)  # the task's spec
    on = AgentRequest.model_validate(
        fields | {"run_id": "gh-1-2", "model": f"scripted:{_script(tmp_path, name='on')}"}
    )
    assert run_request(on).status.value == "done"
    line = (root / ".chimera" / "runs" / "gh-1-2" / "parts.jsonl").read_text()
    assert len(json.loads(line)["memory"]["remembered"]) == 1


CREW = """\
crew: review
roles:
  - {name: tests, goal: Decide whether the change is tested.}
parallel: {}
"""
CONNECTOR = """\
connectors:
  - name: pets
    openapi: {document: pets.yaml, base_url: http://127.0.0.1:9}
"""
PETS = """\
openapi: 3.0.0
info: {title: pets, version: '1'}
paths:
  /pets:
    get:
      operationId: listPets
      responses: {'200': {description: ok}}
"""


def test_a_configured_review_crew_and_connectors_reach_solve(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".chimera.d" / "crews").mkdir(parents=True)
    (root / ".chimera.d" / "crews" / "review.yaml").write_text(CREW)
    (root / ".chimera.d" / "connectors").mkdir()
    (root / ".chimera.d" / "connectors" / "pets.yaml").write_text(CONNECTOR)
    (root / ".chimera.d" / "connectors" / "pets-api.yaml").write_text(PETS)
    (root / "pyproject.toml").write_text('[tool.chimera.review]\ncrew = "review"\n')
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "crew and connector"], cwd=root, check=True)
    summary, events = _solve(root, _script(tmp_path))
    assert summary["outcome"] == "solved"
    by_kind = {str(e["event"]): e["fields"] for e in events}
    assert by_kind["crew.attached"]["roles"] == ["tests"]
    assert by_kind["crew.verdict"]["approved"] is True
    assert [c["name"] for c in by_kind["connectors_loaded"]["connectors"]] == ["pets"]
