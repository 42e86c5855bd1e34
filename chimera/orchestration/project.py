"""ProjectOrchestrator: run a whole project against its Spec until it holds, or say why not.

(DESIGN.md, "Flow of one autonomous change", steps 2-3.) The loop::

    base check_drift → goal (task: acceptance requirements; repair: the whole spec)
    → task graph (one card per unmet requirement, depends_on ordering, risky cards last)
    → for each ready card: snapshot → CardSolver (the AutonomousAgent) → check_drift
      (a card is accepted ONLY by check_drift: its requirement passes and nothing that
      passed on the base turned red) → risky? pause for a human : accept
    → requirements still unmet spawn the next cards
    → stop: goal met | budget (tokens, cost) | wall time | max iterations | human checkpoint
      | cards failed — every stop names which.

Durability: the run state is rewritten atomically before and after every card, with the
card in flight and its workspace snapshot; ``resume`` after a crash or ``kill -9`` reverts
that card's partial work, rewinds a scripted model to where the card started, and redoes the
card — accepted cards are never redone and no change is applied twice. A card's snapshot is
discarded only after the state that no longer needs it is saved, so a state's card in flight
always has its snapshot. One process at a time works on a run (``RunStore.lock``); on taking
the lock it clears what a killed process left in the snapshot store (stale git locks).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pathspec

from chimera.atomic import atomic_write_text
from chimera.config.run import DEFAULT_HIGH_RISK_PATHS
from chimera.core.heldout import HELD_OUTCOME, PUBLIC_MESSAGE, HeldOutGate
from chimera.errors import ChimeraError, SpecError, UsageError
from chimera.governance.wiring import trusted_commands
from chimera.orchestration.basis import BASIS_KEY, Basis, base_spec, block_ids
from chimera.orchestration.goal import (
    Goal,
    extract_spec_blocks,
    spec_tampering,
    vet_acceptance,
)
from chimera.orchestration.graph import Card, CardStatus, TaskGraph
from chimera.orchestration.state import (
    Approval,
    InFlight,
    RunState,
    RunStatus,
    RunStore,
    StopReason,
    new_run_id,
    now_iso,
)
from chimera.runner import CommandRunner
from chimera.spec.drift import check_drift
from chimera.spec.engine.options import EngineOptions
from chimera.spec.model import Requirement, Risk, Spec
from chimera.spec.results import DriftReport


@dataclass(frozen=True)
class CardOutcome:
    """What the solver reports for one card.

    Attributes:
        verdict: ``solved`` (its own verification passed), ``hollow`` (passed with an empty
            diff), ``failed`` (attempts exhausted), ``budget`` (a budget refused a call),
            ``error`` (the solver could not run).
        attempts: attempts spent.
        tokens: tokens used by the card's model calls.
        cost_usd: their cost, ``None`` when a price is unknown.
        summary: one line (the last failure's cause for red verdicts).
        denied_actions: actions the governance layer denied for review.
        budget_limit: for ``budget``, the ceiling that refused: ``tokens`` or ``usd``.
        suspicion: the solver's suspicion line (:class:`chimera.core.heldout.Suspicion`).
    """

    verdict: str
    attempts: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0
    summary: str = ""
    denied_actions: tuple[dict[str, Any], ...] = ()
    budget_limit: str | None = None
    suspicion: str = ""


@dataclass(frozen=True)
class ChangeSummary:
    """Paths a card changed since its snapshot (for the human-checkpoint rules)."""

    touched: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()


class CardSolver(Protocol):
    """Solves one card (the AutonomousAgent behind an adapter)."""

    def solve_card(
        self,
        card: Card,
        requirement: Requirement,
        *,
        state: RunState,
        spec: Spec,
        base: DriftReport,
    ) -> CardOutcome:
        """Make ``requirement`` pass in the workspace (leaving the change in place on success).

        ``spec`` is the Spec the card was read from and ``base`` the whole Spec's report on
        the tree before the card: the solver checks nothing again before it starts.
        """
        ...

    def checkpoint(self) -> int | None:
        """An opaque position of the model backend (scripted replay), or ``None``."""
        ...

    def rewind(self, position: int | None) -> None:
        """Return the backend to ``position`` (no-op for real models)."""
        ...


class Snapshots(Protocol):
    """Workspace snapshots (WorkspaceGuard behind an adapter)."""

    def snapshot(self, label: str) -> str: ...

    def restore(self, snapshot_id: str) -> None: ...

    def changes(self, snapshot_id: str) -> ChangeSummary: ...

    def discard(self, snapshot_id: str) -> None: ...

    def recover(self) -> list[str]:
        """Clear what a killed process left in the store; called only under the run lock."""
        ...


class AuditSink(Protocol):
    def append(self, event: str, /, **fields: Any) -> dict[str, Any]: ...

    @property
    def head_hash(self) -> str | None: ...


class AcceptanceWriter(Protocol):
    """Writes acceptance requirements (a ``chimera`` YAML block) for a task without one."""

    def write_acceptance(self, task: str, spec: Spec) -> str: ...


@dataclass
class RunLimits:
    """Stops of a run other than the goal: iterations, wall time, token and USD budgets."""

    max_iterations: int = 20
    max_wall_s: float | None = None
    budget_tokens: int | None = None
    budget_usd: float | None = None


@dataclass
class OrchestratorOptions:
    limits: RunLimits = field(default_factory=RunLimits)
    high_risk_paths: Sequence[str] = DEFAULT_HIGH_RISK_PATHS
    allow_self_approval: bool = False
    task_spec_name: str | None = None
    # The Spec engine's limits for every acceptance check ([tool.chimera.check]).
    check_options: EngineOptions | None = None
    # Held-out requirements ([tool.chimera.heldout]): a card passing the visible checks is
    # accepted only when they pass too.
    heldout: HeldOutGate | None = None
    # Iterating on an earlier change (a review re-run): the goal is judged against this
    # commit, not the tree the run starts from (chimera.orchestration.basis).
    basis: Basis | None = None


SpecLoader = Callable[[Sequence[Path]], Spec]


class ProjectOrchestrator:
    """Runs cards until the goal passes or a stop fires (see module docstring).

    Args:
        root: the workspace (repository root).
        spec_paths: spec files/directories, relative to ``root`` or absolute.
        solver: solves one card at a time.
        snapshots: workspace snapshots for revert-on-failure and resume.
        runner: runs ``command`` checks during acceptance (the sandbox in autonomous runs).
        store: where run state lives.
        audit: the run's audit log.
        load_spec: loads and validates a Spec (``chimera.spec.loader.load_spec``).
        acceptance_writer: writes acceptance requirements when a task has no spec block.
        on_event: progress callback ``(event, fields)`` for live output.
    """

    def __init__(
        self,
        *,
        root: Path,
        spec_paths: Sequence[str],
        solver: CardSolver,
        snapshots: Snapshots,
        runner: CommandRunner,
        store: RunStore,
        audit: AuditSink,
        load_spec: SpecLoader,
        options: OrchestratorOptions | None = None,
        acceptance_writer: AcceptanceWriter | None = None,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.root = root
        self.spec_paths = list(spec_paths)
        self.solver = solver
        self.snapshots = snapshots
        self.runner = runner
        self.store = store
        self.audit = audit
        self._load_spec = load_spec
        self.options = options or OrchestratorOptions()
        self.acceptance_writer = acceptance_writer
        self.on_event = on_event
        self._risk_spec = pathspec.GitIgnoreSpec.from_lines(self.options.high_risk_paths)
        self._started = time.monotonic()
        self._elapsed_before = 0.0
        # Requirements red on the basis commit (this process's base checks), by id.
        self._basis_red: dict[str, Any] = {}

    # -- helpers ---------------------------------------------------------------------------

    def _emit(self, event: str, **fields: Any) -> None:
        self.audit.append(event, **fields)
        if self.on_event is not None:
            self.on_event(event, fields)

    def _spec(self) -> Spec:
        return self._load_spec([self.root / p for p in self.spec_paths])

    def _drift(self, spec: Spec, ids: Sequence[str] | None = None) -> DriftReport:
        report = check_drift(
            spec, self.root, runner=self.runner, only=ids, options=self.options.check_options
        )
        self._emit(
            "check_drift",
            counts=report.counts(),
            red={r.id: r.status.value for r in report.red},
        )
        return report

    def _base_drift(
        self, state: RunState, spec: Spec, ids: Sequence[str] | None = None
    ) -> DriftReport:
        """The base report: the work tree now, or the basis commit's tree when iterating."""
        commit = state.extra.get(BASIS_KEY)
        if not commit:
            return self._drift(spec, ids)
        report = Basis(str(commit)).report(
            self.root, spec, runner=self.runner, only=ids, options=self.options.check_options
        )
        self._basis_red.update({r.id: r for r in report.red})
        red = {r.id: r.status.value for r in report.red}
        self._emit("check_drift", counts=report.counts(), red=red, basis=commit)
        return report

    def _save(self, state: RunState, graph: TaskGraph) -> None:
        state.cards = graph.to_json()
        state.elapsed_s = self._elapsed_before + (time.monotonic() - self._started)
        state.audit_head = self.audit.head_hash
        self.store.save(state)

    @contextmanager
    def _owning(self, run_id: str) -> Iterator[None]:
        """Hold the run lock; clear a dead process's leftovers in the snapshot store first."""
        with self.store.lock(run_id):
            cleared = self.snapshots.recover()
            if cleared:
                self._emit("stale_files_cleared", store="snapshots", files=cleared)
            yield

    def _stop(
        self,
        state: RunState,
        graph: TaskGraph,
        status: RunStatus,
        reason: StopReason,
        detail: str,
    ) -> RunState:
        state.status = status
        state.stop_reason = reason
        line = _suspicion_line(state)
        state.stop_detail = detail + (f"\n  {line}" if line else "")
        self._emit("run_stopped", status=status.value, reason=reason.value, detail=detail)
        self._save(state, graph)
        return state

    # -- entry points ----------------------------------------------------------------------

    def start(
        self,
        *,
        task: str | None,
        started_by: str,
        untrusted: bool = False,
        model: str | None = None,
        run_id: str | None = None,
    ) -> RunState:
        """Start a new run: a task run when ``task`` is given, else a repair run.

        Raises:
            UsageError: another process is working on a run with this id, or a run was
                already recorded under it (it is never overwritten).
        """
        run_id = run_id or new_run_id()
        self.store.refuse_existing(run_id)
        with self._owning(run_id):
            self.store.refuse_existing(run_id)  # another process may have started it since
            return self._start(
                task=task, started_by=started_by, untrusted=untrusted, model=model, run_id=run_id
            )

    def _start(
        self,
        *,
        task: str | None,
        started_by: str,
        untrusted: bool,
        model: str | None,
        run_id: str,
    ) -> RunState:
        state = RunState(
            run_id=run_id,
            created_at=now_iso(),
            updated_at=now_iso(),
            started_by=started_by,
            spec_paths=self.spec_paths,
            task=task,
            untrusted=untrusted,
            tainted=untrusted,
            mode="task" if task else "repair",
            model=model,
            sandbox_mode=getattr(self.runner, "mode", None),
        )
        graph = TaskGraph()
        self._emit(
            "run_started",
            run_id=state.run_id,
            mode=state.mode,
            started_by=started_by,
            untrusted=untrusted,
            model=model,
        )
        spec = self._spec()
        basis = self.options.basis
        if basis is not None:
            state.extra[BASIS_KEY] = basis.commit
        # Commands a tainted run may execute come from the base spec only: requirements the
        # task or the agent add are untrusted (DESIGN.md, governance).
        trusted = (
            spec if basis is None else base_spec(basis, self.root, self.spec_paths, self._load_spec)
        )
        state.extra["trusted_commands"] = trusted_commands(trusted)
        base = self._base_drift(state, spec)
        state.base_green = sorted(base.green_ids)
        state.base_red = [r.id for r in base.red]
        if task:
            goal, base = self._task_goal(state, task, spec, base)
            if goal is None:
                return self._stop(
                    state,
                    graph,
                    RunStatus.FAILED,
                    StopReason.REJECTED_GOAL,
                    (
                        "no acceptance requirement is usable: "
                        + "; ".join(f"{k}: {v}" for k, v in state.rejected_acceptance.items())
                    )
                    if state.rejected_acceptance
                    else "the task has no acceptance requirements (add a ```chimera block of "
                    "requirements to the task text)",
                )
            spec = self._spec()
        else:
            goal = Goal.repair(base)
        state.goal_ids = list(goal.goal_ids)
        state.unrelated_red = list(goal.unrelated_red)
        # A task's own requirements are in ``base`` too (evaluated when they were vetted), so
        # their cards exist from the start with their risk and depends_on.
        unmet = goal.unmet(base)
        graph = TaskGraph.for_requirements(spec, unmet)
        self._emit(
            "goal",
            mode=goal.mode,
            goal=list(goal.goal_ids),
            unmet=unmet,
            unrelated_red=list(goal.unrelated_red),
        )
        self._save(state, graph)
        return self._loop(state, graph)

    def resume(self, run_id: str) -> RunState:
        """Continue a run after a crash (reverting the card in flight) or a stop.

        Raises:
            UsageError: no such run, it awaits approval, or another process is working on it.
        """
        self.store.load(run_id)  # a missing run is a usage error before any folder is made
        with self._owning(run_id):
            return self._resume(run_id)

    def _resume(self, run_id: str) -> RunState:
        state = self.store.load(run_id)
        graph = TaskGraph.from_json(state.cards)
        self._elapsed_before = state.elapsed_s
        self._started = time.monotonic()
        if state.status is RunStatus.AWAITING_APPROVAL:
            raise UsageError(
                f"run {run_id} is awaiting approval of {', '.join(state.pending_approval)}: "
                f"use 'chimera approve {run_id} --by NAME'"
            )
        if state.status in (RunStatus.DONE, RunStatus.FAILED):
            return state
        if state.in_flight is not None:
            flight = state.in_flight
            self.snapshots.restore(flight.snapshot_id)
            self.solver.rewind(flight.backend_position)
            card = graph.cards.get(flight.card_id)
            if card is not None and card.status is CardStatus.RUNNING:
                card.status = CardStatus.PENDING
                card.interrupted += 1
                card.notes.append("interrupted; reverted and continued on resume")
            self._emit(
                "resumed",
                card=flight.card_id,
                retry=True,
                note="card in flight at the crash was reverted; its model calls "
                "may be sent again (retry)",
            )
            state.in_flight = None
            state.status = RunStatus.RUNNING
            state.stop_reason = None
            self._save(state, graph)
            self.snapshots.discard(flight.snapshot_id)
            return self._loop(state, graph)
        self.solver.rewind(state.backend_position)
        self._emit("resumed", card=None, retry=False)
        state.status = RunStatus.RUNNING
        state.stop_reason = None
        self._save(state, graph)
        return self._loop(state, graph)

    def approve(self, run_id: str, *, by: str) -> RunState:
        """Record a human approval of the held change(s) and continue the run.

        Raises:
            UsageError: the run is not awaiting approval, ``by`` started the run (unless
                self-approval is allowed by configuration), or another process is working
                on it.
        """
        self.store.load(run_id)
        with self._owning(run_id):
            return self._approve(run_id, by=by)

    def _approve(self, run_id: str, *, by: str) -> RunState:
        state = self.store.load(run_id)
        if state.status is not RunStatus.AWAITING_APPROVAL:
            raise UsageError(f"run {run_id} is not awaiting approval (status: {state.status})")
        if not by.strip():
            raise UsageError("--by must name the approver")
        if by == state.started_by and not self.options.allow_self_approval:
            raise UsageError(
                f"{by} started run {run_id} and cannot approve it; another person must "
                "(or set allow_self_approval in the configuration)"
            )
        graph = TaskGraph.from_json(state.cards)
        self._elapsed_before = state.elapsed_s
        self._started = time.monotonic()
        approved = list(state.pending_approval)
        for cid in approved:
            card = graph.cards[cid]
            card.status = CardStatus.ACCEPTED
            card.notes.append(f"approved by {by}")
        state.approvals.append(Approval(by=by, at=now_iso(), cards=approved))
        state.pending_approval = []
        state.status = RunStatus.RUNNING
        state.stop_reason = None
        self._emit("approved", by=by, cards=approved)
        self.solver.rewind(state.backend_position)
        self._save(state, graph)
        return self._loop(state, graph)

    # -- the loop --------------------------------------------------------------------------

    def _task_goal(
        self, state: RunState, task: str, spec: Spec, base: DriftReport
    ) -> tuple[Goal | None, DriftReport]:
        """The task's goal (``None`` when no acceptance requirement is usable) and the base
        report extended with the accepted requirements' base results."""
        blocks = extract_spec_blocks(task)
        source = "task"
        try:
            if not blocks and self.acceptance_writer is not None:
                source = "agent"
                blocks = [self.acceptance_writer.write_acceptance(task, spec)]
        except ChimeraError as exc:
            state.rejected_acceptance = {"(spec block)": f"writing acceptance failed: {exc}"}
            self._emit("acceptance_rejected", id="(spec block)", reason=str(exc))
            return None, base
        if not blocks:
            return None, base
        ids = block_ids(blocks) if state.extra.get(BASIS_KEY) else None
        if ids and all(i in spec.by_id() for i in ids):
            # Iterating: an earlier round wrote these requirements into the tree already.
            self._emit("acceptance_carried", ids=ids)
            return self._vetted(state, ids, base, self._base_drift(state, spec, ids))
        try:
            new_ids, reqs, target = self._write_acceptance(state, blocks, spec)
        except ChimeraError as exc:
            state.rejected_acceptance = {"(spec block)": str(exc)}
            self._emit("acceptance_rejected", id="(spec block)", reason=str(exc))
            return None, base
        self._emit("acceptance_written", source=source, ids=new_ids)
        full = self._spec()
        denied = self._denied_commands(full, new_ids)
        base_new = self._base_drift(state, full, [i for i in new_ids if i not in denied])
        goal, merged = self._vetted(state, new_ids, base, base_new, denied)
        accepted = list(state.acceptance_ids)
        # Rejected requirements leave the spec: a denied command must never run later, and a
        # broken one must not turn the final check red.
        kept = [r for r in reqs if isinstance(r, dict) and str(r.get("id")) in set(accepted)]
        if kept:
            self._write_spec_file(target, kept)
        else:
            target.unlink(missing_ok=True)
        return goal, merged

    def _vetted(
        self,
        state: RunState,
        ids: Sequence[str],
        base: DriftReport,
        base_new: DriftReport,
        denied: dict[str, str] | None = None,
    ) -> tuple[Goal | None, DriftReport]:
        denied = denied or {}
        accepted, rejected = vet_acceptance([i for i in ids if i not in denied], base_new)
        rejected.update(denied)
        state.acceptance_ids = accepted
        state.rejected_acceptance = rejected
        for rid, why in rejected.items():
            self._emit("acceptance_rejected", id=rid, reason=why)
        if not accepted:
            return None, base
        known = {r.id for r in base.results}
        merged = DriftReport(
            base.results + tuple(r for r in base_new if r.id in accepted and r.id not in known)
        )
        return Goal.task(accepted, merged), merged

    def _write_acceptance(
        self, state: RunState, blocks: Sequence[str], spec: Spec
    ) -> tuple[list[str], list[Any], Path]:
        """Add the blocks' requirements as a new spec file.

        Returns:
            Their ids, the raw requirement mappings, and the file written.

        Raises:
            ChimeraError: the blocks are not a valid spec, or clash with existing ids (the
                file is removed again).
        """
        import yaml

        reqs: list[Any] = []
        for body in blocks:
            try:
                data = yaml.safe_load(body)
            except yaml.YAMLError as exc:
                first = str(exc).splitlines()[0]
                raise ChimeraError(f"the chimera block is not valid YAML: {first}") from exc
            items = data.get("requirements") if isinstance(data, dict) else data
            if not isinstance(items, list):
                raise ChimeraError("the chimera block must hold a 'requirements:' list")
            reqs.extend(items)
        name = self.options.task_spec_name or f"task-{state.run_id}.yaml"
        first_dir = self.root / self.spec_paths[0]
        target_dir = first_dir if first_dir.is_dir() else first_dir.parent
        target = target_dir / name
        if target.exists():
            raise ChimeraError(f"{target.name} already exists in the spec; not overwritten")
        self._write_spec_file(target, reqs)
        try:
            self._spec()
            # Ids are unique across the whole spec directory, whatever --spec selected.
            self._load_spec([target_dir])
        except SpecError as exc:
            target.unlink()
            # The file existed only to be validated: name the block, and every problem.
            problems = "; ".join(
                f"line {p.line}:{p.col}: {p.message}" if p.line else p.message
                for p in exc.problems
                if Path(p.file).name == target.name
            ) or "; ".join(str(p) for p in exc.problems)
            raise ChimeraError(f"the chimera block is not a valid spec: {problems}") from exc
        except ChimeraError:
            target.unlink()
            raise
        return [str(r.get("id")) for r in reqs if isinstance(r, dict)], reqs, target

    @staticmethod
    def _write_spec_file(target: Path, reqs: list[Any]) -> None:
        import yaml

        text = yaml.safe_dump({"requirements": reqs}, sort_keys=False, allow_unicode=True)
        header = "# Acceptance requirements of a Chimera task run (added, never edited).\n"
        atomic_write_text(target, header + text)

    def _denied_commands(self, spec: Spec, ids: Sequence[str]) -> dict[str, str]:
        """New requirements whose ``command`` the TrustKernel does not allow (untrusted text:
        it never runs, even in the sandbox, unless the kernel lets it)."""
        from chimera.governance.kernel import TrustKernel

        kernel = TrustKernel()
        by_id = spec.by_id()
        denied: dict[str, str] = {}
        for rid in ids:
            run = getattr(by_id[rid].check, "run", None) if rid in by_id else None
            if not isinstance(run, str):
                continue
            decision = kernel.evaluate_command(run, self.root)
            if decision.denied:
                denied[rid] = f"its command is denied by governance: {decision.message()}"
                self._emit(
                    "acceptance_command_denied",
                    id=rid,
                    verdict=decision.verdict.value,
                    rules=list(decision.rule_ids),
                )
        return denied

    def _limit_stop(self, state: RunState) -> tuple[StopReason, str] | None:
        lim = self.options.limits
        if state.iterations >= lim.max_iterations:
            return StopReason.MAX_ITERATIONS, f"{state.iterations} card iterations"
        elapsed = self._elapsed_before + (time.monotonic() - self._started)
        if lim.max_wall_s is not None and elapsed >= lim.max_wall_s:
            return StopReason.WALL_TIME, f"{elapsed:.0f}s elapsed of {lim.max_wall_s:.0f}s"
        if lim.budget_tokens is not None and state.tokens >= lim.budget_tokens:
            return StopReason.BUDGET_TOKENS, f"{state.tokens} of {lim.budget_tokens} tokens"
        if (
            lim.budget_usd is not None
            and state.cost_usd is not None
            and state.cost_usd >= lim.budget_usd
        ):
            return StopReason.BUDGET_USD, f"${state.cost_usd:.4f} of ${lim.budget_usd:.2f}"
        return None

    def _goal(self, state: RunState) -> Goal:
        return Goal(
            mode=state.mode,
            goal_ids=tuple(state.goal_ids),
            protected=frozenset(state.base_green),
            unrelated_red=tuple(state.unrelated_red),
        )

    def _loop(self, state: RunState, graph: TaskGraph) -> RunState:
        goal = self._goal(state)
        while True:
            graph.propagate_blocked()
            card = graph.next_card()
            if card is None:
                return self._finish(state, graph, goal)
            stop = self._limit_stop(state)
            if stop is not None:
                return self._stop(state, graph, RunStatus.STOPPED, stop[0], stop[1])
            paused = self._run_card(state, graph, goal, card)
            if paused is not None:
                return paused

    def _finish(self, state: RunState, graph: TaskGraph, goal: Goal) -> RunState:
        spec = self._spec()
        report = self._drift(spec)
        state.final_results = {r.id: r.status.value for r in report.results}
        unmet = goal.unmet(report)
        if not unmet:
            return self._stop(
                state,
                graph,
                RunStatus.DONE,
                StopReason.GOAL_MET,
                f"{len(goal.goal_ids)} goal requirement(s) pass",
            )
        respawned: list[str] = []
        by_id = spec.by_id()
        for rid in unmet:
            cards = [c for c in graph.cards.values() if c.requirement_id == rid]
            if not cards or all(c.status is CardStatus.ACCEPTED for c in cards):
                # A spawned card keeps its requirement's risk: a risky change still pauses.
                risky = rid in by_id and by_id[rid].risk is Risk.HIGH
                if cards:
                    graph.respawn(rid, risky=risky)
                else:
                    graph.add(
                        TaskGraph.card_for(by_id[rid], ())
                        if rid in by_id
                        else Card(id=rid, requirement_id=rid)
                    )
                respawned.append(rid)
        if respawned:
            self._emit("cards_spawned", ids=respawned)
            stop = self._limit_stop(state)
            if stop is not None:
                return self._stop(state, graph, RunStatus.STOPPED, stop[0], stop[1])
            self._save(state, graph)
            return self._loop(state, graph)
        failed = [c.id for c in graph.cards.values() if c.status is CardStatus.FAILED]
        blocked = [c.id for c in graph.cards.values() if c.status is CardStatus.BLOCKED]
        detail = f"still red: {', '.join(unmet)}"
        held = [
            c.id
            for c in graph.cards.values()
            if c.status is CardStatus.FAILED and c.notes and PUBLIC_MESSAGE in c.notes[-1]
        ]
        if held:
            detail = f"{HELD_OUTCOME} ({', '.join(held)}); {detail}"
        if failed:
            detail += f"; failed cards: {', '.join(failed)}"
        if blocked:
            detail += f"; blocked: {', '.join(blocked)}"
        return self._stop(state, graph, RunStatus.FAILED, StopReason.CARDS_FAILED, detail)

    def _is_risky(self, card: Card, changes: ChangeSummary) -> list[str]:
        reasons = list(card.risk_reasons) if card.risky else []
        if changes.deleted:
            reasons.append("deletes " + ", ".join(changes.deleted[:5]))
        hot = [p for p in changes.touched if self._risk_spec.match_file(p)]
        if hot:
            reasons.append("touches high-risk paths: " + ", ".join(hot[:5]))
        return reasons

    def _run_card(
        self, state: RunState, graph: TaskGraph, goal: Goal, card: Card
    ) -> RunState | None:
        spec = self._spec()
        requirement = spec.by_id().get(card.requirement_id)
        if requirement is None:
            card.status = CardStatus.FAILED
            card.notes.append("its requirement is no longer in the spec")
            self._save(state, graph)
            return None
        # The whole Spec, not only the card's requirement: the solver's agent starts from this
        # report (what passes now must keep passing) instead of checking the tree again.
        before = self._drift(spec)
        now = before.by_id().get(card.requirement_id)
        was = self._basis_red.get(card.requirement_id) if state.iterations == 0 else None
        if was is not None and now is not None and now.passed:
            # Iterating: the head already passes (the earlier rounds' change), but the run
            # exists to act on feedback, so its first card is judged from the basis.
            before = DriftReport(tuple(was if r.id == was.id else r for r in before.results))
        elif now is not None and now.passed:
            # An earlier card made it pass; solving it again would be a hollow success.
            card.status = CardStatus.ACCEPTED
            card.notes.append("already passes (an earlier card made it green)")
            self._emit(
                "card_finished", card=card.id, status=card.status.value, reason="already passes"
            )
            self._save(state, graph)
            return None
        snap = self.snapshots.snapshot(f"card {card.id}")
        card.status = CardStatus.RUNNING
        state.in_flight = InFlight(
            card_id=card.id,
            snapshot_id=snap,
            backend_position=self.solver.checkpoint(),
            started_at=now_iso(),
        )
        self._emit("card_started", card=card.id, requirement=card.requirement_id, snapshot=snap)
        self._save(state, graph)

        config_before = self._config_fingerprint()
        outcome = self.solver.solve_card(card, requirement, state=state, spec=spec, base=before)
        state.iterations += 1
        card.attempts += outcome.attempts
        state.tokens += outcome.tokens
        state.cost_usd = (
            None
            if state.cost_usd is None or outcome.cost_usd is None
            else state.cost_usd + outcome.cost_usd
        )
        state.denied_actions.extend(outcome.denied_actions)
        if outcome.suspicion:
            state.extra.setdefault("suspicion", {})[card.id] = outcome.suspicion
        self._emit(
            "card_solved",
            card=card.id,
            verdict=outcome.verdict,
            attempts=outcome.attempts,
            tokens=outcome.tokens,
            cost_usd=outcome.cost_usd,
            summary=outcome.summary,
        )

        accepted = False
        why = outcome.summary or outcome.verdict
        if outcome.verdict == "solved":
            after = self._spec_or_none()
            tampering = (
                spec_tampering(spec.requirements, after.requirements)
                if after
                else ["the spec no longer loads"]
            )
            # Chimera's own configuration (sandbox mode, environment allowlist, budgets) is
            # read again on resume and approval: a card must not loosen it for later steps.
            if self._config_fingerprint() != config_before:
                tampering.append("Chimera's configuration ([tool.chimera] / chimera.toml) changed")
            # Requirements the agent added are untrusted text like a task's spec block: a
            # `command` the TrustKernel denies must never run (the next check_drift of the
            # whole spec would execute it in the sandbox, which can still read the workspace).
            denied = (
                self._denied_commands(after, _added_ids(spec, after))
                if after and not tampering
                else {}
            )
            if tampering:
                why = "blocked: " + "; ".join(tampering)
                self._emit("spec_tampering", card=card.id, problems=tampering)
                state.denied_actions.extend(
                    _spec_denial(card.id, p, "spec-tampering") for p in tampering
                )
            elif denied:
                problems = [
                    f"agent-written requirement {rid}: {reason}" for rid, reason in denied.items()
                ]
                why = "blocked: " + "; ".join(problems)
                self._emit("spec_tampering", card=card.id, problems=problems)
                state.denied_actions.extend(
                    _spec_denial(card.id, p, "spec-command-denied") for p in problems
                )
            else:
                assert after is not None
                report = self._drift(after, sorted({card.requirement_id, *goal.protected}))
                res = report.by_id().get(card.requirement_id)
                regressions = goal.regressions(report)
                if res is not None and res.passed and not regressions:
                    accepted = self._heldout_passes(card, after, before, report)
                    if not accepted:
                        why = HELD_OUTCOME
                elif regressions:
                    why = f"check_drift: regressions in {', '.join(regressions)}"
                else:
                    why = f"check_drift: {card.requirement_id} still {res.status if res else '?'}"

        if accepted:
            changes = self.snapshots.changes(snap)
            reasons = self._is_risky(card, changes)
            if reasons:
                card.status = CardStatus.AWAITING_APPROVAL
                card.risk_reasons = reasons
                card.notes.append("verified; held for human approval")
                state.pending_approval.append(card.id)
            else:
                card.status = CardStatus.ACCEPTED
                card.notes.append(f"accepted by check_drift after {outcome.attempts} attempt(s)")
        else:
            self.snapshots.restore(snap)
            card.status = CardStatus.FAILED
            held = why == HELD_OUTCOME or outcome.verdict == "held"
            lines = self.options.heldout.latest_lines() if held and self.options.heldout else []
            # For the maintainer's summary (state.json sits under .chimera/runs, which the
            # sandbox masks while held-out requirements are configured): never a prompt.
            detail = f" [maintainer only: {'; '.join(lines)}]" if lines else ""
            card.notes.append(f"{outcome.verdict}: {why}{detail}")
        state.in_flight = None
        state.backend_position = self.solver.checkpoint()
        self._emit("card_finished", card=card.id, status=card.status.value, reason=why)
        # Every branch below saves the state without the card in flight BEFORE discarding
        # its snapshot: a kill in between must never leave a saved card in flight whose
        # snapshot is gone (resume could not revert it).
        if card.status is CardStatus.AWAITING_APPROVAL:
            state.status = RunStatus.AWAITING_APPROVAL
            paused = self._stop(
                state,
                graph,
                RunStatus.AWAITING_APPROVAL,
                StopReason.HUMAN_CHECKPOINT,
                f"{card.id} is verified and held for approval ({'; '.join(card.risk_reasons)}); "
                f"pending after it: {', '.join(self._pending(graph)) or 'nothing'}",
            )
            self.snapshots.discard(snap)
            return paused
        if outcome.verdict == "budget":
            reason = (
                StopReason.BUDGET_USD if outcome.budget_limit == "usd" else StopReason.BUDGET_TOKENS
            )
            card.status = CardStatus.PENDING
            stopped = self._stop(state, graph, RunStatus.STOPPED, reason, outcome.summary)
            self.snapshots.discard(snap)
            return stopped
        self._save(state, graph)
        self.snapshots.discard(snap)
        return None

    def _heldout_passes(
        self, card: Card, after: Spec, before: DriftReport, report: DriftReport
    ) -> bool:
        """Held-out requirements on the card's change (true when none are configured)."""
        gate = self.options.heldout
        if gate is None:
            return True
        checked = {r.id for r in report}
        green = (before.green_ids - checked) | report.green_ids
        verdict = gate.check(after, green, label=f"card {card.id}")
        return verdict.passed

    def _config_fingerprint(self) -> str:
        """The effective configuration as text (or the error that stops it loading)."""
        from chimera.config import load_config

        try:
            return load_config(self.root).model_dump_json()
        except ChimeraError as exc:
            return f"invalid: {exc}"

    def _spec_or_none(self) -> Spec | None:
        try:
            return self._spec()
        except ChimeraError:
            return None

    @staticmethod
    def _pending(graph: TaskGraph) -> list[str]:
        return [c.id for c in graph.cards.values() if c.status is CardStatus.PENDING]


_LEVELS = ("none", "low", "medium", "high")


def _suspicion_line(state: RunState) -> str:
    """The run's suspicion line: the most suspicious card's (``""`` when no card has one)."""
    lines = [str(v) for v in state.extra.get("suspicion", {}).values()]

    def level(line: str) -> int:
        word = line.removeprefix("suspicion: ").split(" ", 1)[0]
        return _LEVELS.index(word) if word in _LEVELS else 0

    return max(lines, key=level) if lines else ""


def _added_ids(before: Spec, after: Spec) -> list[str]:
    """Ids of requirements in ``after`` that ``before`` does not have (agent-written)."""
    known = before.by_id()
    return [r.id for r in after.requirements if r.id not in known]


def _spec_denial(card_id: str, problem: str, rule: str) -> dict[str, Any]:
    """A blocked spec change as a ``denied_actions`` entry (the shape of
    :meth:`chimera.governance.guard.DeniedAction.to_dict`), for the reviewer's summary."""
    summary = f"card {card_id}: {problem}"
    return {
        "tool": "spec",
        "action": summary,
        "reason": problem,
        "summary": summary,
        "verdict": "block",
        "rule_ids": [rule],
        "reasons": [problem],
        "agent": card_id,
    }
