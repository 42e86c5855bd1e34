"""The collaborators of an :class:`~chimera.core.autonomous.AutonomousAgent`, as one object.

The session factory (:mod:`chimera.orchestration.session_factory`) builds one :class:`AgentDeps` per
run and hands each agent the same parts: the ladder, the sandbox, the audit log, the one
WorkspaceGuard on the run's snapshot folder, the tool governance. A package that plugs into
the factory (memory, a review crew) replaces a collaborator with :func:`dataclasses.replace`
instead of growing the agent's constructor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from chimera.protocols import (
    EventSink,
    ExperienceStore,
    MemoryReader,
    SupportsComplete,
    ToolCaller,
)
from chimera.runner import CommandRunner

if TYPE_CHECKING:
    from pathlib import Path

    from chimera.config import ChimeraConfig
    from chimera.core.heldout import HeldOutGate
    from chimera.core.supervisor import ReviewVerdict
    from chimera.core.workspace import WorkspaceGuard
    from chimera.governance.audit import AuditLog
    from chimera.providers import TokenBudget
    from chimera.spec.engine.options import EngineOptions
    from chimera.tools import ToolRegistry

ToolWrapper = Callable[["ToolRegistry"], ToolCaller]
"""Wraps the native tool registry (the governance layer's ``govern_tools`` under ``--guard``)."""

BigPlanner = Callable[[str, Sequence[str], str], str]
"""``(task, files, failure_context) -> plan`` for a Spine larger than its token budget."""


class PartSession(Protocol):
    """What a session part (a ``SessionPart`` of :mod:`chimera.orchestration.session_factory`) reads
    of the session it attaches to; read-only properties, so the factory's ``Session``
    matches structurally without the parts importing the layer above them."""

    @property
    def root(self) -> Path: ...
    @property
    def run_id(self) -> str: ...
    @property
    def config(self) -> ChimeraConfig: ...
    @property
    def model(self) -> str: ...
    @property
    def budget(self) -> TokenBudget: ...
    @property
    def audit(self) -> AuditLog: ...
    @property
    def events(self) -> EventSink | None: ...


class Reviewer(Protocol):
    """Reviews one attempt before verification (:class:`~chimera.core.supervisor.ManagerReview`
    is the default; a review crew plugs in here)."""

    def review(
        self,
        backend: SupportsComplete,
        *,
        task: str,
        targets: Sequence[str],
        diff: str,
        summary: str,
        plan: str = "",
    ) -> ReviewVerdict:
        """One review. Raises what ``backend`` raises (``BudgetExceeded``, ``ProviderError``)."""
        ...


class ReplayCursor(Protocol):
    """The replay position of a scripted ladder (the card solver), saved with each attempt's
    checkpoint and restored by ``solve(..., resume=True)``."""

    def checkpoint(self) -> int | None: ...

    def rewind(self, position: int | None) -> None: ...


@dataclass(frozen=True)
class AgentDeps:
    """What an AutonomousAgent works with (none of it is the agent's to build).

    Attributes:
        ladder: rungs weakest first; each must take tool-calling turns (at least one).
        runner: the sandbox runner; tools, the Spec's ``command`` checks and verification use it.
        audit: the run's audit log.
        guard: the WorkspaceGuard on the run's ``snapshots/`` folder, shared with the
            orchestrator's card snapshots (one guard per folder); ``None``: the agent makes
            one on ``run_dir / "snapshots"``.
        tool_wrapper: applied to the native tool registry before the attempts.
        reviewer: the manager review (``None``: :class:`ManagerReview`).
        experience: past failures on similar tasks warn the planner; every attempt is
            appended.
        events: receives every audit event and every agent step (live progress).
        big_planner: the plan step when the Spine does not fit its token budget
            (:func:`chimera.economics.hierarchy_setup.hierarchy_planner`).
        cursor: the ladder's replay position (scripted models; the card solver), saved in
            each attempt's checkpoint and restored by ``solve(..., resume=True)``.
        check_options: the Spec engine's limits for every check of the agent
            (``[tool.chimera.check]``); ``None``: the engine's defaults.
        memory: persona and recalled memories for each plan step (the memory session
            part's reader); a tainted recall taints the run.
        heldout: held-out requirements (``[tool.chimera.heldout]``), asked after an attempt's
            visible checks pass; its folder is hidden from the tools and the Spine.
    """

    ladder: tuple[SupportsComplete, ...]
    runner: CommandRunner
    audit: AuditLog
    guard: WorkspaceGuard | None = None
    tool_wrapper: ToolWrapper | None = None
    reviewer: Reviewer | None = None
    experience: ExperienceStore | None = None
    events: EventSink | None = None
    big_planner: BigPlanner | None = None
    cursor: ReplayCursor | None = None
    check_options: EngineOptions | None = None
    memory: MemoryReader | None = None
    heldout: HeldOutGate | None = None
