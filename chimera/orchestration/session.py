"""An open session: one run's parts (:class:`Session`, made by
:meth:`~chimera.orchestration.session_factory.SessionFactory.open`) and what it builds from them —
an AutonomousAgent (:meth:`Session.agent`) or a ProjectOrchestrator with its card solver
(:meth:`Session.project`) — plus the protocol of the packages that plug into every session
(:class:`SessionPart`). Together with :mod:`chimera.orchestration.session_factory` this is the one
session factory: nothing else builds these parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from chimera.config import ChimeraConfig
from chimera.core.deps import AgentDeps, BigPlanner, ReplayCursor, ToolWrapper
from chimera.governance.audit import AuditLog
from chimera.protocols import EventSink, ExperienceStore, SupportsComplete
from chimera.providers import TokenBudget
from chimera.sandbox import Sandbox
from chimera.spec.model import Spec

if TYPE_CHECKING:
    from chimera.core.autonomous import AutonomousAgent
    from chimera.core.heldout import HeldOutGate
    from chimera.core.workspace import WorkspaceGuard
    from chimera.governance.guard import Guard
    from chimera.governance.taint import TaintLedger
    from chimera.orchestration.basis import Basis
    from chimera.orchestration.project import ProjectOrchestrator, SpecLoader
    from chimera.orchestration.solver import AgentCardSolver
    from chimera.spec.engine.options import EngineOptions

__all__ = ["FinishingPart", "Session", "SessionPart"]


class SessionPart(Protocol):
    """A package that plugs into every session the factory builds (memory, crews, connectors).

    Parts run in the order given to :class:`SessionFactory`.
    """

    def attach(self, session: Session) -> None:
        """Called once per session, after the core parts exist and before any agent."""
        ...

    def agent_deps(self, deps: AgentDeps, session: Session) -> AgentDeps:
        """``deps`` or a copy with collaborators replaced (``dataclasses.replace``)."""
        ...


class FinishingPart(Protocol):
    """A :class:`SessionPart` that also wants the end of the session (optional: a part
    without ``finish`` is skipped by :meth:`Session.finish`)."""

    def finish(self, session: Session, result: object) -> dict[str, Any] | None:
        """Called once when the surface is done with the session (``result``: the solve's
        ``SolveResult`` or the project run's ``RunState``). Update counters, close resources;
        return fields for the run summary (or ``None``)."""
        ...


@dataclass
class Session:
    """One run's parts, built once per process by :meth:`SessionFactory.open`."""

    root: Path
    run_id: str
    run_dir: Path
    config: ChimeraConfig
    model: str
    budget: TokenBudget
    sandbox: Sandbox
    audit: AuditLog
    ladder: tuple[SupportsComplete, ...]
    big_planner: BigPlanner
    guard: WorkspaceGuard
    events: EventSink | None = None
    guard_tools: bool = False
    experience: ExperienceStore | None = None
    parts: tuple[SessionPart, ...] = ()
    ledger: TaintLedger | None = None
    """The taint ledger of the latest untrusted agent's tools (parts record taint there)."""
    heldout: HeldOutGate | None = None
    """Held-out requirements (``[tool.chimera.heldout]``): acceptance alone asks them."""

    @property
    def sandbox_description(self) -> str:
        return self.sandbox.describe()

    @property
    def check_options(self) -> EngineOptions:
        """The Spec engine's limits from ``[tool.chimera.check]``, for every visible check of
        the run (the agents' and the orchestrator's, as ``chimera check`` applies them); the
        held-out folder is hidden from them."""
        import dataclasses

        from chimera.spec.settings import engine_options

        options = engine_options(self.config.check)
        if self.heldout is None:
            return options
        return dataclasses.replace(options, hidden=tuple(str(p) for p in self.heldout.hidden))

    def finish(self, result: object) -> dict[str, Any]:
        """Let every part with a ``finish`` hook (:class:`FinishingPart`) see the end of the
        session, in order; their returned fields merged (the run summary's ``parts``). Nothing is
        audited here: a project run's state has already recorded the audit head."""
        report: dict[str, Any] = {}
        for part in self.parts:
            hook = getattr(part, "finish", None)
            if hook is not None:
                report.update(hook(self, result) or {})
        return report

    def governance(
        self, *, task: str, untrusted: bool, trusted_commands: Sequence[str]
    ) -> tuple[ToolWrapper | None, list[Guard]]:
        """``--guard`` / ``--untrusted`` around an agent's tools (see ``tool_governance``).

        ``trusted_commands``: the *base* Spec's command runs
        (:func:`chimera.governance.wiring.trusted_commands`), the allowlist of a tainted run.
        """
        from chimera.governance.wiring import tool_governance

        return tool_governance(
            self.root,
            self.audit,
            guard=self.guard_tools,
            untrusted=untrusted,
            task=task,
            trusted_commands=trusted_commands,
            run_id=self.run_id,
            on_ledger=self._keep_ledger,
        )

    def _keep_ledger(self, ledger: TaintLedger) -> None:
        self.ledger = ledger

    def agent(
        self,
        spec: Spec,
        *,
        task: str,
        untrusted: bool,
        trusted_commands: Sequence[str],
        label: str = "solve",
        review: bool = True,
        cursor: ReplayCursor | None = None,
    ) -> tuple[AutonomousAgent, list[Guard]]:
        """An AutonomousAgent on ``spec`` with this session's parts, and its tool guards (they
        fill in as the agent builds its tools and hold the denied actions). ``cursor``: the
        ladder's replay position, checkpointed with each attempt (the card solver)."""
        from chimera.core.autonomous import AutonomousAgent

        wrapper, guards = self.governance(
            task=task, untrusted=untrusted, trusted_commands=trusted_commands
        )
        deps = AgentDeps(
            ladder=self.ladder,
            runner=self.sandbox,
            audit=self.audit,
            guard=self.guard,
            tool_wrapper=wrapper,
            experience=self.experience,
            events=self.events,
            big_planner=self.big_planner,
            cursor=cursor,
            check_options=self.check_options,
            heldout=self.heldout,
        )
        for part in self.parts:
            deps = part.agent_deps(deps, self)
        agent = AutonomousAgent(
            deps,
            workspace=self.root,
            spec=spec,
            run_dir=self.run_dir,
            config=self.config.agent,
            review=review,
            output_limit=self.config.tools.output_limit,
            label=label,
        )
        return agent, guards

    def project(
        self,
        spec_paths: Sequence[str],
        *,
        load_spec: SpecLoader | None = None,
        basis: Basis | None = None,
    ) -> tuple[ProjectOrchestrator, AgentCardSolver]:
        """The ProjectOrchestrator of this run over ``spec_paths`` (relative to the root), with
        an AgentCardSolver building each card's agent here. ``load_spec``: default a
        :class:`~chimera.orchestration.spec_cache.SpecCache` (parses only changed files).
        ``basis``: judge a new run's goal against that commit (iterating on a change)."""
        from chimera.orchestration.acceptance import ModelAcceptanceWriter
        from chimera.orchestration.adapters import GuardSnapshots
        from chimera.orchestration.project import (
            OrchestratorOptions,
            ProjectOrchestrator,
            RunLimits,
        )
        from chimera.orchestration.solver import AgentCardSolver
        from chimera.orchestration.spec_cache import SpecCache
        from chimera.orchestration.state import RunStore

        config = self.config
        if self.heldout is not None:
            from chimera.core.heldout import refuse_overlap

            refuse_overlap(self.heldout.place, [Path(p) for p in spec_paths])
        solver = AgentCardSolver(self.ladder, self.agent)
        orchestrator = ProjectOrchestrator(
            root=self.root,
            spec_paths=list(spec_paths),
            solver=solver,
            snapshots=GuardSnapshots(self.guard),
            runner=self.sandbox,
            store=RunStore(self.root),
            audit=self.audit,
            load_spec=load_spec or SpecCache(),
            acceptance_writer=ModelAcceptanceWriter(self.ladder[0]),
            options=OrchestratorOptions(
                limits=RunLimits(
                    max_iterations=config.run.max_iterations,
                    max_wall_s=config.run.max_wall_s,
                    budget_tokens=config.budget.tokens,
                    budget_usd=config.budget.usd,
                ),
                high_risk_paths=config.run.high_risk_paths,
                allow_self_approval=config.run.allow_self_approval,
                check_options=self.check_options,
                heldout=self.heldout,
                basis=basis,
            ),
            on_event=self.events,
        )
        return orchestrator, solver
