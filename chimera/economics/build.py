"""Backends from configuration: panels, cascades, the router and the effort policy.

A *route* string names where calls go: a model name, ``panel:NAME`` (a
:class:`~chimera.fusion.engine.FusionEngine` from ``[tool.chimera.fusion.panels.NAME]``) or
``cascade:NAME`` (a :class:`~chimera.economics.cascade.CascadeBackend` from
``[tool.chimera.cascades.NAME]``). Models become backends through ``backend_for`` — the
caller decides how (typically ``make_backend`` wrapped in a ``BudgetedBackend`` on the run
budget), so every leaf call is budgeted and priced.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from chimera.config.economics import (
    CommandGateConfig,
    CriteriaGateConfig,
    GateConfig,
    SchemaGateConfig,
)
from chimera.economics.cascade import (
    CascadeBackend,
    CascadeTier,
    CommandGate,
    CriteriaGate,
    Gate,
    SchemaGate,
)
from chimera.economics.effort import (
    EffortBackend,
    EffortPolicy,
    Rung,
    litellm_supports_reasoning,
)
from chimera.errors import ConfigError
from chimera.fusion.accounting import SupportsAudit
from chimera.fusion.engine import FusionEngine, PanelMember
from chimera.fusion.routing import RoutedBackend, RoutingPolicy
from chimera.protocols import Risk, SupportsComplete
from chimera.runner import CommandRunner

if TYPE_CHECKING:
    from chimera.config import ChimeraConfig

BackendFor = Callable[[str], SupportsComplete]
"""``model name -> backend``."""


def required_keys_model(keys: list[str]) -> type[BaseModel]:
    """A pydantic model for "a JSON object holding every key of ``keys``" (any values)."""
    fields: dict[str, Any] = {f"k{i}": (Any, Field(alias=key)) for i, key in enumerate(keys)}
    model: type[BaseModel] = create_model(
        "AnswerObject", __config__=ConfigDict(extra="allow"), **fields
    )
    return model


def gate_from_config(
    cfg: GateConfig, *, runner: CommandRunner | None = None, workdir: Path | None = None
) -> Gate:
    """The gate a ``gates = [...]`` entry describes.

    Raises:
        ConfigError: a criteria pattern does not compile.
    """
    if isinstance(cfg, SchemaGateConfig):
        return SchemaGate(required_keys_model(cfg.required))
    if isinstance(cfg, CriteriaGateConfig):
        try:
            return CriteriaGate(
                must_match=cfg.must_match,
                must_not_match=cfg.must_not_match,
                min_chars=cfg.min_chars,
                max_chars=cfg.max_chars,
            )
        except ValueError as exc:
            raise ConfigError(f"gates: {exc}") from exc
    assert isinstance(cfg, CommandGateConfig)
    return CommandGate(
        cfg.run,
        artifact=cfg.artifact,
        extract=cfg.extract,
        workdir=workdir,
        runner=runner,
        timeout=cfg.timeout,
    )


class EngineBuilder:
    """Builds routes from a :class:`~chimera.config.ChimeraConfig`.

    Args:
        config: the loaded configuration.
        backend_for: ``model name -> backend`` for leaf models.
        audit: passed to every engine, cascade and router built.
        runner: the command runner of command gates (the sandbox's in a run).
        workdir: where command gates write artifacts (a temporary directory when ``None``).

    Engines are built once per name and shared.
    """

    def __init__(
        self,
        config: ChimeraConfig,
        backend_for: BackendFor,
        *,
        audit: SupportsAudit | None = None,
        runner: CommandRunner | None = None,
        workdir: Path | None = None,
    ) -> None:
        self.config = config
        self.backend_for = backend_for
        self.audit = audit
        self.runner = runner
        self.workdir = workdir
        self._built: dict[str, SupportsComplete] = {}

    def default_model(self, key: str) -> str:
        model = self.config.models.default
        if not model:
            raise ConfigError(
                f"{key}: no route is set and models.default is empty; set one of them"
            )
        return model

    def route(self, spec: str, *, key: str) -> SupportsComplete:
        """The backend a route string names (``key`` locates it in error messages).

        Raises:
            ConfigError: ``panel:NAME`` / ``cascade:NAME`` names nothing configured.
        """
        if spec in self._built:
            return self._built[spec]
        kind, _, name = spec.partition(":")
        backend: SupportsComplete
        if kind == "panel" and name:
            backend = self.panel(name, key=key)
        elif kind == "cascade" and name:
            backend = self.cascade(name, key=key)
        else:
            backend = self.backend_for(spec)
        self._built[spec] = backend
        return backend

    def panel(self, name: str, *, key: str = "route") -> FusionEngine:
        """The fusion engine of ``[tool.chimera.fusion.panels.NAME]``."""
        cfg = self.config.fusion.panels.get(name)
        if cfg is None:
            known = ", ".join(sorted(self.config.fusion.panels)) or "none"
            raise ConfigError(f"{key}: panel:{name}: no such panel (defined: {known})")

        def member(model: str) -> PanelMember:
            return PanelMember(model, self.backend_for(model), model)

        judge = cfg.judge or cfg.members[0]
        synth = cfg.synthesizer or cfg.members[0]
        return FusionEngine(
            [member(m) for m in cfg.members],
            member(judge),
            member(synth),
            quorum=cfg.effective_quorum(),
            judge_max_tokens=cfg.judge_max_tokens,
            audit=self.audit,
            name=f"panel:{name}",
        )

    def cascade(self, name: str, *, key: str = "route") -> CascadeBackend:
        """The cascade of ``[tool.chimera.cascades.NAME]``."""
        cfg = self.config.cascades.get(name)
        if cfg is None:
            known = ", ".join(sorted(self.config.cascades)) or "none"
            raise ConfigError(f"{key}: cascade:{name}: no such cascade (defined: {known})")
        tiers = [
            CascadeTier(
                t.name,
                self.route(t.route, key=f"cascades.{name}.tiers.{i}.route"),
                [gate_from_config(g, runner=self.runner, workdir=self.workdir) for g in t.gates],
                model=t.route,
                max_tokens=t.max_tokens,
            )
            for i, t in enumerate(cfg.tiers)
        ]
        return CascadeBackend(
            tiers, audit=self.audit, on_exhausted=cfg.on_exhausted, name=f"cascade:{name}"
        )

    def router(self) -> RoutedBackend:
        """The :class:`RoutedBackend` of ``[tool.chimera.routing]``."""
        r = self.config.routing
        tool = r.tool_route or self.default_model("routing.tool_route")
        default = r.default_route or self.default_model("routing.default_route")
        policy = RoutingPolicy(
            tool_route=tool,
            default_route=default,
            deep_route=r.deep_route,
            deep_purposes=frozenset(r.deep_purposes),
            deep_risk=None if r.deep_risk == "none" else Risk(r.deep_risk),
            deep_on_repeat=r.deep_on_repeat,
            purpose_routes=dict(r.purposes),
        )
        routes = {spec: self.route(spec, key=f"routing ({spec})") for spec in policy.route_names()}
        return RoutedBackend(routes, policy, audit=self.audit)

    def routing_enabled(self) -> bool:
        """Whether ``[tool.chimera.routing]`` asks for anything beyond one model per rung."""
        r = self.config.routing
        return bool(r.deep_route or r.purposes or r.tool_route or r.default_route)

    def ladder(self, models: list[str]) -> list[SupportsComplete]:
        """The escalation ladder's rungs, weakest first, one per model in ``models``.

        Without routing configuration a rung is its model's backend. With it, each rung is a
        :class:`RoutedBackend` whose tool turns (and, unless ``routing.default_route`` says
        otherwise, its ordinary turns) go to the rung's own model, while deep turns take
        ``routing.deep_route`` — so a panel or cascade joins every rung without ever being
        handed a tool call.
        """
        if not self.routing_enabled():
            return [self.route(m, key="models") for m in models]
        r = self.config.routing
        rungs: list[SupportsComplete] = []
        for model in models:
            policy = RoutingPolicy(
                tool_route=model,
                default_route=r.default_route or model,
                deep_route=r.deep_route,
                deep_purposes=frozenset(r.deep_purposes),
                deep_risk=None if r.deep_risk == "none" else Risk(r.deep_risk),
                deep_on_repeat=r.deep_on_repeat,
                purpose_routes=dict(r.purposes),
            )
            routes = {spec: self.route(spec, key="routing") for spec in policy.route_names()}
            rungs.append(RoutedBackend(routes, policy, audit=self.audit))
        return rungs

    def effort_configured(self) -> bool:
        """Whether the configuration has an ``[tool.chimera.effort]`` section."""
        return "effort" in self.config.model_fields_set

    def effort_ladder(self, models: list[str]) -> list[SupportsComplete]:
        """The ladder under ``[tool.chimera.effort]``: one :class:`EffortBackend` over the
        rungs of :meth:`ladder`.

        Its policy sets every call's completion cap and reasoning effort (where the rung's
        model takes one) and picks the rung from the attempt (``attempts_per_rung``) and a
        repeated failure (``repeat_escalates``). To the agent it is a one-rung ladder: a
        repeated failure replans, and the policy moves the replan and what follows up.
        """
        rungs = self.ladder(models)
        policy = self.effort_policy(rungs=len(rungs))
        return [EffortBackend([Rung(b, m) for b, m in zip(rungs, models, strict=True)], policy)]

    def effort_policy(self, rungs: int = 1) -> EffortPolicy:
        """The :class:`EffortPolicy` of ``[tool.chimera.effort]`` for a ladder of ``rungs``."""
        e = self.config.effort
        return EffortPolicy(
            levels=dict(e.levels),
            purpose_levels=e.purpose_levels(),
            risk_levels=dict(e.risk),
            repeat_level=e.repeat_level,
            attempts_per_rung=e.attempts_per_rung,
            rungs=rungs,
            repeat_escalates=e.repeat_escalates,
            supports_reasoning=_supports_reasoning,
            audit=self.audit,
        )


def _supports_reasoning(model: str) -> bool:
    # A scripted model has no knob (and needs no LiteLLM to say so).
    return not model.startswith("scripted:") and litellm_supports_reasoning(model)
