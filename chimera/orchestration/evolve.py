"""``chimera evolve`` as a surface: one bounded, audited refinement round of a skill.

The CLI turns argv into an :class:`EvolveRequest`; this module opens the run record through
the session factory (run id, folder, audit log), builds the budgeted reflection model and
runs :func:`chimera.evolution.refine.refine_skill` (see the CLI module for the semantics).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.atomic import atomic_write_text
from chimera.errors import UsageError
from chimera.orchestration.session import SessionFactory
from chimera.protocols import StepProgress


@dataclass(frozen=True)
class EvolveRequest:
    """What ``chimera evolve`` was asked (paths absolute or relative to the current dir)."""

    root: Path
    chain: Path
    model: str
    task_model: str = "scripted"
    skill: str | None = None
    max_metric_calls: int = 30
    budget_tokens: int = 50_000
    seed: int = 0
    progress: StepProgress | None = None
    """Told as each re-run starts (at most ``max_metric_calls``)."""


@dataclass(frozen=True)
class EvolveOutcome:
    """The round's result: ``summary`` is what ``summary.json`` holds (``None``: nothing to
    refine); ``run_dir`` the run's folder."""

    summary: dict[str, Any] | None
    run_dir: Path | None


def evolve(request: EvolveRequest, factory: SessionFactory | None = None) -> EvolveOutcome:
    """Run one refinement round.

    Raises:
        UsageError: a non-positive budget, an unknown skill, or too few failures.
        ConfigError: the chain or the configuration is invalid.
        AuthenticationError: the reflection model's key is missing.
    """
    from chimera.config import load_config
    from chimera.eval.chain import Chain
    from chimera.evolution.ledger import EVALS_FILE, SkillEvalLog
    from chimera.evolution.refine import refine_skill
    from chimera.evolution.rerun import ChainRerunner
    from chimera.evolution.skills import SkillStore
    from chimera.governance.redactor import SecretRedactor
    from chimera.providers import TokenBudget, budgeted_backend

    factory = factory or SessionFactory()
    root = request.root.resolve()
    if request.max_metric_calls < 1 or request.budget_tokens < 1:
        raise UsageError("--max-metric-calls and --budget-tokens must be positive")
    chain = Chain.load(request.chain)
    store = SkillStore(root / ".chimera" / "skills")
    ledger = SkillEvalLog(store.root / EVALS_FILE)
    chain_ids = {t.id for t in chain.tasks}
    splits = {}
    for skill in store.all():
        failing, passing = ledger.split(skill.name, skill.version)
        failing = [t for t in failing if t in chain_ids]
        splits[skill.name] = (skill, failing, [t for t in passing if t in chain_ids])
    if request.skill:
        if request.skill not in splits:
            raise UsageError(f"--skill: no skill named {request.skill!r} in {store.root}")
        name = request.skill
    else:
        name = max(splits, key=lambda n: (len(splits[n][1]), n), default="")
        if not name or not splits[name][1]:
            return EvolveOutcome(None, None)
    parent, failing, passing = splits[name]
    config = load_config(root)
    run_id, run_dir, audit = factory.open_record(root, config, [request.model])
    audit.append(
        "evolve_started", skill=name, version=parent.version, chain=chain.name,
        failing=failing, passing=passing, max_metric_calls=request.max_metric_calls,
        budget_tokens=request.budget_tokens, model=request.model,
        task_model=request.task_model,
    )  # fmt: skip
    budget = TokenBudget(max_tokens=request.budget_tokens, name="evolve")
    reflection = budgeted_backend(request.model, config, budget, audit=audit)
    redactor = SecretRedactor.from_environment(workspace=root)
    with tempfile.TemporaryDirectory(prefix="chimera-evolve-") as scratch:
        rerunner = ChainRerunner(
            chain,
            Path(scratch),
            model=request.task_model,
            progress=request.progress,
            most=request.max_metric_calls,
        )
        outcome = refine_skill(
            parent, failing=failing, passing=passing, rerunner=rerunner, reflection=reflection,
            max_metric_calls=request.max_metric_calls, audit=audit, store=store,
            ledger=ledger, describe=lambda t: chain.task(t).task, seed=request.seed,
            redactor=redactor,
        )  # fmt: skip
    summary = {
        "run_id": run_id,
        "command": "evolve",
        "skill": name,
        "decision": outcome.decision,
        "reason": outcome.reason,
        "version": outcome.skill.version,
        "metric_calls": outcome.metric_calls,
        "max_metric_calls": request.max_metric_calls,
        "gate": dict(outcome.gate),
        "audit_head": audit.head_hash,
    }
    summary, _ = redactor.redact_json(summary)  # the reason and gate quote what GEPA saw
    atomic_write_text(run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    return EvolveOutcome(summary, run_dir)
