"""RoleAgent: the tool-calling :class:`~chimera.core.agent.Agent` under one role.

Each role runs the same Agent loop every surface uses, on a backend that reserves on the
role's own budget (nested under the crew's and the run's: :class:`RoleBackends`, through
:class:`~chimera.economics.workers.WorkerBudgets`), with the run's tools filtered to the role's
allowlist (:class:`FilteredTools`: a name outside it is neither shown nor callable, so a
role's tools are never wider than its file says). Every model call and tool call is an audit
event carrying the crew, the role and the round.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chimera.core.agent import Agent, AgentResult, Outcome, UsageTotals
from chimera.crews.model import CrewDefinition, Role
from chimera.errors import ConfigError
from chimera.governance.sanitize import fence_untrusted
from chimera.protocols import (
    AuditSink,
    EventSink,
    Purpose,
    SupportsComplete,
    ToolCaller,
    ToolResult,
)

if TYPE_CHECKING:
    from chimera.economics.workers import WorkerSpend
    from chimera.governance.audit import AuditLog
    from chimera.protocols import ToolSchema
    from chimera.providers import TokenBudget

__all__ = ["FilteredTools", "RoleAgent", "RoleBackends", "RoleOutput"]


class FilteredTools:
    """``base`` narrowed to ``allowed``: only those tools are listed and callable."""

    def __init__(self, base: ToolCaller | None, allowed: Sequence[str]) -> None:
        self.base = base
        self.allowed = frozenset(allowed)

    def schemas(self) -> list[ToolSchema]:
        if self.base is None or not self.allowed:
            return []
        return [s for s in self.base.schemas() if s.get("function", {}).get("name") in self.allowed]

    def call(self, name: str, arguments: Any) -> ToolResult:
        if self.base is None or name not in self.allowed:
            return ToolResult(f"error: tool {name!r} is not allowed for this role", ok=False)
        return self.base.call(name, arguments)


@dataclass(frozen=True)
class RoleOutput:
    """What one role produced in one round.

    Attributes:
        role: the role's name; ``round``: 1-based.
        text: its answer — the final text, or for a loop stopped early its last non-empty
            text (a partial answer, never silently nothing).
        outcome: the Agent's outcome (``finished``, ``step_limit``, ``token_limit``,
            ``budget``, ``error``).
        usage: tokens and cost of its calls; ``model``: the model that answered last.
        error: why it stopped early ('' when finished).
    """

    role: str
    round: int
    text: str
    outcome: Outcome
    usage: UsageTotals = field(default_factory=UsageTotals)
    model: str = ""
    error: str = ""
    steps: int = 0

    @property
    def finished(self) -> bool:
        return self.outcome == "finished"

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "round": self.round,
            "outcome": self.outcome,
            "text": self.text,
            "error": self.error,
            "model": self.model,
            "steps": self.steps,
            **self.usage.to_json(),
        }


def _last_text(result: AgentResult) -> str:
    if result.final_text.strip():
        return result.final_text
    for m in reversed(result.transcript.messages):
        if m.get("role") == "assistant" and str(m.get("content") or "").strip():
            return str(m["content"])
    return ""


class RoleAgent:
    """One role's agent: its system prompt, its budgeted backend, its allowlisted tools.

    Args:
        role: the role.
        backend: the role's backend (already budgeted: :meth:`RoleBackends.for_role`).
        tools: the run's (governed) tools, or ``None``; the role sees its allowlist of them.
        crew: the crew's name (in audit events).
        audit: receives ``crew.call`` / ``crew.tool`` / ``crew.budget_stop`` events.
        events: live progress (the same events).
        purpose: the purpose of its calls (routers and cascades key on it).
    """

    def __init__(
        self,
        role: Role,
        backend: SupportsComplete,
        tools: ToolCaller | None = None,
        *,
        crew: str = "",
        audit: AuditSink | None = None,
        events: EventSink | None = None,
        purpose: Purpose = Purpose.ACT,
    ) -> None:
        self.role = role
        self.purpose = purpose
        self.backend = backend
        self.tools = FilteredTools(tools, role.tools)
        self.crew = crew
        self.audit = audit
        self.events = events

    def run(
        self,
        task: str,
        *,
        context: str = "",
        round: int = 1,
        system_extra: str = "",
        memory: str = "",
    ) -> RoleOutput:
        """Run the role's loop on ``task`` with ``context`` (a consolidation, never a pile of
        earlier outputs) and ``memory`` (the crew's shared memory recalled for the task, as
        :mod:`chimera.memory.render` renders it). Budget refusals and provider errors end the
        loop with that outcome (the Agent's contract); nothing raises for them."""
        user = f"## Task\n{task}"
        if context.strip():
            # The roles' answers are model output (they may have read untrusted text): the
            # consolidation is data, fenced, never instructions to this role.
            found = fence_untrusted(context, "crew findings")
            user += f"\n\n## What the crew has found so far (consolidated)\n{found}"
        if memory.strip():
            user += f"\n\n{memory}"
        messages = [
            {"role": "system", "content": self.role.system_prompt(system_extra)},
            {"role": "user", "content": user},
        ]

        def on_event(event: str, fields: dict[str, Any]) -> None:
            if event == "model_call":
                self._emit(
                    "crew.call",
                    round=round,
                    model=fields.get("model", ""),
                    prompt_tokens=fields.get("prompt_tokens", 0),
                    completion_tokens=fields.get("completion_tokens", 0),
                    cost_usd=fields.get("cost_usd"),
                )
            elif event == "tool_call":
                self._emit("crew.tool", round=round, name=fields["name"], ok=fields["ok"])
            elif event == "budget_stop":
                self._emit("crew.budget_stop", round=round, reason=fields.get("reason", ""))

        agent = Agent(
            self.backend,
            self.tools,
            max_steps=self.role.max_steps,
            purpose=self.purpose,
            on_event=on_event,
        )
        result = agent.run(messages)
        last_model = next(
            (s.model for s in reversed(result.transcript.steps) if s.model),
            str(getattr(self.backend, "model", "")),
        )
        return RoleOutput(
            role=self.role.name,
            round=round,
            text=_last_text(result).strip(),
            outcome=result.outcome,
            usage=result.usage,
            model=last_model,
            error=result.error,
            steps=result.steps,
        )

    def _emit(self, event: str, **fields: Any) -> None:
        fields = {"crew": self.crew, "role": self.role.name, **fields}
        if self.audit is not None:
            self.audit.append(event, **fields)
        if self.events is not None:
            self.events(event, fields)


class RoleBackends:
    """A budgeted backend per role: role budget → crew budget → run budget.

    Args:
        definition: the crew.
        run_budget: the run's budget; the crew's ceiling is a child of it, each role's a
            child of the crew's (a :class:`~chimera.economics.workers.WorkerBudgets`).
        make: a model name to an *unbudgeted* backend (cache it: roles that share a model
            share one backend, so a scripted model's turns are consumed in one order).
        default_model: the model of a role that names neither ``model`` nor ``rung``.
        rungs: the run's ladder (``rung: N`` is ``rungs[N]``); default ``[default_model]``.
        shared: a backend *already* budgeted on the run (the rung an AutonomousAgent hands
            its reviewer). Roles without a model of their own use it; their role and crew
            ceilings then sit on a detached budget so the run is not charged twice.
        audit: budget refusals and overruns are audit events.
        max_tokens: the completion cap of a role's call.
    """

    def __init__(
        self,
        definition: CrewDefinition,
        *,
        run_budget: TokenBudget,
        make: Callable[[str], SupportsComplete],
        default_model: str,
        rungs: Sequence[str] = (),
        shared: SupportsComplete | None = None,
        audit: AuditLog | None = None,
        max_tokens: int = 2048,
    ) -> None:
        from chimera.providers import TokenBudget

        self.definition = definition
        self.make = make
        self.default_model = default_model
        self.rungs = list(rungs) or [default_model]
        self.shared = shared
        self.audit = audit
        self.max_tokens = max_tokens
        b = definition.budget
        self.crew_budget = run_budget.child(f"crew:{definition.name}", b.tokens, b.usd)
        self._detached = TokenBudget(b.tokens, b.usd, name=f"crew:{definition.name}")
        self._lock = threading.Lock()
        self._backends: dict[str, SupportsComplete] = {}
        self._spend: list[Callable[[], list[WorkerSpend]]] = []

    def model_of(self, role: Role) -> str | None:
        """The model a role runs on; ``None`` when it uses the shared backend.

        Raises:
            ConfigError: ``rung`` is past the end of the ladder.
        """
        if role.model is not None:
            return role.model
        if role.rung is not None:
            if role.rung >= len(self.rungs):
                raise ConfigError(
                    f"{self.definition.source}: role '{role.name}': rung {role.rung} but the "
                    f"run's ladder has {len(self.rungs)} rung(s): {', '.join(self.rungs)}"
                )
            return self.rungs[role.rung]
        return None if self.shared is not None else self.default_model

    def for_role(self, role: Role) -> SupportsComplete:
        """The role's budgeted backend (the same object on every call).

        Raises:
            ConfigError: a bad rung, an invalid script, or a USD ceiling on an unpriced model
                with no token ceiling.
            MissingExtraError: LiteLLM is needed and not installed.
        """
        from chimera.economics.workers import WorkerBudgets

        with self._lock:
            if role.name in self._backends:
                return self._backends[role.name]
            model = self.model_of(role)
            if model is None:
                assert self.shared is not None
                inner, parent = self.shared, self._detached
                model = str(getattr(self.shared, "model", self.default_model))
            else:
                inner, parent = self.make(model), self.crew_budget
            workers = WorkerBudgets(
                parent,
                per_worker_tokens=role.budget.tokens,
                per_worker_usd=role.budget.usd,
                default_max_tokens=self.max_tokens,
                audit=self.audit,
            )
            backend = workers.backend(role.name, inner, model=model)
            self._backends[role.name] = backend
            self._spend.append(workers.spend)
            return backend

    def spend(self) -> list[WorkerSpend]:
        """Each role's settled spend, in the order the roles first called."""
        with self._lock:
            getters = list(self._spend)
        return [s for get in getters for s in get()]
