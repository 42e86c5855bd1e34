"""The session factory: the one place a run's parts are built, for every surface.

``chimera solve``, ``run``, ``resume``, ``approve``, ``ask``, ``demo`` and the GitHub Action
(whose agent job's child, :mod:`chimera.github.agent.child`, calls ``start_run`` /
``approve_run``) reach the engine only through
:class:`SessionFactory` (through :mod:`chimera.orchestration.surfaces`). Two steps:

* :meth:`SessionFactory.prepare` refuses everything that can be refused — a missing key, a
  USD budget on an unpriced model, ``sandbox.mode = "bwrap"`` without bubblewrap — before
  anything is written, and builds the run budget (less what earlier processes of the same run
  spent) and the sandbox.
* :meth:`SessionFactory.open` ties them to a run folder: the audit log, the model ladder
  (``BudgetedBackend`` per model, one shared budget; panels and cascades from
  ``[tool.chimera.routing]``), the delegation hierarchy as the big planner, and the one
  :class:`WorkspaceGuard` on the run's ``snapshots/`` folder.

A :class:`Session` (:mod:`chimera.orchestration.session`, re-exported here) then builds
an AutonomousAgent (:meth:`Session.agent`: tool governance with the allowlist from the base
Spec, one :class:`AgentDeps`) or a ProjectOrchestrator (:meth:`Session.project`). Packages
that extend every run (memory, crews, connectors) are :class:`SessionPart` objects given to
the factory; they see each session once it is open and each agent's dependencies before the
agent is built.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.config import ChimeraConfig
from chimera.core.deps import ToolWrapper
from chimera.errors import GovernanceError, UsageError
from chimera.governance.audit import AuditLog
from chimera.orchestration.session import FinishingPart, Session, SessionPart
from chimera.protocols import EventSink, ExperienceStore, SupportsComplete
from chimera.providers import SCRIPTED_PREFIX, BudgetedBackend, TokenBudget
from chimera.runner import CommandRunner
from chimera.sandbox import Sandbox, SandboxLimits
from chimera.sandbox.limits import MIB

if TYPE_CHECKING:
    from chimera.core.heldout import HeldOutDir

__all__ = [
    "EXPERIENCE_FILE",
    "MODEL_ENV",
    "RUNS",
    "FinishingPart",
    "Prepared",
    "Session",
    "SessionFactory",
    "SessionPart",
    "check_models",
    "disposable_checks",
    "open_audit",
    "read_only_governance",
    "resolve_model",
    "sandbox_limits",
    "verify_sandbox",
]

MODEL_ENV = "CHIMERA_MODEL"
RUNS = Path(".chimera") / "runs"
EXPERIENCE_FILE = Path(".chimera") / "experience.jsonl"


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


def check_models(root: Path, config: ChimeraConfig, models: Iterable[str]) -> None:
    """Load ``root/.env`` and fail early, in one line, when a real model's key is missing.

    Raises:
        AuthenticationError: a model's key is missing (the message names the variable).
    """
    from chimera.providers import check_credentials, load_dotenv_file

    real = [m for m in dict.fromkeys(models) if not m.startswith(SCRIPTED_PREFIX)]
    if real:
        load_dotenv_file(root)
        for m in real:
            check_credentials(m, api_base=config.models.api_base_for(m))


def open_audit(run_dir: Path, run_id: str, *, workspace: Path | None = None) -> AuditLog:
    """The run's hash-chained audit log, ``run_dir/audit.jsonl`` (the one place it is made).

    Every event passes the governance SecretRedactor first (credential-named environment
    variables, known token formats and, given ``workspace``, its dotenv values): a surface's
    events quote tasks, questions, plans and model answers, and the run folder is uploaded.
    """
    from chimera.governance.redactor import SecretRedactor

    redactor = SecretRedactor.from_environment(workspace=workspace)
    return AuditLog(run_dir / "audit.jsonl", run_id, redactor=redactor)


@dataclass
class Prepared:
    """Validated parts not yet tied to a run folder (see :meth:`SessionFactory.prepare`)."""

    root: Path
    config: ChimeraConfig
    model: str
    budget: TokenBudget
    sandbox: Sandbox
    backends: dict[str, BudgetedBackend] = field(default_factory=dict)
    heldout: HeldOutDir | None = None

    @property
    def rungs(self) -> list[str]:
        return [self.model, *self.config.models.ladder]

    def backend(self, model: str, audit: AuditLog | None) -> BudgetedBackend:
        # Panel members and cascade tiers named by [tool.chimera.routing] share the budget.
        if model not in self.backends:
            from chimera.providers import budgeted_backend

            self.backends[model] = budgeted_backend(model, self.config, self.budget, audit=audit)
        return self.backends[model]


class SessionFactory:
    """Builds every surface's session the same way (module docstring).

    Args:
        parts: packages that plug into every session, in order (see :class:`SessionPart`).
    """

    def __init__(self, parts: Sequence[SessionPart] = ()) -> None:
        self.parts = tuple(parts)

    def prepare(
        self,
        root: Path,
        config: ChimeraConfig,
        model: str,
        *,
        spent_tokens: int = 0,
        spent_usd: float | None = 0.0,
    ) -> Prepared:
        """Validate and build what needs no run folder yet.

        ``spent_tokens`` / ``spent_usd``: what earlier processes of the same run spent (a
        resume); they come off the budget so the run's budget holds as a whole.

        Raises:
            AuthenticationError: a model's key is missing (one line naming the variable).
            ConfigError: a USD budget with an unpriced model and no token budget.
            MissingExtraError: LiteLLM is needed and not installed.
            SandboxError: ``sandbox.mode = "bwrap"`` and bubblewrap is unusable; held-out
                requirements in scrubbed mode.
            ConfigError: the held-out folder is missing, empty or exposed to git.
        """
        from chimera.core.heldout import locate_heldout

        check_models(root, config, [model, *config.models.ladder])
        place = locate_heldout(root, config.heldout)
        # With held-out requirements, .chimera/runs is masked too: their verdicts are
        # recorded there (heldout.jsonl, the run summary) and a later command must not read it.
        hidden = [place.path, root / ".chimera" / "runs"] if place is not None else []
        b = config.budget
        tokens_left = None if b.tokens is None else max(0, b.tokens - spent_tokens)
        usd_left = None if b.usd is None else max(0.0, b.usd - (spent_usd or 0.0))
        sandbox = Sandbox(
            root,
            mode=config.sandbox.mode,
            env_allow=config.sandbox.env_allow,
            network=config.sandbox.network,
            hidden=hidden,
            deps_dir=config.sandbox.deps_path(root),
            limits=sandbox_limits(config),
            unmask=config.sandbox.unmask,
        )
        prepared = Prepared(
            root=root,
            config=config,
            model=model,
            budget=TokenBudget(max_tokens=tokens_left, max_usd=usd_left, name="run"),
            sandbox=sandbox,
            heldout=place,
        )
        for m in prepared.rungs:  # an unpriced model under a USD budget refuses here
            prepared.backend(m, None)
        return prepared

    def open_record(
        self, root: Path, config: ChimeraConfig, models: Iterable[str]
    ) -> tuple[str, Path, AuditLog]:
        """A new run id, its folder and audit log for a surface with no ladder or sandbox
        (``chimera ask``); the models' keys are checked first.

        Raises:
            AuthenticationError: a model's key is missing.
        """
        from chimera.orchestration.state import RunStore, new_run_id

        check_models(root, config, models)
        run_id = new_run_id()
        run_dir = RunStore(root).run_dir(run_id)
        return run_id, run_dir, open_audit(run_dir, run_id, workspace=root)

    def open(
        self,
        prepared: Prepared,
        *,
        run_id: str,
        events: EventSink | None = None,
        guard_tools: bool = False,
        experience: bool = False,
    ) -> Session:
        """Tie ``prepared`` to run ``run_id``'s folder; let every part attach.

        ``guard_tools``: every tool call goes through the TrustKernel (``--guard``).
        ``experience``: agents read and append ``.chimera/experience.jsonl``.

        Raises:
            UsageError: an invalid run id.
        """
        from chimera.core.workspace import WorkspaceGuard
        from chimera.economics.build import EngineBuilder
        from chimera.economics.hierarchy_setup import build_hierarchy, hierarchy_planner
        from chimera.orchestration.state import RunStore

        root, config = prepared.root, prepared.config
        run_dir = RunStore(root).run_dir(run_id)
        audit = open_audit(run_dir, run_id, workspace=root)
        for backend in prepared.backends.values():
            backend.audit = audit  # budget refusals are audit events

        def backend_for(model: str) -> SupportsComplete:
            return prepared.backend(model, audit)

        # Without [tool.chimera.routing] each rung is its model; with it, a rung's deep turns
        # (plans, reviews, replans) go to a panel or cascade and its tool turns to one model.
        builder = EngineBuilder(config, backend_for, audit=audit, runner=prepared.sandbox)
        # [tool.chimera.effort] puts the effort policy in front of the rungs (caps, reasoning
        # effort, rung choice on every call).
        ladder = tuple(
            builder.effort_ladder(prepared.rungs)
            if builder.effort_configured()
            else builder.ladder(prepared.rungs)
        )
        # Built only if a Spine ever overflows its context budget.
        planner = hierarchy_planner(
            lambda: build_hierarchy(
                config,
                root=root,
                run_dir=run_dir,
                run_id=run_id,
                audit=audit,
                budget=prepared.budget,
                top=prepared.model,
            )
        )
        store: ExperienceStore | None = None
        if experience:
            from chimera.memory.experience import ExperienceBuffer

            store = ExperienceBuffer(root / EXPERIENCE_FILE, workspace=root)
        session = Session(
            root=root,
            run_id=run_id,
            run_dir=run_dir,
            config=config,
            model=prepared.model,
            budget=prepared.budget,
            sandbox=prepared.sandbox,
            audit=audit,
            ladder=ladder,
            big_planner=planner,
            guard=WorkspaceGuard(
                root,
                run_dir / "snapshots",
                private=[prepared.heldout.path] if prepared.heldout is not None else [],
            ),
            events=events,
            guard_tools=guard_tools,
            experience=store,
            parts=self.parts,
        )
        if prepared.heldout is not None:
            from chimera.core.heldout import HeldOutGate

            session.heldout = HeldOutGate(
                prepared.heldout,
                prepared.sandbox,
                run_dir=run_dir,
                audit=audit,
                options=session.check_options,
            )
        for part in self.parts:
            part.attach(session)
        if events is not None:  # live progress only: the audit log records the run's own start
            events(
                "session_opened",
                {
                    "run_id": run_id,
                    "run_dir": run_dir.relative_to(root).as_posix(),
                    "sandbox": session.sandbox_description,
                    "sandbox_mode": session.sandbox.mode
                    + (" (weaker)" if session.sandbox.weaker else ""),
                },
            )
        return session


def read_only_governance(root: Path, audit: AuditLog, *, untrusted: bool, task: str) -> ToolWrapper:
    """The TrustKernel around a surface whose tools only read (``chimera crew run``): every
    call evaluated first, taint tracked for ``untrusted`` task text. The one other caller of
    :func:`chimera.governance.wiring.tool_governance` besides :meth:`Session.governance`."""
    from chimera.governance.wiring import tool_governance

    wrap, _guards = tool_governance(root, audit, guard=True, untrusted=untrusted, task=task)
    if wrap is None:  # guard=True always wraps; fail closed if that ever changes
        raise GovernanceError("tool governance returned no wrapper with guard on")
    return wrap


def sandbox_limits(config: ChimeraConfig) -> SandboxLimits:
    """The sandbox's resource limits with ``[tool.chimera.sandbox] write_cap_mib`` (``0``: no
    total write cap)."""
    cap = config.sandbox.write_cap_mib
    return SandboxLimits(write_cap_bytes=cap * MIB if cap else None)


def disposable_checks(config: ChimeraConfig) -> Callable[[Path], CommandRunner]:
    """For a tree's root, the runner of its ``command`` checks: a sandbox over that root (the
    configured mode, environment allowlist and network) running each command in a disposable
    copy of the tree (``chimera meta design``'s visible and held-out checks)."""

    def runner(root: Path) -> CommandRunner:
        sandbox = Sandbox(
            root,
            mode=config.sandbox.mode,
            env_allow=config.sandbox.env_allow,
            network=config.sandbox.network,
            deps_dir=config.sandbox.deps_path(root),
            limits=sandbox_limits(config),
            unmask=config.sandbox.unmask,
        )
        return sandbox.for_checks(root)

    return runner


def verify_sandbox(
    tree: Path, *, scrubbed: bool, env_allow: Sequence[str], deps_dir: Path | None = None
) -> Sandbox:
    """The strict sandbox of the Action's verify job over one tree (the base or the patched
    copy): bubblewrap, never the configured ``auto``, no network; ``scrubbed`` only when the
    workflow opted out loudly (its verdict is then advisory). ``deps_dir``: the folder the
    set-up step filled from the base commit, shown read-only.

    Raises:
        SandboxError: bubblewrap cannot start, or ``deps_dir`` is not a folder.
    """
    return Sandbox(
        tree,
        mode="scrubbed" if scrubbed else "bwrap",
        env_allow=env_allow,
        network=False,
        deps_dir=deps_dir,
    )
