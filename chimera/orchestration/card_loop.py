"""The ProjectOrchestrator's CardLoop: limits, one card (snapshot, solve, accept only by
check_drift, pause risky cards for a human) and the run's end.
"""

from __future__ import annotations

from typing import Any

import pathspec

from chimera.core.heldout import HELD_OUTCOME, PUBLIC_MESSAGE
from chimera.core.solve_attempt import config_fingerprint
from chimera.errors import ChimeraError
from chimera.orchestration.collaborators import ChangeSummary
from chimera.orchestration.goal import Goal, spec_tampering
from chimera.orchestration.graph import Card, CardStatus, TaskGraph
from chimera.orchestration.run_goal import GoalSetter
from chimera.orchestration.run_kit import RunKit
from chimera.orchestration.state import InFlight, RunState, RunStatus, StopReason, now_iso
from chimera.spec.model import Risk, Spec
from chimera.spec.results import DriftReport


class CardLoop:
    """Runs a run's cards until the goal passes or a stop fires.

    Args:
        kit: the run's collaborators and plumbing.
        goals: the goal setter (its governance vetting judges agent-written requirements).
    """

    def __init__(self, kit: RunKit, goals: GoalSetter) -> None:
        self.kit = kit
        self.goals = goals
        self._risk_spec = pathspec.GitIgnoreSpec.from_lines(kit.options.high_risk_paths)

    def _limit_stop(self, state: RunState) -> tuple[StopReason, str] | None:
        lim = self.kit.options.limits
        if state.iterations >= lim.max_iterations:
            return StopReason.MAX_ITERATIONS, f"{state.iterations} card iterations"
        elapsed = self.kit.elapsed()
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

    def run(self, state: RunState, graph: TaskGraph) -> RunState:
        """Run ready cards until none is left (then judge the goal) or a stop fires.

        Returns:
            The state the run stopped in (saved).
        """
        goal = GoalSetter.current(state)
        while True:
            graph.propagate_blocked()
            card = graph.next_card()
            if card is None:
                return self._finish(state, graph, goal)
            stop = self._limit_stop(state)
            if stop is not None:
                return self.kit.stop(state, graph, RunStatus.STOPPED, stop[0], stop[1])
            paused = self._run_card(state, graph, goal, card)
            if paused is not None:
                return paused

    def _finish(self, state: RunState, graph: TaskGraph, goal: Goal) -> RunState:
        kit = self.kit
        spec = kit.spec()
        report = kit.drift(spec)
        state.final_results = {r.id: r.status.value for r in report.results}
        unmet = goal.unmet(report)
        if not unmet:
            return kit.stop(
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
            kit.emit("cards_spawned", ids=respawned)
            stop = self._limit_stop(state)
            if stop is not None:
                return kit.stop(state, graph, RunStatus.STOPPED, stop[0], stop[1])
            kit.save(state, graph)
            return self.run(state, graph)
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
        return kit.stop(state, graph, RunStatus.FAILED, StopReason.CARDS_FAILED, detail)

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
        kit = self.kit
        spec = kit.spec()
        requirement = spec.by_id().get(card.requirement_id)
        if requirement is None:
            card.status = CardStatus.FAILED
            card.notes.append("its requirement is no longer in the spec")
            kit.save(state, graph)
            return None
        # The whole Spec, not only the card's requirement: the solver's agent starts from this
        # report (what passes now must keep passing) instead of checking the tree again.
        before = kit.drift(spec)
        now = before.by_id().get(card.requirement_id)
        was = kit.basis_red.get(card.requirement_id) if state.iterations == 0 else None
        if was is not None and now is not None and now.passed:
            # Iterating: the head already passes (the earlier rounds' change), but the run
            # exists to act on feedback, so its first card is judged from the basis.
            before = DriftReport(tuple(was if r.id == was.id else r for r in before.results))
        elif now is not None and now.passed:
            # An earlier card made it pass; solving it again would be a hollow success.
            card.status = CardStatus.ACCEPTED
            card.notes.append("already passes (an earlier card made it green)")
            kit.emit(
                "card_finished", card=card.id, status=card.status.value, reason="already passes"
            )
            kit.save(state, graph)
            return None
        snap = kit.snapshots.snapshot(f"card {card.id}")
        card.status = CardStatus.RUNNING
        state.in_flight = InFlight(
            card_id=card.id,
            snapshot_id=snap,
            backend_position=kit.solver.checkpoint(),
            started_at=now_iso(),
        )
        kit.emit("card_started", card=card.id, requirement=card.requirement_id, snapshot=snap)
        kit.save(state, graph)

        config_before = config_fingerprint(self.kit.root)
        outcome = kit.solver.solve_card(card, requirement, state=state, spec=spec, base=before)
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
        kit.emit(
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
            if config_fingerprint(self.kit.root) != config_before:
                tampering.append("Chimera's configuration ([tool.chimera] / chimera.toml) changed")
            # Requirements the agent added are untrusted text like a task's spec block: a
            # `command` the TrustKernel denies must never run (the next check_drift of the
            # whole spec would execute it in the sandbox, which can still read the workspace).
            denied = (
                self.goals.denied_commands(after, _added_ids(spec, after))
                if after and not tampering
                else {}
            )
            if tampering:
                why = "blocked: " + "; ".join(tampering)
                kit.emit("spec_tampering", card=card.id, problems=tampering)
                state.denied_actions.extend(
                    _spec_denial(card.id, p, "spec-tampering") for p in tampering
                )
            elif denied:
                problems = [
                    f"agent-written requirement {rid}: {reason}" for rid, reason in denied.items()
                ]
                why = "blocked: " + "; ".join(problems)
                kit.emit("spec_tampering", card=card.id, problems=problems)
                state.denied_actions.extend(
                    _spec_denial(card.id, p, "spec-command-denied") for p in problems
                )
            else:
                assert after is not None
                report = kit.drift(after, sorted({card.requirement_id, *goal.protected}))
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
            changes = kit.snapshots.changes(snap)
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
            kit.snapshots.restore(snap)
            card.status = CardStatus.FAILED
            held = why == HELD_OUTCOME or outcome.verdict == "held"
            lines = kit.options.heldout.latest_lines() if held and kit.options.heldout else []
            # For the maintainer's summary (state.json sits under .chimera/runs, which the
            # sandbox masks while held-out requirements are configured): never a prompt.
            detail = f" [maintainer only: {'; '.join(lines)}]" if lines else ""
            card.notes.append(f"{outcome.verdict}: {why}{detail}")
        state.in_flight = None
        state.backend_position = kit.solver.checkpoint()
        kit.emit("card_finished", card=card.id, status=card.status.value, reason=why)
        # Every branch below saves the state without the card in flight BEFORE discarding
        # its snapshot: a kill in between must never leave a saved card in flight whose
        # snapshot is gone (resume could not revert it).
        if card.status is CardStatus.AWAITING_APPROVAL:
            state.status = RunStatus.AWAITING_APPROVAL
            paused = kit.stop(
                state,
                graph,
                RunStatus.AWAITING_APPROVAL,
                StopReason.HUMAN_CHECKPOINT,
                f"{card.id} is verified and held for approval ({'; '.join(card.risk_reasons)}); "
                f"pending after it: {', '.join(self._pending(graph)) or 'nothing'}",
            )
            kit.snapshots.discard(snap)
            return paused
        if outcome.verdict == "budget":
            reason = (
                StopReason.BUDGET_USD if outcome.budget_limit == "usd" else StopReason.BUDGET_TOKENS
            )
            card.status = CardStatus.PENDING
            stopped = kit.stop(state, graph, RunStatus.STOPPED, reason, outcome.summary)
            kit.snapshots.discard(snap)
            return stopped
        kit.save(state, graph)
        kit.snapshots.discard(snap)
        return None

    def _heldout_passes(
        self, card: Card, after: Spec, before: DriftReport, report: DriftReport
    ) -> bool:
        """Held-out requirements on the card's change (true when none are configured)."""
        gate = self.kit.options.heldout
        if gate is None:
            return True
        checked = {r.id for r in report}
        green = (before.green_ids - checked) | report.green_ids
        verdict = gate.check(after, green, label=f"card {card.id}")
        return verdict.passed

    def _spec_or_none(self) -> Spec | None:
        try:
            return self.kit.spec()
        except ChimeraError:
            return None

    @staticmethod
    def _pending(graph: TaskGraph) -> list[str]:
        return [c.id for c in graph.cards.values() if c.status is CardStatus.PENDING]


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
