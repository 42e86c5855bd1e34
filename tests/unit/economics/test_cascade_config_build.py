"""[tool.chimera] sections for panels, routing, cascades, effort, hierarchy; the builder."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from chimera.config import ChimeraConfig, load_config
from chimera.economics import CascadeBackend
from chimera.economics.bench import Distribution, percentile
from chimera.economics.build import EngineBuilder, required_keys_model
from chimera.errors import ConfigError
from chimera.fusion import FusionEngine, RoutedBackend
from chimera.protocols import Completion, Message, Purpose, SupportsComplete, ToolSchema
from chimera.providers import ScriptedBackend
from chimera.spec.model import Risk

PYPROJECT = """
[tool.chimera.models]
default = "m-small"

[tool.chimera.fusion.panels.deep]
members = ["m-a", "m-b", "m-c"]
judge = "m-a"
synthesizer = "m-b"

[tool.chimera.routing]
deep_route = "cascade:main"
deep_risk = "medium"
purposes = {summarize = "m-small"}

[tool.chimera.cascades.main]
on_exhausted = "last"
[[tool.chimera.cascades.main.tiers]]
name = "weak"
route = "m-small"
gates = [{kind = "schema", required = ["steps"]}, {kind = "criteria", must_match = ["edit"]}]
[[tool.chimera.cascades.main.tiers]]
name = "fusion"
route = "panel:deep"

[tool.chimera.effort]
attempts_per_rung = 3
[tool.chimera.effort.purposes]
act = "low"

[tool.chimera.hierarchy]
worker_model = "m-small"
per_worker_tokens = 5000
spot_check_rate = 0.25
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(text)
    return tmp_path


def test_the_sections_load_from_pyproject(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, PYPROJECT))
    assert config.fusion.panels["deep"].effective_quorum() == 2
    assert config.routing.deep_risk == "medium"
    assert config.cascades["main"].tiers[0].gates[0].kind == "schema"
    assert config.effort.purpose_levels()[Purpose.ACT] == "low"
    assert config.hierarchy.per_worker_tokens == 5000


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        ("[tool.chimera.fusion.panels.p]\nmembers = ['a', 'a']\n", "members must be distinct"),
        ("[tool.chimera.fusion.panels.p]\nmembers = ['a']\nquorum = 2\n", "quorum 2 exceeds"),
        ("[tool.chimera.routing]\ntool_route = 'panel:deep'\n", "tool_route must be one model"),
        (
            "[tool.chimera.cascades.c]\ntiers = [{name = 'a', route = 'cascade:c'}]\n",
            "not another cascade",
        ),
        (
            "[tool.chimera.cascades.c]\ntiers = [{name = 'a', route = 'm', gates = "
            "[{kind = 'vibes'}]}]\n",
            "tool.chimera.cascades.c.tiers.0.gates.0",
        ),
        ("[tool.chimera.effort]\nrepeat_level = 'max'\n", "level(s) max are used but not"),
        ("[tool.chimera.hierarchy]\nspot_check_rate = 2\n", "spot_check_rate"),
        ("[tool.chimera.fusion]\npanel = {}\n", "unknown key (did you mean 'panels'?)"),
    ],
)
def test_invalid_sections_are_one_line_errors(tmp_path: Path, snippet: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"pyproject.toml: ") as info:
        load_config(write(tmp_path, snippet))
    assert message in str(info.value)


class Named:
    """A leaf backend that says which model answered."""

    def __init__(self, model: str) -> None:
        self.model = model

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        return Completion(text=f'{{"steps": ["edit by {self.model}"]}}', model=self.model)


def test_builder_wires_router_cascade_and_panel(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, PYPROJECT))
    built: list[str] = []

    def leaf(model: str) -> SupportsComplete:
        built.append(model)
        return Named(model)

    builder = EngineBuilder(config, leaf)
    router = builder.router()
    assert isinstance(router, RoutedBackend)
    assert set(router.routes) == {"m-small", "cascade:main"}
    cascade = router.routes["cascade:main"]
    assert isinstance(cascade, CascadeBackend) and cascade.on_exhausted == "last"
    assert isinstance(cascade.tiers[1].backend, FusionEngine)
    assert cascade.tiers[1].backend.quorum == 2
    assert sorted(set(built)) == ["m-a", "m-b", "m-c", "m-small"]
    plan = router.complete([{"role": "user", "content": "plan"}], purpose=Purpose.PLAN)
    assert plan.raw is not None and plan.raw["cascade"]["answered_by"] == "weak"
    policy = router.policy
    assert policy.deep_risk is Risk.MEDIUM and policy.tool_route == "m-small"
    effort = builder.effort_policy(rungs=2)
    assert effort.attempts_per_rung == 3 and effort.rungs == 2


def test_builder_names_undefined_panels_and_missing_defaults() -> None:
    config = ChimeraConfig.model_validate(
        {"models": {"default": "m"}, "routing": {"deep_route": "panel:nope"}}
    )
    with pytest.raises(ConfigError, match="panel:nope: no such panel \\(defined: none\\)"):
        EngineBuilder(config, lambda m: ScriptedBackend([])).router()
    with pytest.raises(ConfigError, match=r"models\.default is empty"):
        EngineBuilder(ChimeraConfig(), lambda m: ScriptedBackend([])).router()


def test_required_keys_model_accepts_any_values_under_the_keys() -> None:
    model = required_keys_model(["steps", "risk level"])
    model.model_validate({"steps": [1], "risk level": None, "extra": 1})
    with pytest.raises(ValueError, match="risk level"):
        model.model_validate({"steps": []})


def test_percentiles_and_unknown_costs() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 99) == pytest.approx(99.01)
    assert percentile([3.0], 95) == 3.0 and math.isnan(percentile([], 50))
    assert Distribution.of([1.0, None]).p50 is None
    d = Distribution.of([0.1, 0.2, 0.3])
    assert (d.p50, d.total) == pytest.approx((0.2, 0.6))
    assert json.dumps(vars(d))


def test_ladder_rungs_route_tool_turns_to_their_own_model(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, PYPROJECT))
    builder = EngineBuilder(config, Named)
    weak, strong = builder.ladder(["m-small", "m-big"])
    assert isinstance(weak, RoutedBackend) and isinstance(strong, RoutedBackend)
    tool = {"type": "function", "function": {"name": "f", "parameters": {}}}
    act = strong.complete([{"role": "user", "content": "x"}], tools=[tool])
    assert act.model == "m-big"
    plan = strong.complete([{"role": "user", "content": "x"}], purpose=Purpose.PLAN)
    assert plan.raw is not None and plan.raw["route"]["route"] == "cascade:main"
    # The deep route is built once and shared by every rung.
    assert weak.routes["cascade:main"] is strong.routes["cascade:main"]
    plain = EngineBuilder(ChimeraConfig(), Named).ladder(["a", "b"])
    assert [type(b).__name__ for b in plain] == ["Named", "Named"]
