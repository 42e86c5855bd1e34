"""The model ladder, budget and sandbox of one run, built the same way for every surface.

``chimera solve``, ``chimera run`` / ``resume`` / ``approve`` and the GitHub Action all use
:func:`prepare_engine` then :meth:`PreparedEngine.bind`. Preparing refuses everything that can
be refused (a missing key, a USD budget on an unpriced model, ``sandbox.mode = "bwrap"``
without bubblewrap) before anything is written; binding attaches the run's audit log and
folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from chimera.config import ChimeraConfig
from chimera.economics.build import EngineBuilder
from chimera.economics.hierarchy_setup import BigPlanner, build_hierarchy, hierarchy_planner
from chimera.errors import UsageError
from chimera.governance.audit import AuditLog
from chimera.protocols import SupportsComplete
from chimera.providers import (
    SCRIPTED_PREFIX,
    BudgetedBackend,
    TokenBudget,
    check_credentials,
    load_dotenv_file,
    make_backend,
)
from chimera.sandbox import Sandbox

MODEL_ENV = "CHIMERA_MODEL"


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
class Engine:
    """A bound engine: what an AutonomousAgent (or a card solver) is built from."""

    ladder: list[SupportsComplete]
    sandbox: Sandbox
    budget: TokenBudget
    big_planner: BigPlanner


@dataclass
class PreparedEngine:
    """Validated parts, not yet tied to a run folder (see :func:`prepare_engine`)."""

    root: Path
    config: ChimeraConfig
    model: str
    budget: TokenBudget
    sandbox: Sandbox
    _budgeted: dict[str, BudgetedBackend] = field(default_factory=dict)

    @property
    def rungs(self) -> list[str]:
        return [self.model, *self.config.models.ladder]

    def _backend(self, model: str, audit: AuditLog | None) -> BudgetedBackend:
        # Panel members and cascade tiers named by [tool.chimera.routing] share the budget.
        if model not in self._budgeted:
            self._budgeted[model] = BudgetedBackend(
                make_backend(model, self.config),
                self.budget,
                model=model,
                default_max_tokens=self.config.models.max_tokens,
                audit=audit,
            )
        return self._budgeted[model]

    def bind(self, *, audit: AuditLog, run_dir: Path, run_id: str) -> Engine:
        """Attach the run's audit log and folder; build the ladder and the big planner."""
        for backend in self._budgeted.values():
            backend.audit = audit  # budget refusals are audit events

        def backend_for(model: str) -> SupportsComplete:
            return self._backend(model, audit)

        # Without [tool.chimera.routing] each rung is its model; with it, a rung's deep turns
        # (plans, reviews, replans) go to a panel or cascade and its tool turns to one model.
        builder = EngineBuilder(self.config, backend_for, audit=audit, runner=self.sandbox)
        ladder = builder.ladder(self.rungs)
        # Built only if a Spine ever overflows its context budget.
        planner = hierarchy_planner(
            lambda: build_hierarchy(
                self.config,
                root=self.root,
                run_dir=run_dir,
                run_id=run_id,
                audit=audit,
                budget=self.budget,
                top=self.model,
            )
        )
        return Engine(ladder=ladder, sandbox=self.sandbox, budget=self.budget, big_planner=planner)


def prepare_engine(
    root: Path,
    config: ChimeraConfig,
    model: str,
    *,
    spent_tokens: int = 0,
    spent_usd: float | None = 0.0,
) -> PreparedEngine:
    """Validate and build the parts of a run that need no run folder yet.

    ``spent_tokens`` / ``spent_usd`` are what earlier processes of the same run spent (a
    resume): they come off the budget so the run's budget holds as a whole.

    Raises:
        AuthenticationError: a model's key is missing (one line naming the variable).
        ConfigError: a USD budget with an unpriced model and no token budget.
        MissingExtraError: LiteLLM is needed and not installed.
        SandboxError: ``sandbox.mode = "bwrap"`` and bubblewrap is unusable.
    """
    rungs = [model, *config.models.ladder]
    if any(not m.startswith(SCRIPTED_PREFIX) for m in rungs):
        load_dotenv_file(root)
        for m in rungs:
            if not m.startswith(SCRIPTED_PREFIX):
                check_credentials(m, api_base=config.models.api_base_for(m))
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
    prepared = PreparedEngine(root=root, config=config, model=model, budget=budget, sandbox=sandbox)
    for m in rungs:  # build the rungs now: an unpriced model under a USD budget refuses here
        prepared._backend(m, None)
    return prepared
