"""Configuration of fusion panels and routing.

Sections ``[tool.chimera.fusion]`` and ``[tool.chimera.routing]``.

Example (``pyproject.toml``)::

    [tool.chimera.fusion.panels.deep]
    members = ["openai/gpt-4o", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-pro"]
    judge = "openai/gpt-4o"
    synthesizer = "anthropic/claude-sonnet-4-5"
    quorum = 2                       # default: a strict majority of the members

    [tool.chimera.routing]
    tool_route = "openai/gpt-4o-mini"    # tool-calling turns: one model (default: models.default)
    default_route = "openai/gpt-4o-mini" # other turns (default: models.default)
    deep_route = "panel:deep"            # plans, reviews, replans, high risk, repeats
    deep_purposes = ["plan", "review", "replan"]
    deep_risk = "high"                   # or "medium", or "none"
    purposes = {summarize = "openai/gpt-4o-mini"}

A *route* is a model name, ``panel:NAME`` (a fusion panel) or ``cascade:NAME`` (a cascade from
``[tool.chimera.cascades]``). The sections live here and are fields of
:class:`chimera.config.ChimeraConfig`; :mod:`chimera.economics.build` turns them into
backends.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chimera.protocols import Purpose


class _Section(BaseModel):
    # Same rules as chimera.config.Section (not imported: chimera.config imports this module).
    model_config = ConfigDict(extra="forbid", validate_default=True)


class PanelConfig(_Section):
    """One fusion panel: members answer, the judge analyses, the synthesizer writes.

    Member names are model names and must be distinct; ``quorum`` defaults to a strict
    majority. ``judge`` and ``synthesizer`` default to the first member.
    """

    members: list[str] = Field(min_length=1)
    judge: str | None = None
    synthesizer: str | None = None
    quorum: int | None = Field(default=None, ge=1)
    judge_max_tokens: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _check(self) -> Self:
        if len(set(self.members)) != len(self.members):
            raise ValueError("members must be distinct model names")
        if self.quorum is not None and self.quorum > len(self.members):
            raise ValueError(f"quorum {self.quorum} exceeds the {len(self.members)} members")
        return self

    def effective_quorum(self) -> int:
        return self.quorum if self.quorum is not None else len(self.members) // 2 + 1


class FusionConfig(_Section):
    """``[tool.chimera.fusion]``: named panels."""

    panels: dict[str, PanelConfig] = Field(default_factory=dict)


class RoutingConfig(_Section):
    """``[tool.chimera.routing]``: which route each kind of call takes.

    Routes are model names, ``panel:NAME`` or ``cascade:NAME``; unset routes mean
    ``models.default``. ``deep_risk = "none"`` turns off risk-based deepening.
    """

    tool_route: str | None = None
    default_route: str | None = None
    deep_route: str | None = None
    deep_purposes: list[Purpose] = Field(
        default_factory=lambda: [Purpose.PLAN, Purpose.REVIEW, Purpose.REPLAN]
    )
    deep_risk: Literal["low", "medium", "high", "none"] = "high"
    deep_on_repeat: bool = True
    purposes: dict[Purpose, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _tool_route_is_one_model(self) -> Self:
        if self.tool_route is not None and self.tool_route.startswith(("panel:", "cascade:")):
            raise ValueError("tool_route must be one model: fusion and cascades do not call tools")
        return self
