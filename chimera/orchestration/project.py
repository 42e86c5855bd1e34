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

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from chimera.errors import UsageError
from chimera.governance.wiring import trusted_commands
from chimera.orchestration.basis import BASIS_KEY, base_spec
from chimera.orchestration.card_loop import CardLoop
from chimera.orchestration.collaborators import (
    AcceptanceWriter,
    AuditSink,
    CardOutcome,
    CardSolver,
    ChangeSummary,
    OrchestratorOptions,
    RunLimits,
    Snapshots,
    SpecLoader,
)
from chimera.orchestration.goal import Goal
from chimera.orchestration.graph import CardStatus, TaskGraph
from chimera.orchestration.run_goal import GoalSetter
from chimera.orchestration.run_kit import RunKit
from chimera.orchestration.state import (
    Approval,
    RunState,
    RunStatus,
    RunStore,
    StopReason,
    new_run_id,
    now_iso,
)
from chimera.runner import CommandRunner


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

    The orchestrator owns its parts: the :class:`RunKit` (collaborators and plumbing) it
    hands a :class:`GoalSetter` and a :class:`CardLoop`.
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
        self.kit = RunKit(
            root=root,
            spec_paths=spec_paths,
            solver=solver,
            snapshots=snapshots,
            runner=runner,
            store=store,
            audit=audit,
            load_spec=load_spec,
            options=options,
            acceptance_writer=acceptance_writer,
            on_event=on_event,
        )
        self.goals = GoalSetter(self.kit)
        self.cards = CardLoop(self.kit, self.goals)

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
        self.kit.store.refuse_existing(run_id)
        with self.kit.owning(run_id):
            self.kit.store.refuse_existing(run_id)  # another process may have started it since
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
        kit = self.kit
        state = RunState(
            run_id=run_id,
            created_at=now_iso(),
            updated_at=now_iso(),
            started_by=started_by,
            spec_paths=kit.spec_paths,
            task=task,
            untrusted=untrusted,
            tainted=untrusted,
            mode="task" if task else "repair",
            model=model,
            sandbox_mode=getattr(kit.runner, "mode", None),
        )
        graph = TaskGraph()
        kit.emit(
            "run_started",
            run_id=state.run_id,
            mode=state.mode,
            started_by=started_by,
            untrusted=untrusted,
            model=model,
        )
        spec = kit.spec()
        basis = kit.options.basis
        if basis is not None:
            state.extra[BASIS_KEY] = basis.commit
        # Commands a tainted run may execute come from the base spec only: requirements the
        # task or the agent add are untrusted (DESIGN.md, governance).
        trusted = (
            spec if basis is None else base_spec(basis, kit.root, kit.spec_paths, kit.load_spec)
        )
        state.extra["trusted_commands"] = trusted_commands(trusted)
        base = kit.base_drift(state, spec)
        state.base_green = sorted(base.green_ids)
        state.base_red = [r.id for r in base.red]
        if task:
            goal, base = self.goals.task_goal(state, task, spec, base)
            if goal is None:
                return kit.stop(
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
            spec = kit.spec()
        else:
            goal = Goal.repair(base)
        state.goal_ids = list(goal.goal_ids)
        state.unrelated_red = list(goal.unrelated_red)
        # A task's own requirements are in ``base`` too (evaluated when they were vetted), so
        # their cards exist from the start with their risk and depends_on.
        unmet = goal.unmet(base)
        graph = TaskGraph.for_requirements(spec, unmet)
        kit.emit(
            "goal",
            mode=goal.mode,
            goal=list(goal.goal_ids),
            unmet=unmet,
            unrelated_red=list(goal.unrelated_red),
        )
        kit.save(state, graph)
        return self._guarded_loop(state, graph)

    def _guarded_loop(self, state: RunState, graph: TaskGraph) -> RunState:
        return self._guarded(state, graph, lambda: self.cards.run(state, graph))

    def _guarded(self, state: RunState, graph: TaskGraph, work: Callable[[], RunState]) -> RunState:
        """``work()`` (the card loop, or resume's revert and loop); an error that escapes it
        stops the run (``stopped``, reason ``crashed``, the error as its detail) before it
        propagates, so a failed run is never left marked ``running``. The card in flight
        stays recorded: ``chimera resume`` reverts and redoes it once the cause is fixed.
        (``kill -9`` cannot be caught: that run stays ``running`` and ``chimera status``
        names it interrupted.)"""
        try:
            return work()
        except Exception as exc:
            detail = (
                f"{type(exc).__name__}: {exc}; fix the cause, then continue with "
                f"'chimera resume {state.run_id}'"
            )
            try:
                self.kit.stop(state, graph, RunStatus.STOPPED, StopReason.CRASHED, detail)
            except Exception as nested:  # the disk or the audit log failed as well
                exc.add_note(f"the run state could not be saved: {nested}")
            raise

    def resume(self, run_id: str) -> RunState:
        """Continue a run after a crash (reverting the card in flight) or a stop.

        Raises:
            UsageError: no such run, it awaits approval, or another process is working on it.
        """
        self.kit.store.load(run_id)  # a missing run is a usage error before any folder is made
        with self.kit.owning(run_id):
            return self._resume(run_id)

    def _resume(self, run_id: str) -> RunState:
        state = self.kit.store.load(run_id)
        graph = TaskGraph.from_json(state.cards)
        self.kit.restart_clock(state.elapsed_s)
        if state.status is RunStatus.AWAITING_APPROVAL:
            raise UsageError(
                f"run {run_id} is awaiting approval of {', '.join(state.pending_approval)}: "
                f"use 'chimera approve {run_id} --by NAME'"
            )
        if state.status in (RunStatus.DONE, RunStatus.FAILED):
            return state
        return self._guarded(state, graph, lambda: self._continue(state, graph))

    def _continue(self, state: RunState, graph: TaskGraph) -> RunState:
        kit = self.kit
        if state.in_flight is not None:
            flight = state.in_flight
            kit.snapshots.restore(flight.snapshot_id)
            kit.solver.rewind(flight.backend_position)
            card = graph.cards.get(flight.card_id)
            if card is not None and card.status is CardStatus.RUNNING:
                card.status = CardStatus.PENDING
                card.interrupted += 1
                card.notes.append("interrupted; reverted and continued on resume")
            kit.emit(
                "resumed",
                card=flight.card_id,
                retry=True,
                note="card in flight at the crash was reverted; its model calls "
                "may be sent again (retry)",
            )
            state.in_flight = None
            state.status = RunStatus.RUNNING
            state.stop_reason = None
            kit.save(state, graph)
            kit.snapshots.discard(flight.snapshot_id)
            return self.cards.run(state, graph)
        kit.solver.rewind(state.backend_position)
        kit.emit("resumed", card=None, retry=False)
        state.status = RunStatus.RUNNING
        state.stop_reason = None
        kit.save(state, graph)
        return self.cards.run(state, graph)

    def approve(self, run_id: str, *, by: str) -> RunState:
        """Record a human approval of the held change(s) and continue the run.

        Raises:
            UsageError: the run is not awaiting approval, ``by`` started the run (unless
                self-approval is allowed by configuration), or another process is working
                on it.
        """
        self.kit.store.load(run_id)
        with self.kit.owning(run_id):
            return self._approve(run_id, by=by)

    def _approve(self, run_id: str, *, by: str) -> RunState:
        kit = self.kit
        state = kit.store.load(run_id)
        if state.status is not RunStatus.AWAITING_APPROVAL:
            raise UsageError(f"run {run_id} is not awaiting approval (status: {state.status})")
        if not by.strip():
            raise UsageError("--by must name the approver")
        if by == state.started_by and not kit.options.allow_self_approval:
            raise UsageError(
                f"{by} started run {run_id} and cannot approve it; another person must "
                "(or set allow_self_approval in the configuration)"
            )
        graph = TaskGraph.from_json(state.cards)
        kit.restart_clock(state.elapsed_s)
        approved = list(state.pending_approval)
        for cid in approved:
            card = graph.cards[cid]
            card.status = CardStatus.ACCEPTED
            card.notes.append(f"approved by {by}")
        state.approvals.append(Approval(by=by, at=now_iso(), cards=approved))
        state.pending_approval = []
        state.status = RunStatus.RUNNING
        state.stop_reason = None
        kit.emit("approved", by=by, cards=approved)
        kit.solver.rewind(state.backend_position)
        kit.save(state, graph)
        return self._guarded_loop(state, graph)


__all__ = [
    "AcceptanceWriter",
    "AuditSink",
    "CardOutcome",
    "CardSolver",
    "ChangeSummary",
    "OrchestratorOptions",
    "ProjectOrchestrator",
    "RunLimits",
    "Snapshots",
    "SpecLoader",
]
