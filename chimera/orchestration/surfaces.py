"""One typed call per surface: ``chimera solve``, ``run``, ``resume``, ``approve`` (and so the
GitHub Action's agent job and ``chimera demo``).

The CLI turns argv and the environment into one request (a frozen dataclass) and renders the
outcome; everything between — validating the request against the tree, building the session
through the :class:`~chimera.orchestration.session_factory.SessionFactory`, running, writing the
run's summary — happens here. Every function takes an optional ``factory``: a caller with packages
to plug in (memory, crews, connectors) passes a factory built with its session parts.

One module of about 440 lines on purpose: the four surfaces share one request/outcome
vocabulary and the private reopen/finish steps a resume and an approval both take; split, each
surface would import the others' privates.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.config import ChimeraConfig
from chimera.errors import UsageError
from chimera.orchestration.parts import default_factory
from chimera.orchestration.session_factory import MODEL_ENV, Session, SessionFactory, resolve_model
from chimera.protocols import EventSink

PARTS_FILE = "parts.jsonl"
"""In a project run's folder: what the session parts reported at the end of each process
(``memory``: recalled and remembered ids; ``learning``: skills and bullets shown)."""

if TYPE_CHECKING:
    from chimera.core.autonomous import SolveResult
    from chimera.meta.profile import Profile
    from chimera.orchestration.basis import Basis
    from chimera.orchestration.project import ProjectOrchestrator
    from chimera.orchestration.state import RunState


def with_agent(
    factory: SessionFactory, config: ChimeraConfig, agent: Profile | None
) -> tuple[SessionFactory, ChimeraConfig]:
    """``factory`` and ``config`` with ``agent``'s profile applied: its
    set values override the configuration, and a :class:`~chimera.meta.part.ProfilePart`
    joins the factory's parts (after them, so its tool allowlist narrows what they add).

    Raises:
        ConfigError: the profile's values are invalid configuration, or its rung is past
            the ladder.
    """
    if agent is None:
        return factory, config
    from chimera.errors import ConfigError
    from chimera.meta.part import ProfilePart

    base = config.models.default or os.environ.get(MODEL_ENV, "")
    try:
        values = agent.overrides([base, *config.models.ladder] if base else [])
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    return SessionFactory([*factory.parts, ProfilePart(agent)]), config.with_overrides(**values)


@dataclass(frozen=True, kw_only=True)
class SolveRequest:
    """``chimera solve``: one verify-or-revert run of the AutonomousAgent.

    Attributes:
        root: the repository (an existing directory, resolved).
        config: the effective configuration (``[tool.chimera]`` with the flags applied).
        task: what to do, in words.
        spec_paths: spec files or directories (absolute, or relative to the working dir).
        targets: requirement ids that must pass (empty: every requirement red now).
        untrusted: the task comes from outside; the run is tainted.
        guard: every tool call goes through the TrustKernel (implied by ``untrusted``).
        review: run the manager review of each attempt.
        memory: recall and record earlier attempts (``.chimera/experience.jsonl`` and the
            memory store); ``--no-memory`` turns it off (measurements compare runs without it).
        learning: skills and the playbook shape the plan (and reflection proposes lessons);
            ``--no-skills`` turns it off and keeps memory; ``--no-learning`` also sets
            ``memory=False``.
        reflection: the Reflector and the Curator propose lessons at the end (one or two model
            calls); ``--no-reflection`` turns only that off (memory, skills, playbook stay).
        events: live progress ``(event, fields)``.
        agent: a profile (``--agent``): its model, budget and kind settings override
            ``config``; its tools, instructions, skills and review crew apply to every agent.
    """

    root: Path
    config: ChimeraConfig
    task: str
    spec_paths: tuple[Path, ...]
    targets: tuple[str, ...] = ()
    untrusted: bool = False
    guard: bool = False
    review: bool = True
    memory: bool = True
    learning: bool = True
    reflection: bool = True
    events: EventSink | None = None
    agent: Profile | None = None


@dataclass(frozen=True)
class SolveOutcome:
    """How ``chimera solve`` ended: the agent's result and the run's record.

    ``summary`` is what ``run_dir/summary.json`` holds; ``denied`` the tool calls the
    TrustKernel refused (``DeniedAction.to_dict`` shapes).
    """

    result: SolveResult
    run_id: str
    run_dir: Path
    audit_head: str
    denied: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


def solve(request: SolveRequest, factory: SessionFactory | None = None) -> SolveOutcome:
    """Run the AutonomousAgent once on ``request`` (see :class:`SolveRequest`).

    Everything that can refuse (no model, no spec files, an unknown target, a missing key, a
    budget without a price, the sandbox mode) refuses before the run folder exists.

    Raises:
        UsageError: no model, no spec files, an unknown target, or the workspace is locked.
        SpecError / ConfigError / AuthenticationError / MissingExtraError / SandboxError:
            as :meth:`SessionFactory.prepare` and ``load_spec`` raise them.
    """
    from chimera.atomic import atomic_write_text
    from chimera.governance.wiring import trusted_commands
    from chimera.orchestration.state import new_run_id, workspace_lock
    from chimera.spec.loader import discover_spec_files, load_spec

    root = request.root
    memory = request.memory  # --no-learning turns both off in the switches
    factory = default_factory(
        factory,
        request.config,
        root=root,
        memory=memory,
        learning=request.learning,
        reflection=request.reflection,
    )
    factory, config = with_agent(factory, request.config, request.agent)
    model = resolve_model(None, config)
    files = discover_spec_files(list(request.spec_paths))
    if not files:
        shown = ", ".join(str(p) for p in request.spec_paths)
        raise UsageError(f"--verify: no spec files (*.yaml, *.yml) in {shown}")
    spec = load_spec(files)
    known = spec.by_id()
    unknown = [t for t in request.targets if t not in known]
    if unknown:
        raise UsageError(f"--target: unknown requirement id(s): {', '.join(unknown)}")
    prepared = factory.prepare(root, config, model)
    run_id = new_run_id()  # the same form as chimera run's
    session = factory.open(
        prepared,
        run_id=run_id,
        events=request.events,
        guard_tools=request.guard,
        experience=memory,
    )
    try:
        if session.heldout is not None:
            from chimera.core.heldout import refuse_overlap

            refuse_overlap(session.heldout.place, files)
        agent, guards = session.agent(
            spec,
            task=request.task,
            untrusted=request.untrusted,
            trusted_commands=trusted_commands(spec),
            review=request.review,
        )
        with workspace_lock(root, owner=f"solve {run_id}"):
            result = agent.solve(
                request.task, list(request.targets) or None, untrusted=request.untrusted
            )
    except BaseException:
        session.finish(None)  # the parts' resources close whatever happened
        raise
    parts = session.finish(result)
    denied = [d.to_dict() for g in guards for d in g.denied]
    audit = session.audit
    if session.heldout is not None and result.outcome == "held":
        # The maintainer's view (the terminal, summary.json under the masked .chimera/runs);
        # the agent was told only that a held-out check failed.
        lines = session.heldout.latest_lines()
        result.final_report += "".join(f"\n{line}" for line in lines)
    summary = result.to_json()
    summary.update(
        {
            "run_id": run_id,
            "audit_head": audit.head_hash,
            "model": result.model,
            "guard": bool(request.guard or request.untrusted),
            "denied_actions": denied,
            **parts,
        }
    )
    if session.heldout is not None:
        summary["heldout"] = [
            {"label": label, **verdict.private()} for label, verdict in session.heldout.verdicts
        ]
    # The run folder is uploaded: a verifier's output, a review or a report may quote a
    # credential that no earlier writer saw whole.
    from chimera.governance.redactor import SecretRedactor

    summary, _ = SecretRedactor.from_environment(workspace=root).redact_json(summary)
    atomic_write_text(session.run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    return SolveOutcome(
        result=result,
        run_id=run_id,
        run_dir=session.run_dir,
        audit_head=audit.head_hash or "",
        denied=denied,
        summary=summary,
    )


@dataclass(frozen=True, kw_only=True)
class RunRequest:
    """``chimera run`` (also the GitHub Action's agent job, and ``chimera demo``).

    Attributes:
        root, config: as :class:`SolveRequest`.
        model: rung 0 of the ladder (recorded in the run state; ``resume`` reuses it).
        spec_paths: spec files or directories relative to ``root``.
        task: the task text (``None``: repair the whole Spec).
        untrusted: the task comes from outside; the run is tainted.
        run_id: the run's id (default: a new one).
        started_by: who started the run (approvers must differ).
        force: start although an interrupted run has not been resumed.
        guard: every tool call goes through the TrustKernel (default ``run.guard``).
        events: live progress ``(event, fields)``.
        agent: a profile (``--agent``), as :class:`SolveRequest`'s (its model replaces
            ``model``).
        memory, learning, reflection: as :class:`SolveRequest`'s (``--no-memory``,
            ``--no-skills``, ``--no-reflection``; ``--no-learning`` sets the first two).
        basis: iterate on an earlier change: the work tree holds it, the goal is judged
            against this commit (:mod:`chimera.orchestration.basis`); ``None``: the tree.
    """

    root: Path
    config: ChimeraConfig
    model: str
    started_by: str
    spec_paths: tuple[str, ...] = ("specs",)
    task: str | None = None
    untrusted: bool = False
    run_id: str | None = None
    force: bool = False
    guard: bool | None = None
    events: EventSink | None = None
    agent: Profile | None = None
    memory: bool = True
    learning: bool = True
    reflection: bool = True
    basis: Basis | None = None


@dataclass(frozen=True, kw_only=True)
class ResumeRequest:
    """``chimera resume RUN_ID`` (and ``approve RUN_ID``): continue a run after a crash, a stop
    or, with :func:`approve_run`, an approval.

    ``model``: rung 0 (default: the model the run recorded). ``memory``, ``learning``,
    ``reflection``: as :class:`RunRequest`'s. ``agent``: the profile the run started with,
    applied again (the caller checks it is the same one: the Action's agent job compares its
    recorded hash).
    """

    root: Path
    config: ChimeraConfig
    run_id: str
    model: str | None = None
    events: EventSink | None = None
    memory: bool = True
    learning: bool = True
    reflection: bool = True
    agent: Profile | None = None


@dataclass(frozen=True)
class RunOutcome:
    """Where a project run stands when this process is done with it."""

    state: RunState
    sandbox: str
    """The sandbox's description (mode and what it confines)."""
    audit_path: Path
    parts: dict[str, Any] = field(default_factory=dict)
    """What the session parts reported at the end (``memory``: recalled and remembered ids)."""


def start_run(request: RunRequest, factory: SessionFactory | None = None) -> RunOutcome:
    """Start a project run (see :class:`RunRequest`).

    Raises:
        UsageError: an absolute or empty ``spec_paths``, an interrupted run not resumed (without
            ``force``), a run id in use (a run is never overwritten).
        ConfigError / AuthenticationError / MissingExtraError / SandboxError / SpecError: as
            :meth:`SessionFactory.prepare` and the orchestrator raise them.
    """
    from chimera.orchestration.state import RunStore, new_run_id
    from chimera.spec.loader import discover_spec_files

    root = request.root
    for p in request.spec_paths:
        if Path(p).is_absolute():
            raise UsageError(f"--spec {p}: give a path relative to the root")
    if not discover_spec_files([root / p for p in request.spec_paths]):
        shown = ", ".join(request.spec_paths)
        raise UsageError(f"--spec: no spec files (*.yaml, *.yml) in {shown}")
    run_id = request.run_id or new_run_id()
    store = RunStore(root)
    store.refuse_existing(run_id)  # before anything is opened under its folder
    if not request.force:
        stale = [r for r in store.interrupted() if r != run_id]
        if stale:
            raise UsageError(
                f"run {stale[-1]} was interrupted and its tree may hold a half-made change: "
                f"'chimera resume {stale[-1]}' first (or pass --force to start anyway)"
            )
    factory = default_factory(
        factory,
        request.config,
        root=root,
        memory=request.memory,
        learning=request.learning,
        reflection=request.reflection,
    )
    factory, config = with_agent(factory, request.config, request.agent)
    model = request.model
    if request.agent is not None and (
        request.agent.fields.model or request.agent.fields.rung is not None
    ):
        model = config.models.default or model
    prepared = factory.prepare(root, config, model)
    guard = config.run.guard if request.guard is None else request.guard
    session = factory.open(prepared, run_id=run_id, events=request.events, guard_tools=guard)
    orchestrator, _ = session.project(request.spec_paths, basis=request.basis)
    return _finished(
        session,
        lambda: orchestrator.start(
            task=request.task,
            started_by=request.started_by,
            untrusted=request.untrusted,
            model=model,
            run_id=run_id,
        ),
    )


def resume_run(request: ResumeRequest, factory: SessionFactory | None = None) -> RunOutcome:
    """Continue run ``request.run_id`` (reverting a card in flight at a crash).

    Raises:
        UsageError: no such run, it awaits approval, it recorded no model and none is given,
            or another process is working on it.
    """
    session, orchestrator = _reopen(request, factory)
    return _finished(session, lambda: orchestrator.resume(request.run_id))


def approve_run(
    request: ResumeRequest, *, by: str, factory: SessionFactory | None = None
) -> RunOutcome:
    """Approve run ``request.run_id``'s held change(s) by ``by`` and continue it.

    Raises:
        UsageError: as :func:`resume_run`; the run is not awaiting approval; ``by`` started it
            (unless self-approval is configured).
    """
    session, orchestrator = _reopen(request, factory)
    return _finished(session, lambda: orchestrator.approve(request.run_id, by=by))


def _reopen(
    request: ResumeRequest, factory: SessionFactory | None
) -> tuple[Session, ProjectOrchestrator]:
    from chimera.orchestration.state import RunStore

    state = RunStore(request.root).load(request.run_id)
    model = request.model or state.model
    if not model:
        raise UsageError(f"run {request.run_id} recorded no model; pass --model")
    factory = default_factory(
        factory,
        request.config,
        root=request.root,
        memory=request.memory,
        learning=request.learning,
        reflection=request.reflection,
    )
    factory, config = with_agent(factory, request.config, request.agent)
    if request.agent is not None and (
        request.agent.fields.model or request.agent.fields.rung is not None
    ):
        model = config.models.default or model
    # What earlier processes spent comes off the budget: a resumed run's budget holds whole.
    prepared = factory.prepare(
        request.root,
        config,
        model,
        spent_tokens=state.tokens,
        spent_usd=state.cost_usd,
    )
    session = factory.open(
        prepared,
        run_id=state.run_id,
        events=request.events,
        guard_tools=config.run.guard,
    )
    orchestrator, _ = session.project(state.spec_paths)
    return session, orchestrator


def _finished(session: Session, go: Callable[[], RunState]) -> RunOutcome:
    try:
        state = go()
    except BaseException:
        session.finish(None)  # the parts' resources close whatever happened
        raise
    parts = session.finish(state)
    if parts:
        # One line per process of the run (a resume or an approval adds one).
        with (session.run_dir / PARTS_FILE).open("a", encoding="utf-8") as out:
            out.write(json.dumps({"run_id": session.run_id, **parts}, sort_keys=True) + "\n")
    return RunOutcome(
        state=state,
        sandbox=session.sandbox_description,
        audit_path=session.audit.path,
        parts=parts,
    )
