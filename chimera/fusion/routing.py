"""RoutedBackend + RoutingPolicy: cost-aware routing by the purpose each call carries.

Fusion stays selective: tool-calling turns always go to one model (fusion and cascades judge
answers, they do not call tools), and only deep or high-stakes reasoning turns — plans,
manager reviews, replans, anything at high risk or after a repeated failure signature — go to
the expensive route (a :class:`~chimera.fusion.engine.FusionEngine` or a cascade). Because
:class:`RoutedBackend` is itself a ``SupportsComplete``, it plugs into the Agent and the
AutonomousAgent unchanged, and it is how a panel or cascade becomes one rung of the escalation
ladder while that rung's tool turns still go to a single model. (AURORA-AI: adaptive budget
allocation across heterogeneous models; OpenRouter Fusion for the deep route.)

Every decision is an audit event ``route.decision`` with the route and its reason.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chimera.call_context import CallContext, current_context
from chimera.errors import ConfigError
from chimera.fusion.accounting import SupportsAudit
from chimera.protocols import Completion, Message, Purpose, Risk, SupportsComplete, ToolSchema

_RISK_ORDER = {Risk.LOW: 0, Risk.MEDIUM: 1, Risk.HIGH: 2}

DEEP_PURPOSES = frozenset({Purpose.PLAN, Purpose.REVIEW, Purpose.REPLAN})


@dataclass(frozen=True, slots=True)
class RouteDecision:
    """Where one call goes and why (the reason is one human sentence)."""

    route: str
    reason: str


@dataclass(frozen=True, slots=True)
class RoutingPolicy:
    """Decides the route of a call from its tools, purpose and :class:`CallContext`.

    Rules, first match wins:

    1. tool schemas present → ``tool_route`` (tool turns go to one model);
    2. ``purpose_routes[purpose]`` when set (an explicit override);
    3. a deep purpose (``deep_purposes``: plan, review, replan by default) → ``deep_route``;
    4. risk at or above ``deep_risk`` → ``deep_route``;
    5. a repeated failure signature and ``deep_on_repeat`` → ``deep_route``;
    6. otherwise ``default_route``.

    With ``deep_route`` unset, rules 3–5 fall through to ``default_route``.
    """

    tool_route: str
    default_route: str
    deep_route: str | None = None
    deep_purposes: frozenset[Purpose] = DEEP_PURPOSES
    deep_risk: Risk | None = Risk.HIGH
    deep_on_repeat: bool = True
    purpose_routes: Mapping[Purpose, str] = field(default_factory=dict)

    def route_names(self) -> set[str]:
        """Every route name this policy can choose."""
        names = {self.tool_route, self.default_route, *self.purpose_routes.values()}
        if self.deep_route is not None:
            names.add(self.deep_route)
        return names

    def decide(self, *, tools: int, purpose: Purpose, ctx: CallContext) -> RouteDecision:
        """Choose the route of a call with ``tools`` tool schemas, ``purpose`` and ``ctx``."""
        if tools:
            return RouteDecision(
                self.tool_route, f"{tools} tool schema(s): tool turns go to one model"
            )
        if purpose in self.purpose_routes:
            return RouteDecision(
                self.purpose_routes[purpose], f"purpose {purpose.value} has an explicit route"
            )
        if self.deep_route is not None:
            if purpose in self.deep_purposes:
                return RouteDecision(
                    self.deep_route, f"purpose {purpose.value} is a deep reasoning turn"
                )
            if self.deep_risk is not None and _RISK_ORDER[ctx.risk] >= _RISK_ORDER[self.deep_risk]:
                return RouteDecision(
                    self.deep_route, f"risk {ctx.risk.value} is at or above {self.deep_risk.value}"
                )
            if self.deep_on_repeat and ctx.repeated_signature is not None:
                return RouteDecision(
                    self.deep_route,
                    f"failure signature repeated ({ctx.repeated_signature[:60]})",
                )
        return RouteDecision(
            self.default_route, f"purpose {purpose.value} without tools: default route"
        )


class RoutedBackend:
    """A ``SupportsComplete`` that sends each call to the route its policy chooses.

    Args:
        routes: route name → backend; must cover every name the policy can choose.
        policy: the :class:`RoutingPolicy`.
        audit: optional audit log (event ``route.decision``).

    ``decisions`` keeps every decision made, in order (thread-safe), for summaries and tests.
    The returned completion is the route's, with ``raw["route"] = {"route", "reason"}`` added.

    Raises:
        ConfigError: a route the policy can choose has no backend.
    """

    def __init__(
        self,
        routes: Mapping[str, SupportsComplete],
        policy: RoutingPolicy,
        *,
        audit: SupportsAudit | None = None,
    ) -> None:
        missing = sorted(policy.route_names() - set(routes))
        if missing:
            raise ConfigError(
                f"routing: route(s) {', '.join(missing)} have no backend "
                f"(defined: {', '.join(sorted(routes)) or 'none'})"
            )
        self.routes = dict(routes)
        self.policy = policy
        self.audit = audit
        self._lock = threading.Lock()
        self.decisions: list[RouteDecision] = []
        deep = f", deep: {policy.deep_route}" if policy.deep_route else ""
        self.model = f"routed(tools: {policy.tool_route}{deep})"
        """What this backend reports as its model (summaries, the agent's progress lines)."""

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        """Route the call, then delegate it unchanged to the chosen backend."""
        ctx = current_context()
        decision = self.policy.decide(tools=len(tools or ()), purpose=purpose, ctx=ctx)
        with self._lock:
            self.decisions.append(decision)
        if self.audit is not None:
            self.audit.append(
                "route.decision",
                route=decision.route,
                reason=decision.reason,
                purpose=purpose.value,
                tools=len(tools or ()),
                risk=ctx.risk.value,
                attempt=ctx.attempt,
                repeated_signature=ctx.repeated_signature,
            )
        out = self.routes[decision.route].complete(
            messages, tools=tools, purpose=purpose, max_tokens=max_tokens
        )
        raw: dict[str, Any] = dict(out.raw or {})
        raw["route"] = {"route": decision.route, "reason": decision.reason}
        return Completion(
            text=out.text, tool_calls=out.tool_calls, usage=out.usage, model=out.model, raw=raw
        )
