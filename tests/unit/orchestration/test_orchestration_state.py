"""Run state, atomic writes, goal semantics and DAG scheduling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.atomic import atomic_write_json, atomic_write_text
from chimera.errors import ChimeraError, UsageError
from chimera.orchestration.goal import (
    Goal,
    extract_spec_blocks,
    spec_tampering,
    vet_acceptance,
)
from chimera.orchestration.graph import Card, CardStatus, TaskGraph
from chimera.orchestration.state import RunState, RunStore, new_run_id, now_iso
from chimera.spec.kinds import Contains
from chimera.spec.model import Evidence, Requirement, Risk, SourceLocation, Status
from chimera.spec.results import DriftReport, RequirementResult

LOC = SourceLocation("specs/a.yaml", 1, 3)


def req(
    rid: str, *, deps: tuple[str, ...] = (), risk: Risk = Risk.LOW, pattern: str = "x"
) -> Requirement:
    return Requirement(
        id=rid,
        check=Contains(path="README.md", pattern=pattern),
        location=LOC,
        depends_on=deps,
        risk=risk,
    )


def report(**statuses: Status) -> DriftReport:
    return DriftReport(tuple(RequirementResult(req(k), v, f"{k} {v}") for k, v in statuses.items()))


def test_atomic_write_replaces_whole_file_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "state.json"
    atomic_write_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
    target.chmod(0o600)
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]


def test_run_store_roundtrip_and_errors(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    rid = new_run_id()
    state = RunState(
        run_id=rid,
        created_at=now_iso(),
        updated_at=now_iso(),
        started_by="alice",
        spec_paths=["specs"],
    )
    store.save(state)
    assert store.list_ids() == [rid]
    assert store.latest() == rid
    assert store.load(rid).started_by == "alice"
    with pytest.raises(UsageError, match="no run"):
        store.load("nope")
    with pytest.raises(UsageError, match="invalid run id"):
        store.run_dir("../x")
    (store.run_dir(rid) / "state.json").write_text("{not json")
    with pytest.raises(ChimeraError, match="unreadable run state"):
        store.load(rid)


def test_extract_spec_blocks_only_chimera_fences() -> None:
    text = (
        "Fix it.\n```python\nx=1\n```\n```chimera\nrequirements: []\n```\n~~~~ chimera\nb\n~~~~\n"
    )
    assert extract_spec_blocks(text) == ["requirements: []\n", "b\n"]


def test_vet_acceptance_rules() -> None:
    base = DriftReport(
        (
            RequirementResult(req("new"), Status.FAILED, "not defined"),
            RequirementResult(req("old"), Status.PASSED, "ok"),
            RequirementResult(req("broken"), Status.ERROR, "regex timed out after 1s"),
            RequirementResult(
                req("absent-file"),
                Status.ERROR,
                "paths selects zero files",
                (Evidence(note="no files"),),
            ),
        )
    )
    ok, rejected = vet_acceptance(["new", "old", "broken", "absent-file", "ghost"], base)
    assert ok == ["new", "absent-file"]
    assert "tests nothing" in rejected["old"]
    assert "broken" in rejected["broken"]
    assert "not evaluated" in rejected["ghost"]


def test_goal_task_and_repair() -> None:
    base = report(a=Status.PASSED, b=Status.FAILED, c=Status.FAILED)
    task = Goal.task(["b"], base)
    assert task.unrelated_red == ("c",)
    after = report(a=Status.FAILED, b=Status.PASSED, c=Status.FAILED)
    assert task.unmet(after) == ["a"]
    assert task.regressions(after) == ["a"]
    good = report(a=Status.PASSED, b=Status.PASSED, c=Status.FAILED)
    assert task.satisfied(good)
    repair = Goal.repair(base)
    assert not repair.satisfied(good)
    assert repair.unmet(good) == ["c"]


def test_spec_tampering_detects_edit_and_delete_not_add() -> None:
    before = [req("a"), req("b")]
    assert spec_tampering(before, [req("a"), req("b"), req("c")]) == []
    problems = spec_tampering(before, [req("a", pattern="y")])
    assert "requirement 'a' was changed" in problems
    assert "requirement 'b' was deleted" in problems


def test_graph_orders_by_dependencies_and_risk_last() -> None:
    reqs = [req("db", risk=Risk.HIGH), req("api", deps=("model",)), req("model"), req("docs")]
    graph = TaskGraph.for_requirements(reqs, ["db", "api", "model", "docs"])
    order: list[str] = []
    while (card := graph.next_card()) is not None:
        order.append(card.id)
        card.status = CardStatus.ACCEPTED
    assert order == ["model", "api", "docs", "db"]


def test_graph_runs_risky_card_when_others_depend_on_it() -> None:
    reqs = [req("migrate", risk=Risk.HIGH), req("use", deps=("migrate",))]
    graph = TaskGraph.for_requirements(reqs, ["migrate", "use"])
    card = graph.next_card()
    assert card is not None and card.id == "migrate"


def test_graph_blocks_dependents_of_failed_cards_and_roundtrips() -> None:
    reqs = [req("a"), req("b", deps=("a",)), req("c", deps=("b",))]
    graph = TaskGraph.for_requirements(reqs, ["a", "b", "c"])
    graph.cards["a"].status = CardStatus.FAILED
    blocked = graph.propagate_blocked()
    assert [c.id for c in blocked] == ["b", "c"]
    assert graph.next_card() is None
    again = TaskGraph.from_json(graph.to_json())
    assert again.to_json() == graph.to_json()
    extra = graph.respawn("a")
    assert extra.id == "a#2"
    assert graph.respawn("a").id == "a#3"
    with pytest.raises(ValueError, match="duplicate"):
        graph.add(Card(id="a", requirement_id="a"))
