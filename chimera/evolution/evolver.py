"""SkillEvolver: propose → test → keep or discard, every step in the audit log.

1. **Diff-gate** (:func:`~chimera.evolution.evidence.diff_gate`): only an attempt the Spec
   accepted with a non-empty diff may seed a skill. A hollow success mints nothing, and the
   audit log says so (``skill_not_minted``).
2. **Propose** (:func:`~chimera.evolution.propose.propose_skill`): one model call answering
   JSON, validated by pydantic, ``SkillValidator`` and the AgentSkills format
   (``skill_rejected`` with every reason otherwise).
3. **Test**: the origin task and at least one sibling task are re-run with the skill rendered
   into their prompt (:class:`~chimera.evolution.rerun.TaskRerunner`). Each re-run is a line
   in the evaluation ledger.
4. **Keep or discard**: kept (``skill_kept``: stored provisional; a re-mint of an existing
   name is its next version) only when every re-run passed; otherwise ``skill_discarded``
   with the per-task results. Voyager (Wang et al., 2023) keeps a skill only on verified
   success; here "verified" is the Spec's verdict on a fresh re-run, never the model's word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from chimera.evolution.evidence import AttemptEvidence, diff_gate
from chimera.evolution.ledger import SkillEval, SkillEvalLog
from chimera.evolution.propose import propose_skill
from chimera.evolution.rerun import Rerun, TaskRerunner
from chimera.evolution.skills import LearnedSkill, SkillStore
from chimera.governance.validators import SkillValidator
from chimera.protocols import AuditSink, SupportsComplete

Decision = Literal["not_minted", "rejected", "untestable", "discarded", "kept"]


@dataclass(frozen=True)
class EvolveOutcome:
    """What became of one attempt.

    Attributes:
        decision: ``not_minted`` (the diff-gate said no), ``rejected`` (the proposal failed
            validation), ``untestable`` (no sibling task to test on), ``discarded`` (a re-run
            failed) or ``kept``.
        reason: one line.
        skill: the kept skill as stored (with its version), or the discarded proposal.
        reruns: every re-run made, in order.
        tokens: tokens spent by the proposal call(s).
    """

    decision: Decision
    reason: str
    skill: LearnedSkill | None = None
    reruns: tuple[Rerun, ...] = ()
    tokens: int = 0

    @property
    def kept(self) -> bool:
        return self.decision == "kept"


class SkillEvolver:
    """Mints skills from verified work.

    Args:
        store: where kept skills go.
        backend: the proposer model (one ``summarize`` call per proposal, plus at most one
            repair round).
        rerunner: re-runs tasks with the skill in context.
        audit: every decision is one event here.
        ledger: every re-run is one line here (optional).
        validator: the SkillValidator (default rules when omitted).
        min_siblings: sibling tasks required besides the origin (at least 1).
    """

    def __init__(
        self,
        store: SkillStore,
        backend: SupportsComplete,
        rerunner: TaskRerunner,
        audit: AuditSink,
        *,
        ledger: SkillEvalLog | None = None,
        validator: SkillValidator | None = None,
        min_siblings: int = 1,
    ) -> None:
        if min_siblings < 1:
            raise ValueError("a skill is tested on at least one sibling task")
        self.store = store
        self.backend = backend
        self.rerunner = rerunner
        self.audit = audit
        self.ledger = ledger
        self.validator = validator or SkillValidator()
        self.min_siblings = min_siblings

    def evolve(
        self, evidence: AttemptEvidence, origin: str, siblings: Sequence[str]
    ) -> EvolveOutcome:
        """Propose, test and keep or discard a skill from ``evidence``.

        Args:
            evidence: the attempt (see :func:`~chimera.evolution.evidence.read_run`).
            origin: the task id ``evidence`` solved (re-run with the skill).
            siblings: other task ids the skill should also help (re-run with the skill).

        Raises:
            ProviderError, BudgetExceeded: from the proposer's backend.
        """
        where = {"run": evidence.run_id, "attempt": evidence.attempt, "origin": origin}
        gate = diff_gate(evidence)
        if not gate.mint:
            self.audit.append("skill_not_minted", reason=gate.reason, **where)
            return EvolveOutcome("not_minted", gate.reason)
        others = [s for s in dict.fromkeys(siblings) if s != origin]
        if len(others) < self.min_siblings:
            reason = f"needs {self.min_siblings} sibling task(s) to test on, has {len(others)}"
            self.audit.append("skill_untestable", reason=reason, **where)
            return EvolveOutcome("untestable", reason)
        proposed = propose_skill(self.backend, evidence, validator=self.validator)
        if proposed.skill is None:
            self.audit.append("skill_rejected", problems=list(proposed.problems), **where)
            return EvolveOutcome("rejected", "; ".join(proposed.problems), tokens=proposed.tokens)
        skill = proposed.skill
        current = self.store.get(skill.name)
        version = current.version + 1 if current else 1
        guidance = replace(skill, version=version).render()
        reruns: list[Rerun] = []
        for task_id in (origin, *others):
            result = self.rerunner.rerun(task_id, guidance)
            reruns.append(result)
            if self.ledger is not None:
                self.ledger.append(
                    SkillEval(skill.name, version, task_id, result.passed, "mint-test")
                )
        results = {r.task_id: r.passed for r in reruns}
        failed = [r for r in reruns if not r.passed]
        if failed:
            reason = "re-run failed: " + ", ".join(f"{r.task_id} ({r.outcome})" for r in failed)
            self.audit.append(
                "skill_discarded", name=skill.name, reason=reason, reruns=results, **where
            )
            return EvolveOutcome("discarded", reason, skill, tuple(reruns), proposed.tokens)
        tested = replace(skill, uses=len(reruns), successes=len(reruns))
        kept = self.store.mint(tested)
        self.audit.append(
            "skill_kept",
            name=kept.name,
            version=kept.version,
            trusted=kept.trusted,
            reruns=results,
            **where,
        )
        reason = f"kept v{kept.version}: {len(reruns)} re-run(s) passed with the skill"
        return EvolveOutcome("kept", reason, kept, tuple(reruns), proposed.tokens)
