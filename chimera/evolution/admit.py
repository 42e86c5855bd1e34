"""Admitting a skill into prompts: the re-run gate on a benchmark chain, then the store.

A skill reaches a prompt only when it is **tested** (the re-run gate,
:func:`~chimera.evolution.evolver.rerun_gate`, passed on tasks it was not proposed from) and
**accepted** by a person (:attr:`~chimera.evolution.skills.LearnedSkill.usable`); either
alone is never enough. :func:`test_skill` is ``chimera skills test``: it picks the chain's
tasks the skill would be retrieved for (shared words, as retrieval matches them; trap tasks,
which no guidance rescues by construction, left out), drops the tasks of the runs it was
proposed from (their requirement ids are in those runs' ``summary.json``), re-runs each one
without and with the skill, and records the result: ``tested`` set on a pass, an audit event
either way (``.chimera/skills/audit.jsonl``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from chimera.errors import UsageError
from chimera.evolution.evolver import GateResult, rerun_gate
from chimera.evolution.ledger import EVALS_FILE, SkillEvalLog
from chimera.evolution.skills import LearnedSkill, SkillStore

_WORD = re.compile(r"[a-z][a-z0-9]{2,}")


@dataclass(frozen=True)
class Admission:
    """What ``chimera skills test`` did: the skill as stored now, the gate's result, the tasks
    re-run and the origin tasks left out."""

    skill: LearnedSkill
    gate: GateResult
    tasks: tuple[str, ...]
    origin: tuple[str, ...]


def matching_tasks(skill: LearnedSkill, tasks: Sequence[tuple[str, str]]) -> list[str]:
    """Ids of ``(id, text)`` tasks sharing a word with the skill's retrieval text."""
    mine = set(_WORD.findall(f"{skill.name} {skill.description} {skill.when_to_use}".lower()))
    return [tid for tid, text in tasks if mine & set(_WORD.findall(text.lower()))]


def origin_targets(root: Path, skill: LearnedSkill) -> set[str]:
    """The requirement ids the skill's source runs targeted (from their ``summary.json``)."""
    found: set[str] = set()
    for run_id in skill.sources:
        path = root / ".chimera" / "runs" / run_id / "summary.json"
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            found.update(str(t) for t in data.get("targets") or ())
    return found


def test_skill(
    root: Path,
    name: str,
    chain_path: Path,
    *,
    model: str = "scripted",
    tasks: Sequence[str] = (),
    workdir: Path,
    alpha: float = 0.05,
) -> Admission:
    """Run the re-run gate for skill ``name`` of the repository at ``root`` on a chain.

    Args:
        tasks: the chain task ids to test on (default: every non-trap task the skill would be
            retrieved for).
        workdir: scratch space for the re-runs' workspaces.

    Raises:
        UsageError: no such skill, an unknown task id.
        ConfigError: the chain is invalid.
    """
    from chimera.eval.chain import Chain
    from chimera.evolution.rerun import ChainRerunner

    store = SkillStore(root / ".chimera" / "skills")
    skill = store.get(name)
    if skill is None:
        raise UsageError(f"no skill named {name!r} in {store.root}")
    chain = Chain.load(chain_path)
    known = {t.id for t in chain.tasks}
    unknown = [t for t in tasks if t not in known]
    if unknown:
        raise UsageError(f"--task: not in chain {chain.name}: {', '.join(unknown)}")
    chosen = list(tasks) or matching_tasks(
        skill, [(t.id, t.task) for t in chain.tasks if not t.trap]
    )
    targets = origin_targets(root, skill)
    origin = [t.id for t in chain.tasks if targets & set(t.requirement_ids)]
    rerunner = ChainRerunner(chain, workdir, model=model)
    ledger = SkillEvalLog(store.root / EVALS_FILE)
    gate = rerun_gate(skill, chosen, rerunner, origin=origin, ledger=ledger, alpha=alpha)
    audit = store.audit()
    if gate.passed:
        skill = store.put(replace(skill, tested=gate.record))
        audit.append("skill_tested", name=name, version=skill.version, reason=gate.reason)
    else:
        audit.append("skill_test_failed", name=name, version=skill.version, reason=gate.reason)
    tested = tuple(t for t in chosen if t not in set(origin))
    return Admission(skill, gate, tested, tuple(origin))


__all__ = ["Admission", "matching_tasks", "origin_targets", "test_skill"]
