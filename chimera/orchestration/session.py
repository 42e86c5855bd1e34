"""Assemble a project run from configuration: the one place ``chimera run``, ``resume``,
``approve`` and the GitHub Action build the orchestrator and its parts.

Parts: the model ladder (``BudgetedBackend`` over each rung, sharing one ``TokenBudget``
carried across resumes), the sandbox (every command of the run: tools, verification and the
Spec's ``command`` checks), the audit log, WorkspaceGuard snapshots, the AutonomousAgent as
card solver, and the run store.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.config import ChimeraConfig
from chimera.errors import UsageError
from chimera.governance.audit import AuditLog
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.project import OrchestratorOptions, ProjectOrchestrator, RunLimits
from chimera.orchestration.solver import AgentCardSolver
from chimera.orchestration.state import RunStore
from chimera.protocols import SupportsComplete

MODEL_ENV = "CHIMERA_MODEL"

EventSink = Callable[[str, dict[str, Any]], None]


def resolve_model(cli_model: str | None, config: ChimeraConfig) -> str:
    """``--model``, else ``[tool.chimera.models] default``, else ``$CHIMERA_MODEL``.

    Raises:
        UsageError: none of them is set.
    """
    model = cli_model or config.models.default or os.environ.get(MODEL_ENV)
    if not model:
        raise UsageError(
            f"no model: pass --model, set [tool.chimera.models] default, or set {MODEL_ENV}"
        )
    return model


@dataclass
class RunSession:
    """Everything a run needs, built once per process."""

    root: Path
    run_id: str
    run_dir: Path
    config: ChimeraConfig
    store: RunStore
    audit: AuditLog
    orchestrator: ProjectOrchestrator
    solver: AgentCardSolver
    sandbox_mode: str
    sandbox_description: str


def open_session(
    root: Path,
    *,
    run_id: str,
    config: ChimeraConfig,
    spec_paths: Sequence[str],
    model: str,
    spent_tokens: int = 0,
    spent_usd: float | None = 0.0,
    on_event: EventSink | None = None,
    guard: bool | None = None,
) -> RunSession:
    """Build the orchestrator for run ``run_id`` (new or resumed) under ``root``.

    ``spent_tokens`` / ``spent_usd`` are what earlier processes of the same run spent: they
    are taken off the budget so a resumed run's budget still holds as a whole.

    Raises:
        UsageError / ConfigError / MissingExtraError / AuthenticationError: a bad model,
            configuration, missing extra or missing key, each as one line.
    """
    from chimera.orchestration.build import EngineBuilder
    from chimera.providers import (
        SCRIPTED_PREFIX,
        BudgetedBackend,
        TokenBudget,
        check_credentials,
        load_dotenv_file,
        make_backend,
    )
    from chimera.sandbox import Sandbox
    from chimera.spec.loader import load_spec

    rungs = [model, *config.models.ladder]
    if any(not m.startswith(SCRIPTED_PREFIX) for m in rungs):
        load_dotenv_file(root)
        for m in rungs:
            if not m.startswith(SCRIPTED_PREFIX):
                check_credentials(m, api_base=config.models.api_base_for(m))
    store = RunStore(root)
    run_dir = store.run_dir(run_id)
    audit = AuditLog(run_dir / "audit.jsonl", run_id)
    tokens_left = (
        None if config.budget.tokens is None else max(0, config.budget.tokens - spent_tokens)
    )
    usd_left = (
        None if config.budget.usd is None else max(0.0, config.budget.usd - (spent_usd or 0.0))
    )
    budget = TokenBudget(max_tokens=tokens_left, max_usd=usd_left, name="run")
    sandbox = Sandbox(
        root,
        mode=config.sandbox.mode,
        env_allow=config.sandbox.env_allow,
        network=config.sandbox.network,
    )

    def backend_for(m: str) -> SupportsComplete:
        return BudgetedBackend(
            make_backend(m, config),
            budget,
            model=m,
            default_max_tokens=config.models.max_tokens,
            audit=audit,
        )

    # Without [tool.chimera.routing] each rung is its model; with it, a rung's deep turns
    # (plans, reviews, replans) go to a panel or cascade and its tool turns to one model.
    ladder = EngineBuilder(config, backend_for, audit=audit, runner=sandbox).ladder(rungs)
    use_guard = config.run.guard if guard is None else guard
    from chimera.orchestration.hierarchy_setup import build_hierarchy, hierarchy_planner

    agent_kwargs: dict[str, Any] = {
        "output_limit": config.tools.output_limit,
        # Built only if a Spine ever overflows its context budget.
        "big_planner": hierarchy_planner(
            lambda: build_hierarchy(
                config,
                root=root,
                run_dir=run_dir,
                run_id=run_id,
                audit=audit,
                budget=budget,
                top=model,
            )
        ),
    }
    files = [root / p for p in spec_paths]
    solver = AgentCardSolver(
        ladder,
        workspace=root,
        spec_paths=files,
        runner=sandbox,
        run_dir=run_dir,
        audit=audit,
        config=config.agent,
        on_event=on_event,
        guard=use_guard,
        **agent_kwargs,
    )
    orchestrator = ProjectOrchestrator(
        root=root,
        spec_paths=list(spec_paths),
        solver=solver,
        snapshots=GuardSnapshots(root, run_dir / "snapshots"),
        runner=sandbox,
        store=store,
        audit=audit,
        load_spec=load_spec,
        options=OrchestratorOptions(
            limits=RunLimits(
                max_iterations=config.run.max_iterations,
                max_wall_s=config.run.max_wall_s,
                budget_tokens=config.budget.tokens,
                budget_usd=config.budget.usd,
            ),
            high_risk_paths=config.run.high_risk_paths,
            allow_self_approval=config.run.allow_self_approval,
        ),
        on_event=on_event,
    )
    return RunSession(
        root=root,
        run_id=run_id,
        run_dir=run_dir,
        config=config,
        store=store,
        audit=audit,
        orchestrator=orchestrator,
        solver=solver,
        sandbox_mode=sandbox.mode,
        sandbox_description=sandbox.describe(),
    )
