"""``chimera evolve`` as a surface: one bounded, audited refinement round of a skill.

The CLI turns argv into an :class:`EvolveRequest`; this module opens the run record through
the session factory (run id, folder, audit log), builds the budgeted reflection model and
runs :func:`chimera.evolution.refine.refine_skill` (see the CLI module for the semantics).

What it works on comes from real runs: the skills' evaluation ledger holds every run that
showed a skill (its task key: the run's target requirement ids, mapped here to the chain's
task) besides the gates' re-runs. Without ``--skill`` the round goes where the scorecard is
weakest (:func:`chimera.eval.focus.choose_focus`: the capability with the lowest Wilson lower
bound — over the repository's runs and the ledger's outcomes per task family — that a skill
with recorded failures works on), and the summary says which. The holdout adds the chain's
other tasks of the failing tasks' families (never trap tasks, never recorded ones).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.atomic import atomic_write_text
from chimera.errors import UsageError
from chimera.orchestration.session_factory import SessionFactory
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
    by: str = ""
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
    to_chain = _chain_ids(chain)
    splits = {}
    for skill in store.all():
        failing, passing = ledger.split(skill.name, skill.version)
        mapped_fail = sorted({to_chain[t] for t in failing if t in to_chain})
        mapped_pass = sorted({to_chain[t] for t in passing if t in to_chain} - set(mapped_fail))
        splits[skill.name] = (skill, mapped_fail, mapped_pass)
    focus = None
    if request.skill:
        if request.skill not in splits:
            raise UsageError(f"--skill: no skill named {request.skill!r} in {store.root}")
        name = request.skill
    else:
        candidates = {n: v for n, v in splits.items() if v[1]}
        if not candidates:
            return EvolveOutcome(None, None)
        focus = _focus(root, chain, ledger, to_chain, candidates)
        name = (
            focus.candidate
            if focus is not None
            else max(candidates, key=lambda n: (len(candidates[n][1]), n))
        )
    parent, failing, passing = splits[name]
    families = {chain.task(t).family for t in failing}
    extra = [
        t.id for t in chain.tasks
        if t.family in families and not t.trap and t.id not in {*failing, *passing}
    ]  # fmt: skip
    config = load_config(root)
    run_id, run_dir, audit = factory.open_record(root, config, [request.model])
    audit.append(
        "evolve_started", skill=name, version=parent.version, chain=chain.name,
        failing=failing, passing=passing, holdout_extra=extra,
        focus=focus.describe() if focus else "", max_metric_calls=request.max_metric_calls,
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
            redactor=redactor, holdout_extra=extra, accepted_by=request.by,
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
        "focus": focus.describe() if focus else "",
        "audit_head": audit.head_hash,
    }
    summary, _ = redactor.redact_json(summary)  # the reason and gate quote what GEPA saw
    atomic_write_text(run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    return EvolveOutcome(summary, run_dir)


def _chain_ids(chain: Any) -> dict[str, str]:
    """Ledger task key → chain task id: the id itself, or a run's target ids (sorted,
    comma-joined) equal to the task's requirement ids."""
    from chimera.evolution.usage import task_key

    out: dict[str, str] = {}
    for task in chain.tasks:
        out[task.id] = task.id
        out[task_key(task.requirement_ids)] = task.id
    return out


def _focus(
    root: Path, chain: Any, ledger: Any, to_chain: dict[str, str], candidates: dict[str, Any]
) -> Any:
    """The weakest capability a candidate skill works on (module docstring), or ``None``."""
    from chimera.eval.focus import choose_focus
    from chimera.eval.maturity import Dimension, Outcome, Scorecard
    from chimera.eval.records import outcomes_from_runs, requirement_kinds

    outcomes, skipped = outcomes_from_runs(
        root / ".chimera" / "runs", requirement_kinds(root / "specs")
    )
    for entry in ledger.entries():
        if entry.task in to_chain:
            family = chain.task(to_chain[entry.task]).family
            outcomes.append(Outcome("family", family, entry.passed, f"ledger:{entry.skill}"))
    card = Scorecard(outcomes, skipped=skipped)
    covers: dict[str, set[tuple[Dimension, str]]] = {
        name: {("family", chain.task(t).family) for t in failing}
        | {("kind", str(k)) for t in failing for r in chain.task(t).requirements for k in r
           if k not in ("id", "title", "risk", "depends_on", "owner")}
        for name, (_, failing, _) in candidates.items()
    }  # fmt: skip
    weight = {name: len(v[1]) for name, v in candidates.items()}
    return choose_focus(card, covers, weight=weight)
