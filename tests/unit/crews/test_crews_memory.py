"""A crew writes shared memory through the same gate as a single agent: REMEMBER lines become
memory items by MemoryManager.remember (secrets refused, provenance stamped, the model's
decision overruled by the rules), and a sequential crew's later role recalls them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chimera.cli import main
from chimera.crews.agent import RoleBackends
from chimera.crews.crew import CrewRuntime
from chimera.crews.memory import CrewMemory, split_remember
from chimera.memory.items import TAINTED, Candidate, Tier
from chimera.memory.manager import MemoryManager
from chimera.memory.part import open_local
from chimera.memory.store import MemoryStore
from chimera.providers import ScriptedBackend, TokenBudget

SEQ = """\
roles:
  - {name: scout, goal: Find facts., model: scout}
  - {name: writer, goal: Write the answer., model: writer}
sequential: {}
"""
TOKEN = "ghp_" + "Z9" * 18


def run(env: Any, memory: CrewMemory, scripts: dict[str, list[dict[str, Any]]]) -> Any:
    models = {name: ScriptedBackend(turns, name=name) for name, turns in scripts.items()}
    backends = RoleBackends(
        env.crew(SEQ), run_budget=TokenBudget(name="run"), make=lambda m: models[m],
        default_model="default", audit=env.audit, max_tokens=64,
    )  # fmt: skip
    runtime = CrewRuntime(backends.for_role, None, env.audit, memory=memory)
    return env.crew(SEQ).build().run("How do the tests run?", runtime)


def test_a_sequential_crew_writes_shared_memory_and_the_next_role_recalls_it(
    env: Any, tmp_path: Path
) -> None:
    manager = MemoryManager(MemoryStore(tmp_path / "m.db"), audit=env.audit, run_id="crew-1")
    memory = CrewMemory(manager)
    scout = (
        "- The suite is parallel.\nREMEMBER: Tests run with pytest -n 4.\n"
        f"REMEMBER: the deploy token is {TOKEN}"
    )
    result = run(env, memory, {
        "scout": [{"text": scout, "expect": ["REMEMBER: <the fact>"]}],
        "writer": [{"text": "Use pytest -n 4.", "expect": ["Tests run with pytest -n 4."]}],
    })  # fmt: skip
    assert result.status == "completed"
    assert "REMEMBER" not in result.outputs[0].text and "parallel" in result.outputs[0].text
    (item,) = manager.store.items([Tier.SEMANTIC])
    assert item.text == "Tests run with pytest -n 4." and item.kind == "crew:scout"
    assert item.source_run == "crew-1" and not item.tainted
    ops = [w["op"] for w in memory.to_json()["written"]]
    assert ops == ["ADD", "REFUSED"]  # the gate refused the secret
    assert item.id in memory.recalled  # the writer's prompt held it
    (event,) = env.audit_events("crew.memory")
    assert event["role"] == "scout" and [o["op"] for o in event["ops"]] == ["ADD", "REFUSED"]
    assert env.audit_events("memory_write")  # the manager's own audit, as for any agent


def test_an_untrusted_crew_writes_tainted_and_only_proposes_against_trusted(
    env: Any, tmp_path: Path
) -> None:
    manager = MemoryManager(MemoryStore(tmp_path / "m.db"), run_id="crew-2")
    old = manager.remember(Candidate("Tests run with pytest -n 2.", Tier.SEMANTIC)).item_id
    decision = {"op": "UPDATE", "target_id": old, "text": "Tests run with pytest -n 4."}
    manager.backend = ScriptedBackend([{"purpose": "memory", "text": json.dumps(decision)}])
    memory = CrewMemory(manager, tainted=True)
    run(env, memory, {
        "scout": [{"text": "REMEMBER: Tests run with pytest -n 4."}],
        "writer": [{"text": "Done."}],
    })  # fmt: skip
    kept = manager.store.get(old)
    assert kept is not None and kept.text == "Tests run with pytest -n 2." and not kept.tainted
    (proposal,) = manager.proposals()
    assert proposal.provenance == TAINTED and proposal.taint_sources == ("untrusted_task",)
    assert memory.to_json()["written"][0]["proposal"] is True


def test_split_remember_takes_only_remember_lines() -> None:
    facts, kept = split_remember("a\n**REMEMBER:** x y\n - remember: z\nb")
    assert facts == ["x y", "z"] and kept == "a\nb"


def test_chimera_crew_run_shares_the_projects_memory(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    script = tmp_path / "m.yaml"
    script.write_text(json.dumps({"model": "m", "turns": [
        {"text": "REMEMBER: Releases are tagged vX.Y.Z from main."},
        {"text": "Tag from main.", "expect": ["Releases are tagged vX.Y.Z from main."]},
    ]}))  # fmt: skip
    crew = tmp_path / "crew.yaml"
    crew.write_text(SEQ.replace("model: scout", "").replace("model: writer", ""))
    argv = ["crew", "run", str(crew), "How are releases made?", "--root", str(root), "--model",
            f"scripted:{script}", "--quiet", "--json"]  # fmt: skip
    assert main(argv) == 0
    (item,) = open_local(root).store.items([Tier.SEMANTIC])
    assert item.text == "Releases are tagged vX.Y.Z from main."
    (run_dir,) = (root / ".chimera" / "runs").iterdir()
    document = json.loads((run_dir / "crew.json").read_text())
    assert document["memory"]["written"][0]["id"] == item.id
    assert main([*argv, "--no-memory"]) == 0
    assert len(open_local(root).store.items([Tier.SEMANTIC])) == 1
