"""Assemble a project run from configuration: the one place ``chimera run``, ``resume``,
``approve`` and the GitHub Action build the orchestrator and its parts.

Parts: the model ladder (``BudgetedBackend`` over each rung, sharing one ``TokenBudget``
carried across resumes), the sandbox (every command of the run: tools, verification and the
Spec's ``command`` checks), the audit log, WorkspaceGuard snapshots, the AutonomousAgent as
card solver, and the run store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.config import ChimeraConfig
from chimera.governance.audit import AuditLog
from chimera.orchestration.acceptance import ModelAcceptanceWriter
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.project import OrchestratorOptions, ProjectOrchestrator, RunLimits
from chimera.orchestration.solver import AgentCardSolver
from chimera.orchestration.state import RunStore

EventSink = Callable[[str, dict[str, Any]], None]


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
    from chimera.orchestration.engine_setup import prepare_engine
    from chimera.spec.loader import load_spec

    prepared = prepare_engine(root, config, model, spent_tokens=spent_tokens, spent_usd=spent_usd)
    store = RunStore(root)
    run_dir = store.run_dir(run_id)
    audit = AuditLog(run_dir / "audit.jsonl", run_id)
    engine = prepared.bind(audit=audit, run_dir=run_dir, run_id=run_id)
    ladder, sandbox = engine.ladder, engine.sandbox
    use_guard = config.run.guard if guard is None else guard
    agent_kwargs: dict[str, Any] = {
        "output_limit": config.tools.output_limit,
        "big_planner": engine.big_planner,
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
        acceptance_writer=ModelAcceptanceWriter(ladder[0]),
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
