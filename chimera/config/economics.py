"""Configuration of cascades, effort levels and the delegation hierarchy.

Sections ``[tool.chimera.cascades]``, ``[tool.chimera.effort]`` and
``[tool.chimera.hierarchy]``; fields of :class:`chimera.config.ChimeraConfig`. Example::

    [tool.chimera.cascades.main]
    on_exhausted = "raise"                 # or "last": return the top tier's answer, flagged

    [[tool.chimera.cascades.main.tiers]]
    name = "weak"
    route = "openai/gpt-4o-mini"           # a model, or panel:NAME
    gates = [{kind = "criteria", must_match = ["^1\\\\."], min_chars = 40}]

    [[tool.chimera.cascades.main.tiers]]
    name = "medium"
    route = "anthropic/claude-sonnet-4-5"
    gates = [{kind = "schema", required = ["steps"]},
             {kind = "command", run = "python -m json.tool {artifact}", timeout = 30}]

    [[tool.chimera.cascades.main.tiers]]
    name = "fusion"
    route = "panel:deep"                   # no gates: the last tier's answer is taken

    [tool.chimera.effort]
    attempts_per_rung = 2
    repeat_level = "high"
    [tool.chimera.effort.levels]
    low = {max_tokens = 1024, reasoning_effort = "low"}
    standard = {max_tokens = 4096, reasoning_effort = "medium"}
    high = {max_tokens = 16384, reasoning_effort = "high"}
    [tool.chimera.effort.purposes]
    summarize = "low"
    replan = "high"

    [tool.chimera.hierarchy]
    worker_model = "openai/gpt-4o-mini"
    per_worker_tokens = 30000
    inline_max_tokens = 800
    spot_check_rate = 1.0
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from chimera.protocols import Purpose, Risk

ReasoningEffort = Literal["low", "medium", "high"]


class EffortLevel(BaseModel):
    """A named amount of effort: a completion cap and a reasoning effort."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tokens: int = Field(gt=0)
    reasoning_effort: ReasoningEffort | None = None


DEFAULT_LEVELS: dict[str, EffortLevel] = {
    "low": EffortLevel(max_tokens=1024, reasoning_effort="low"),
    "standard": EffortLevel(max_tokens=4096, reasoning_effort="medium"),
    "high": EffortLevel(max_tokens=16384, reasoning_effort="high"),
}

DEFAULT_PURPOSE_LEVELS: dict[Purpose, str] = {
    Purpose.ACT: "standard",
    Purpose.PLAN: "standard",
    Purpose.REVIEW: "standard",
    Purpose.REPLAN: "high",
    Purpose.SUMMARIZE: "low",
    Purpose.MEMORY: "low",
}

DEFAULT_RISK_LEVELS: dict[Risk, str] = {Risk.HIGH: "high"}


class _Section(BaseModel):
    # Same rules as chimera.config.Section (not imported: chimera.config imports this module).
    model_config = ConfigDict(extra="forbid", validate_default=True)


class SchemaGateConfig(_Section):
    """The answer is a JSON object holding every key of ``required``."""

    kind: Literal["schema"]
    required: list[str] = Field(default_factory=list)


class CriteriaGateConfig(_Section):
    """Acceptance criteria: patterns that must / must not occur, a length range."""

    kind: Literal["criteria"]
    must_match: list[str] = Field(default_factory=list)
    must_not_match: list[str] = Field(default_factory=list)
    min_chars: int = Field(default=1, ge=0)
    max_chars: int | None = Field(default=None, ge=1)


class CommandGateConfig(_Section):
    """Write the answer to ``artifact`` and run ``run`` (``{artifact}`` is its path)."""

    kind: Literal["command"]
    run: str = Field(min_length=1)
    artifact: str = "answer.txt"
    extract: Literal["text", "code"] = "text"
    timeout: float = Field(default=60.0, gt=0)


GateConfig = Annotated[
    SchemaGateConfig | CriteriaGateConfig | CommandGateConfig, Field(discriminator="kind")
]


class TierConfig(_Section):
    """One cascade tier: a route (model or ``panel:NAME``) and its gates."""

    name: str = Field(min_length=1)
    route: str = Field(min_length=1)
    gates: list[GateConfig] = Field(default_factory=list)
    max_tokens: int | None = Field(default=None, gt=0)


class CascadeConfig(_Section):
    """A cascade: tiers cheapest first."""

    tiers: list[TierConfig] = Field(min_length=1)
    on_exhausted: Literal["raise", "last"] = "raise"

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        names = [t.name for t in self.tiers]
        if len(set(names)) != len(names):
            raise ValueError(f"tier names must be distinct: {names}")
        if any(t.route.startswith("cascade:") for t in self.tiers):
            raise ValueError("a tier's route is a model or panel:NAME, not another cascade")
        return self


class EffortConfig(_Section):
    """``[tool.chimera.effort]``: levels and how calls map onto them (see EffortPolicy).

    ``levels`` entries add to or replace the default ``low`` / ``standard`` / ``high``, so
    one level can be tuned alone. With the section present, the run's ladder applies the
    policy to every model call (see ``EngineBuilder.effort_ladder``).
    """

    levels: dict[str, EffortLevel] = Field(default_factory=lambda: dict(DEFAULT_LEVELS))
    purposes: dict[Purpose, str] = Field(default_factory=dict)
    risk: dict[Risk, str] = Field(default_factory=lambda: dict(DEFAULT_RISK_LEVELS))
    repeat_level: str = "high"
    attempts_per_rung: int = Field(default=2, ge=1)
    repeat_escalates: bool = True

    @field_validator("levels", mode="before")
    @classmethod
    def _over_defaults(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {**DEFAULT_LEVELS, **value}
        return value

    @model_validator(mode="after")
    def _levels_defined(self) -> Self:
        used = {*self.purpose_levels().values(), *self.risk.values(), self.repeat_level}
        missing = sorted(used - set(self.levels))
        if missing:
            raise ValueError(f"level(s) {', '.join(missing)} are used but not in levels")
        return self

    def purpose_levels(self) -> dict[Purpose, str]:
        """The default mapping with this section's ``purposes`` applied."""
        return {**DEFAULT_PURPOSE_LEVELS, **self.purposes}


class HierarchyConfig(_Section):
    """``[tool.chimera.hierarchy]``: the delegation hierarchy of ``chimera ask`` and big plans.

    ``worker_model`` defaults to ``models.default``; per-worker ceilings sit under the run
    budget (``[tool.chimera.budget]``). ``spot_check_judge`` names a model that judges
    faithfulness after the deterministic checks (unset: deterministic checks only).
    """

    worker_model: str | None = None
    per_worker_tokens: int | None = Field(default=None, ge=1)
    per_worker_usd: float | None = Field(default=None, ge=0)
    worker_max_tokens: int = Field(default=1500, gt=0)
    top_max_tokens: int = Field(default=2000, gt=0)
    inline_max_tokens: int = Field(default=800, ge=0)
    max_subtasks: int = Field(default=8, ge=1)
    max_workers: int = Field(default=4, ge=1)
    max_files: int = Field(default=2000, ge=1)
    spot_check_rate: float = Field(default=1.0, ge=0, le=1)
    spot_check_seed: int = 0
    spot_check_judge: str | None = None
    min_citations: int = Field(default=1, ge=0)
