"""``chimera crew run``'s one typed call: a crew file and a task in, a crew result and its
receipt out.

The CLI turns argv into a :class:`CrewRunRequest` and hands over the run's audit log; this
module loads and validates the crew, builds each role's budgeted backend (role → crew → run
budget; every backend is built before the first call, so a bad rung or an unpriced model
under a USD budget refuses before anything is spent), governs the read-only tools through
:func:`chimera.orchestration.session_factory.read_only_governance`, runs the crew, optionally
runs the single-agent counterfactual (``baseline``) on the same task, and writes ``crew.json``
in the run folder. Nothing is sent anywhere but the models.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.crews.agent import RoleAgent, RoleBackends, RoleOutput
from chimera.crews.crew import CrewResult, CrewRuntime
from chimera.crews.loader import load_crew
from chimera.crews.memory import CrewMemory
from chimera.crews.model import READ_ONLY_TOOLS, CrewDefinition, Role
from chimera.errors import UsageError
from chimera.protocols import EventSink, SupportsComplete, ToolCaller

if TYPE_CHECKING:
    from chimera.config import ChimeraConfig
    from chimera.economics.workers import WorkerSpend
    from chimera.governance.audit import AuditLog
    from chimera.providers import TokenBudget

__all__ = ["MODEL_ENV", "CrewRunOutcome", "CrewRunRequest", "run_crew"]

MODEL_ENV = "CHIMERA_MODEL"


@dataclass(frozen=True, kw_only=True)
class CrewRunRequest:
    """``chimera crew run``.

    Attributes:
        root: the repository the read-only tools see (resolved).
        config: the effective configuration (flags applied).
        crew_path: the crew file.
        task: what to answer (sanitized by the caller).
        untrusted: the task came from outside: the run is tainted from its first byte.
        baseline: also run one agent alone on the task (the counterfactual, measured).
        events: live progress.
        memory: the roles share the project's memory (``.chimera/memory.db``): each recalls
            from it and writes ``REMEMBER:`` lines through the memory's gate (``--no-memory``:
            neither).
    """

    root: Path
    config: ChimeraConfig
    crew_path: Path
    task: str
    untrusted: bool = False
    baseline: bool = False
    events: EventSink | None = None
    memory: bool = True


@dataclass
class CrewRunOutcome:
    """The crew's result, each role's spend, the baseline (when asked) and ``crew.json``'s
    document (its strings redacted: show it, not ``result``, where the output is kept)."""

    definition: CrewDefinition
    model: str
    result: CrewResult
    spend: list[WorkerSpend]
    baseline: RoleOutput | None = None
    document: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, Any] | None = None


def resolve_model(config: ChimeraConfig) -> str:
    """``models.default`` (``--model`` applied to it), else ``$CHIMERA_MODEL``.

    Raises:
        UsageError: neither is set.
    """
    model = config.models.default or os.environ.get(MODEL_ENV)
    if not model:
        raise UsageError(
            f"no model: pass --model, set [tool.chimera.models] default, or set {MODEL_ENV}"
        )
    return model


def _models(definition: CrewDefinition, rungs: list[str]) -> list[str]:
    out = list(rungs[:1])
    for r in definition.roles:
        if r.model:
            out.append(r.model)
        elif r.rung is not None and r.rung < len(rungs):
            out.append(rungs[r.rung])
    return list(dict.fromkeys(out))


def _tools(request: CrewRunRequest, audit: AuditLog) -> ToolCaller:
    from chimera.orchestration.session_factory import read_only_governance
    from chimera.tools import ToolRegistry, Workspace
    from chimera.tools.native import ListDir, ReadFile, Search

    # Held-out requirements stay unseen by every model, a crew's too.
    folder = request.config.heldout.dir
    ws = Workspace(request.root, hidden=[request.root / folder] if folder else [])
    limit = request.config.tools.output_limit
    registry = ToolRegistry()
    for tool in (ReadFile(ws, limit), ListDir(ws, limit), Search(ws, limit)):
        registry.register(tool)
    assert set(registry.names()) == set(READ_ONLY_TOOLS)
    return read_only_governance(
        request.root, audit, untrusted=request.untrusted, task=request.task
    )(registry)


def run_crew(request: CrewRunRequest, *, audit: AuditLog, run_dir: Path) -> CrewRunOutcome:
    """Run the crew of ``request`` (see the module docstring).

    Raises:
        CrewError: the crew file is invalid (every problem listed).
        UsageError: no model.
        ConfigError: a role's rung is past the ladder, a script is invalid, or a USD budget
            applies to an unpriced model with no token budget.
        AuthenticationError: a real model's key is missing.
        MissingExtraError: LiteLLM is needed and not installed.
    """
    from chimera.atomic import atomic_write_text
    from chimera.governance.redactor import SecretRedactor, cut_redacted
    from chimera.providers import (
        SCRIPTED_PREFIX,
        TokenBudget,
        check_credentials,
        load_dotenv_file,
        make_backend,
    )

    definition = load_crew(request.crew_path)
    config = request.config
    # Tasks, role outputs and answers may quote a credential; crew.json is uploaded with the run.
    redactor = SecretRedactor.from_environment(workspace=request.root)
    model = resolve_model(config)
    rungs = [model, *config.models.ladder]
    real = [m for m in _models(definition, rungs) if not m.startswith(SCRIPTED_PREFIX)]
    if real:
        load_dotenv_file(request.root)
        for m in real:
            check_credentials(m, api_base=config.models.api_base_for(m))

    @functools.cache
    def make(name: str) -> SupportsComplete:
        return make_backend(name, config)

    run_budget = TokenBudget.from_config(config.budget)
    backends = RoleBackends(
        definition,
        run_budget=run_budget,
        make=make,
        default_model=model,
        rungs=rungs,
        audit=audit,
        max_tokens=config.models.max_tokens,
    )
    for role in definition.roles:
        backends.for_role(role)
    tools = _tools(request, audit) if any(r.tools for r in definition.roles) else None
    audit.append(
        "crew.run",
        crew=definition.name,
        source=definition.source,
        kind=definition.process.kind_name,
        model=model,
        task=cut_redacted(request.task, 2000, redactor=redactor),
        untrusted=request.untrusted,
    )
    memory = _memory(request, audit, run_dir, model, run_budget) if request.memory else None
    runtime = CrewRuntime(backends.for_role, tools, audit, request.events, memory=memory)
    try:
        result = definition.build().run(request.task, runtime)
    finally:
        if memory is not None:
            memory.manager.store.close()
    outcome = CrewRunOutcome(definition, model, result, backends.spend())
    outcome.memory = memory.to_json() if memory is not None else None
    if request.baseline:
        outcome.baseline = _baseline(request, definition, backends, tools, audit)
    outcome.document, _ = redactor.redact_json(_document(outcome))
    audit.append("crew.receipt", **outcome.document["receipt"])
    atomic_write_text(run_dir / "crew.json", json.dumps(outcome.document, indent=2) + "\n")
    return outcome


def _memory(
    request: CrewRunRequest,
    audit: AuditLog,
    run_dir: Path,
    model: str,
    run_budget: TokenBudget,
) -> CrewMemory:
    """The crew's shared memory: the project's store, audited to the run's log, its decisions
    made by the crew's model on the run's budget (the same gate a single agent's run uses)."""
    from chimera.memory.part import open_local
    from chimera.orchestration.memory_model import DECISION_TOKENS
    from chimera.providers import budgeted_backend

    manager = open_local(request.root)
    manager.audit = audit
    manager.run_id = run_dir.name
    manager.backend = budgeted_backend(
        model, request.config, run_budget, audit=audit, max_tokens=DECISION_TOKENS
    )
    return CrewMemory(manager, tainted=request.untrusted)


def _baseline(
    request: CrewRunRequest,
    definition: CrewDefinition,
    backends: RoleBackends,
    tools: ToolCaller | None,
    audit: AuditLog,
) -> RoleOutput:
    """One agent alone on the task, on the run's model, with every tool any role has."""
    allowed = sorted({t for r in definition.roles for t in r.tools})
    solo = Role(
        name="solo",
        goal="Answer the task on your own, completely.",
        tools=allowed,
        max_steps=max(r.max_steps for r in definition.roles),
    )
    from chimera.economics.workers import WorkerBudgets

    workers = WorkerBudgets(
        backends.crew_budget.parent or backends.crew_budget,
        default_max_tokens=backends.max_tokens,
        audit=audit,
    )
    backend = workers.backend(
        "solo", backends.make(backends.default_model), model=backends.default_model
    )
    agent = RoleAgent(solo, backend, tools, crew=f"{definition.name}:baseline", audit=audit)
    return agent.run(request.task)


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else round(a / b, 3)


def _document(o: CrewRunOutcome) -> dict[str, Any]:
    r = o.result
    base = o.baseline
    receipt: dict[str, Any] = {
        "crew": r.crew,
        "crew_tokens": r.usage.total_tokens,
        "crew_cost_usd": r.usage.cost_usd,
        "roles": [s.to_json() for s in o.spend],
        "baseline_measured": base is not None,
        "baseline_tokens": base.usage.total_tokens if base else None,
        "baseline_cost_usd": base.usage.cost_usd if base else None,
        "baseline_outcome": base.outcome if base else None,
    }
    receipt["tokens_ratio"] = _ratio(r.usage.total_tokens, receipt["baseline_tokens"])
    receipt["cost_ratio"] = _ratio(r.usage.cost_usd, receipt["baseline_cost_usd"])
    return {
        "model": o.model,
        "source": o.definition.source,
        **r.to_json(),
        "baseline": base.to_json() if base else None,
        "receipt": receipt,
        "memory": o.memory,
    }
