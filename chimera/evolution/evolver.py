"""SkillEvolver: propose → test → keep or discard, every step in the audit log.

1. **Diff-gate** (:func:`~chimera.evolution.evidence.diff_gate`): only an attempt the Spec
   accepted with a non-empty diff may seed a skill. A hollow success mints nothing, and the
   audit log says so (``skill_not_minted``).
2. **Propose** (:func:`~chimera.evolution.propose.propose_skill`): one model call answering
   JSON, validated by pydantic, ``SkillValidator`` and the AgentSkills format
   (``skill_rejected`` with every reason otherwise).
3. **Test** — the *re-run gate* (:func:`rerun_gate`): every sibling task (never the origin:
   a skill is tested on tasks it was not proposed from) is re-run twice, without and with the
   skill rendered into its prompt (:class:`~chimera.evolution.rerun.TaskRerunner`), and the
   paired results go through :func:`chimera.eval.gates.paired_gate`: the skill must make the
   tasks significantly better (one-sided exact McNemar at ``alpha``, at least ``MIN_PAIRS``
   tasks, a non-degenerate interval). Each re-run with the skill is a ledger line.
4. **Keep or discard**: kept (``skill_kept``: stored provisional and *tested*; a re-mint of an
   existing name is its next version) only when the gate passed; otherwise
   ``skill_discarded`` with the gate's one-line reason. A kept skill still waits for a
   person's acceptance (``chimera skills accept``) before it reaches a prompt: the gate is
   required, and so is the person, and neither is enough alone. Voyager (Wang et al., 2023)
   keeps a skill only on verified success; here "verified" is the Spec's verdict on fresh
   re-runs, never the model's word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from chimera.eval.gates import DEFAULT_ALPHA, MIN_PAIRS, PairedVerdict, paired_gate
from chimera.evolution.evidence import AttemptEvidence, diff_gate
from chimera.evolution.ledger import SkillEval, SkillEvalLog
from chimera.evolution.propose import propose_skill
from chimera.evolution.rerun import Rerun, TaskRerunner
from chimera.evolution.skills import LearnedSkill, SkillStore
from chimera.governance.validators import SkillValidator
from chimera.protocols import AuditSink, SupportsComplete

Decision = Literal["not_minted", "rejected", "untestable", "discarded", "kept"]


@dataclass(frozen=True)
class GateResult:
    """The re-run gate's result.

    Attributes:
        passed: the skill made its tasks significantly better.
        reason: one line (the paired decision's, or why nothing ran).
        record: what a passing skill carries as ``tested`` ('' when it failed).
        verdict: the paired decision (``None`` when nothing ran).
        baseline, with_skill: the re-runs without and with the skill, in task order.
    """

    passed: bool
    reason: str
    record: str = ""
    verdict: PairedVerdict | None = None
    baseline: tuple[Rerun, ...] = ()
    with_skill: tuple[Rerun, ...] = ()


def rerun_gate(
    skill: LearnedSkill,
    tasks: Sequence[str],
    rerunner: TaskRerunner,
    *,
    origin: Sequence[str] = (),
    ledger: SkillEvalLog | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_n: int = MIN_PAIRS,
) -> GateResult:
    """Re-run ``tasks`` (less ``origin``: the tasks the skill was proposed from) without and
    with ``skill`` in the prompt and decide on the paired results (module docstring, step 3).

    Raises:
        KeyError: an unknown task id (from the re-runner).
    """
    chosen = [t for t in dict.fromkeys(tasks) if t not in set(origin)]
    if len(chosen) < min_n:
        return GateResult(
            False, f"refused: needs at least {min_n} tasks it was not proposed from, has "
            f"{len(chosen)}",
        )  # fmt: skip
    guidance = skill.render()
    baseline: list[Rerun] = []
    with_skill: list[Rerun] = []
    for task_id in chosen:
        baseline.append(rerunner.rerun(task_id, ""))
        run = rerunner.rerun(task_id, guidance)
        with_skill.append(run)
        if ledger is not None:
            ledger.append(SkillEval(skill.name, skill.version, task_id, run.passed, "gate"))
    verdict = paired_gate(
        [float(r.passed) for r in baseline], [float(r.passed) for r in with_skill],
        alpha=alpha, min_n=min_n,
    )  # fmt: skip
    record = f"re-run gate on {', '.join(chosen)}: {verdict.reason}" if verdict.established else ""
    return GateResult(
        verdict.established, verdict.reason, record, verdict, tuple(baseline), tuple(with_skill)
    )


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
        min_siblings: sibling tasks required besides the origin (at least ``MIN_PAIRS``
            by default: the gate's minimum sample).
        alpha: the gate's one-sided level.
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
        min_siblings: int = MIN_PAIRS,
        alpha: float = DEFAULT_ALPHA,
    ) -> None:
        if min_siblings < 1:
            raise ValueError("a skill is tested on at least one sibling task")
        self.alpha = alpha
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
        candidate = replace(skill, version=version)
        tested_by = rerun_gate(
            candidate, others, self.rerunner, origin=(origin,), ledger=self.ledger,
            alpha=self.alpha, min_n=self.min_siblings,
        )  # fmt: skip
        reruns = tested_by.with_skill
        results = {r.task_id: r.passed for r in reruns}
        if not tested_by.passed:
            reason = f"re-run gate: {tested_by.reason}"
            self.audit.append(
                "skill_discarded", name=skill.name, reason=reason, reruns=results, **where
            )
            return EvolveOutcome("discarded", reason, skill, reruns, proposed.tokens)
        tested = replace(
            skill, uses=0, successes=0, tested=tested_by.record, accepted_by="",
        )  # fmt: skip
        kept = self.store.mint(tested)
        self.audit.append(
            "skill_kept",
            name=kept.name,
            version=kept.version,
            trusted=kept.trusted,
            reruns=results,
            gate=tested_by.reason,
            **where,
        )
        reason = f"kept v{kept.version} (awaiting a person's acceptance): {tested_by.reason}"
        return EvolveOutcome("kept", reason, kept, reruns, proposed.tokens)
