"""Refining a skill with GEPA; the refinement replaces its parent only through the gates.

GEPA (Agrawal et al., 2025, arXiv 2507.19457; the ``gepa`` package, ``eval`` extra) evolves
text by reflective mutation: it runs a candidate on tasks, shows a *reflection* model the
results with their feedback, and keeps proposals that score better. Here the candidate is
the skill's body (one component, ``body``), a task is a re-run with the skill in context
(:class:`~chimera.evolution.rerun.TaskRerunner`: the eval harness, scored by the Spec —
``check_drift`` — 1.0 pass / 0.0 fail, with the failure line as feedback), and the reflection
model is the gateway (any ``SupportsComplete``, purpose ``plan``) wrapped as GEPA's
``reflection_lm`` callable. Every proposed body passes ``SkillValidator`` before it runs; an
unsafe one scores 0 without running.

The skill's recorded failures are split three ways (seeded): a *train* set GEPA reflects on,
a *validation* set — disjoint from train — GEPA selects candidates on (its ``valset``), and a
*holdout* set it never sees, to which the caller may add tasks the skill should help that were
never recorded (``holdout_extra``: the same family's other tasks of the chain). The best
candidate then replaces its parent only when

* :class:`~chimera.eval.gates.TransferGate` promotes it on the holdout: significantly better by
  the one-sided exact McNemar test, on at least ``MIN_PAIRS`` tasks and a non-degenerate
  interval (a refusal is the kept parent, with the gate's one-line reason); and
* it does not regress on the parent's passing set: no significant drop
  (:func:`~chimera.eval.gates.rollback_verdict`) when the set is large enough to test, and
  with fewer tasks than the gates' minimum, every one still passes.

The candidate that replaces its parent is minted *tested* (the gate's line) and accepted by
whoever ran the round (``accepted_by``: running ``chimera evolve`` is a person's decision to
adopt what passes the gate).

**Budget.** ``max_metric_calls`` bounds re-runs — GEPA's search *and* the gate's re-runs
(both arms on the holdout and passing sets) — and it holds: GEPA checks its own limit only
between iterations, so the adapter counts every re-run and refuses (scores 0, runs nothing)
once the search share is spent. The reflection model's tokens are bounded by its
``BudgetedBackend``; a refusal there ends the round with the parent unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from chimera.errors import BudgetExceeded, MissingExtraError, UsageError
from chimera.evolution.ledger import SkillEval, SkillEvalLog
from chimera.evolution.propose import validate_skill
from chimera.evolution.rerun import TaskRerunner
from chimera.evolution.skills import LearnedSkill, SkillStore
from chimera.governance.redactor import SecretRedactor
from chimera.governance.validators import SkillValidator
from chimera.protocols import AuditSink, Message, Purpose, SupportsComplete

COMPONENT = "body"
RefineDecision = Literal["replaced", "kept_parent", "no_candidate"]


@dataclass
class MetricBudget:
    """A hard cap on re-runs: :meth:`take` says whether one more may run (and counts it)."""

    limit: int
    used: int = 0

    def take(self) -> bool:
        if self.used >= self.limit:
            return False
        self.used += 1
        return True


@dataclass(frozen=True)
class RefineOutcome:
    """One refinement round's result.

    Attributes:
        decision: ``replaced`` (the candidate is the skill's next version), ``kept_parent``
            (a gate said no, or the reflection budget ran out) or ``no_candidate`` (GEPA found
            nothing different from the parent).
        reason: one line.
        skill: the skill as it stands after the round.
        candidate_body: the body the gates judged ('' when none).
        metric_calls: re-runs made (never more than ``max_metric_calls``).
        gate: the gates' figures (JSON-ready), when they ran.
    """

    decision: RefineDecision
    reason: str
    skill: LearnedSkill
    candidate_body: str = ""
    metric_calls: int = 0
    gate: Mapping[str, Any] = field(default_factory=dict)


def split_failing(
    failing: Sequence[str], *, seed: int = 0
) -> tuple[list[str], list[str], list[str]]:
    """The (train, validation, holdout) split of failing task ids: a third (at least one)
    each to train and validate on, the rest held out; pairwise disjoint and seeded, so the
    same ids give the same split.

    Raises:
        UsageError: fewer than 3 failing tasks (one for each set).
    """
    ids = sorted(dict.fromkeys(failing))
    if len(ids) < 3:
        raise UsageError(
            f"refinement needs at least 3 recorded failures (1 to train on, 1 to validate on, "
            f"1 held out); has {len(ids)}"
        )
    random.Random(seed).shuffle(ids)
    cut = max(1, len(ids) // 3)
    return sorted(ids[:cut]), sorted(ids[cut : 2 * cut]), sorted(ids[2 * cut :])


class ReflectionLM:
    """The gateway as GEPA's ``reflection_lm``: a prompt (text or messages) → the answer.

    GEPA's proposer swallows an exception from the reflection model and goes on to the next
    iteration, so a refusal (``BudgetExceeded``) is remembered here and :meth:`stopper` ends
    the search at GEPA's next check.
    """

    def __init__(self, backend: SupportsComplete) -> None:
        self.backend = backend
        self.refused: BudgetExceeded | None = None

    def __call__(self, prompt: str | list[Message]) -> str:
        if self.refused is not None:
            raise self.refused
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        try:
            return self.backend.complete(messages, purpose=Purpose.PLAN).text
        except BudgetExceeded as exc:
            self.refused = exc
            raise

    def stopper(self, _state: object) -> bool:
        return self.refused is not None


class _QuietLogger:
    """GEPA's logger protocol; the lines are kept (the last few go to the audit log)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, message: str) -> None:
        self.lines.append(str(message))


class SkillAdapter:
    """GEPA's adapter for one skill: evaluate a body on task ids by re-running them.

    ``propose_new_texts`` is ``None`` so GEPA uses its reflective proposer with the
    reflection model (GEPA checks the attribute, not a method).
    """

    propose_new_texts = None

    def __init__(
        self,
        parent: LearnedSkill,
        rerunner: TaskRerunner,
        budget: MetricBudget,
        *,
        validator: SkillValidator,
        describe: Callable[[str], str],
        redactor: SecretRedactor | None = None,
    ) -> None:
        self.parent = parent
        self.redactor = redactor or SecretRedactor.from_environment()
        self.rerunner = rerunner
        self.budget = budget
        self.validator = validator
        self.describe = describe
        self.seen: dict[str, dict[str, float]] = {}

    def candidate(self, body: str) -> LearnedSkill:
        """The skill with ``body`` (the reflection model's words), redacted: what is re-run
        is what would be minted, and a credential never reaches the skill store."""
        body, _ = self.redactor.redact(body.strip())
        return replace(self.parent, body=body + "\n", version=self.parent.version + 1)

    def evaluate(
        self, batch: list[str], candidate: dict[str, str], capture_traces: bool = False
    ) -> Any:
        from gepa.core.adapter import EvaluationBatch

        skill = self.candidate(candidate[COMPONENT])
        problems = validate_skill(skill, self.validator)
        outputs: list[str] = []
        scores: list[float] = []
        traces: list[dict[str, str]] = []
        for task_id in batch:
            if problems:
                score, feedback = 0.0, "rejected by SkillValidator: " + "; ".join(problems)
            elif not self.budget.take():
                score, feedback = 0.0, "not run: the re-run budget is spent"
            else:
                run = self.rerunner.rerun(task_id, skill.render())
                score = 1.0 if run.passed else 0.0
                feedback = "the Spec passed" if run.passed else f"{run.outcome}: {run.detail}"
                self.seen.setdefault(candidate[COMPONENT], {})[task_id] = score
            outputs.append(feedback)
            scores.append(score)
            traces.append({"task": task_id, "feedback": feedback})
        return EvaluationBatch(
            outputs=outputs, scores=scores, trajectories=traces if capture_traces else None
        )

    def make_reflective_dataset(
        self, candidate: dict[str, str], eval_batch: Any, components_to_update: list[str]
    ) -> dict[str, list[dict[str, Any]]]:
        records = [
            {
                "Inputs": {"task": self.describe(str(t["task"]))},
                "Generated Outputs": "a change checked by the task's requirements",
                "Feedback": t["feedback"],
            }
            for t in eval_batch.trajectories or []
        ]
        return {name: records for name in components_to_update}


def _gepa() -> Any:
    try:
        import gepa
    except ImportError as exc:
        raise MissingExtraError("skill refinement (GEPA)", "eval") from exc
    return gepa


def refine_skill(
    parent: LearnedSkill,
    *,
    failing: Sequence[str],
    passing: Sequence[str],
    rerunner: TaskRerunner,
    reflection: SupportsComplete,
    max_metric_calls: int,
    audit: AuditSink,
    store: SkillStore | None = None,
    ledger: SkillEvalLog | None = None,
    validator: SkillValidator | None = None,
    describe: Callable[[str], str] = str,
    seed: int = 0,
    redactor: SecretRedactor | None = None,
    holdout_extra: Sequence[str] = (),
    accepted_by: str = "",
    alpha: float = 0.05,
) -> RefineOutcome:
    """One bounded refinement round of ``parent`` (see the module docstring).

    Args:
        failing, passing: task ids where ``parent`` failed / passed (recorded re-runs).
        holdout_extra: more held-out task ids the skill should help (never recorded, never
            shown to GEPA); ids in ``failing`` or ``passing`` are ignored.
        accepted_by: recorded on a candidate that replaces its parent.
        alpha: the gates' one-sided level.
        max_metric_calls: the most re-runs this round may make, gate included.
        store: when given, a candidate that passes the gates is minted there (the parent
            stays on disk as ``v<N>.md``: ``chimera skills`` can show it, and undo is a
            re-import).
        describe: task id → the task's text, shown to the reflection model.
        redactor: a candidate body passes it before it is re-run or minted (default: the
            process environment's).

    Raises:
        UsageError: fewer than 3 failures, or a budget too small for the gate plus one search
            evaluation of the seed.
        MissingExtraError: ``gepa`` (the ``eval`` extra) is not installed.
    """
    gepa = _gepa()
    from chimera.eval.gates import MIN_PAIRS, TransferGate, rollback_verdict

    train, validation, holdout = split_failing(failing, seed=seed)
    passing = sorted(dict.fromkeys(p for p in passing if p not in set(failing)))
    known = {*failing, *passing}
    holdout = sorted({*holdout, *(t for t in holdout_extra if t not in known)})
    gate_calls = 2 * (len(holdout) + len(passing))
    search_calls = max_metric_calls - gate_calls
    floor = len(train) + len(validation) + 1
    if search_calls < floor:
        raise UsageError(
            f"max_metric_calls {max_metric_calls} is too small: the gate needs {gate_calls} "
            f"re-runs and the search at least {floor}"
        )
    checker = validator or SkillValidator()
    audit.append(
        "skill_refine_started", name=parent.name, version=parent.version, train=train,
        validation=validation, holdout=holdout, passing=passing,
        max_metric_calls=max_metric_calls,
    )  # fmt: skip
    budget = MetricBudget(search_calls)
    adapter = SkillAdapter(
        parent, rerunner, budget, validator=checker, describe=describe, redactor=redactor
    )
    logger = _QuietLogger()
    reflection_lm = ReflectionLM(reflection)
    best = parent.body
    try:
        result = gepa.optimize(
            seed_candidate={COMPONENT: parent.body},
            trainset=train,
            valset=validation,  # disjoint from train: GEPA selects on tasks it did not see
            adapter=adapter,
            reflection_lm=reflection_lm,
            max_metric_calls=search_calls,
            # A minibatch larger than the train set repeats tasks: re-runs spent twice.
            reflection_minibatch_size=min(3, len(train)),
            stop_callbacks=[reflection_lm.stopper],
            logger=logger,
            seed=seed,
            raise_on_exception=True,
        )
        best = str(result.best_candidate[COMPONENT])
    except BudgetExceeded as exc:
        reflection_lm.refused = reflection_lm.refused or exc
    if reflection_lm.refused is not None:
        reason = f"the reflection model's budget ran out: {reflection_lm.refused}"
        audit.append("skill_refine_stopped", name=parent.name, reason=reason)
        return RefineOutcome("kept_parent", reason, parent, metric_calls=budget.used)
    if best.strip() == parent.body.strip():
        reason = (
            f"GEPA found no body better than the parent on {len(train)} train and "
            f"{len(validation)} validation task(s)"
        )
        audit.append("skill_refine_nothing", name=parent.name, reason=reason, log=logger.lines[-5:])
        return RefineOutcome("no_candidate", reason, parent, metric_calls=budget.used)
    candidate = adapter.candidate(best)
    gate_budget = MetricBudget(gate_calls)

    def scores(skill: LearnedSkill, tasks: Sequence[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for task_id in tasks:
            if not gate_budget.take():  # unreachable by construction; kept as the hard cap
                raise UsageError("the gate's re-run budget is spent")
            run = rerunner.rerun(task_id, skill.render())
            out[task_id] = 1.0 if run.passed else 0.0
            if ledger is not None:
                ledger.append(SkillEval(skill.name, skill.version, task_id, run.passed, "gate"))
        return out

    gate_tasks = [*holdout, *passing]
    before, after = scores(parent, gate_tasks), scores(candidate, gate_tasks)
    transfer = TransferGate(
        frozenset(train), frozenset(validation), frozenset(holdout), alpha=alpha, seed=seed
    )
    verdict = transfer.evaluate(before, after)
    regressed = [t for t in passing if before[t] > after[t]]
    if len(passing) >= MIN_PAIRS:
        drop = rollback_verdict(
            {t: before[t] for t in passing}, {t: after[t] for t in passing}, seed=seed,
            alpha=alpha,
        )  # fmt: skip
        no_regression, regression_note = not drop.rollback, drop.reason
    else:
        no_regression = not regressed
        regression_note = "regressed: " + ", ".join(regressed) if regressed else "no regression"
    gate = {
        "transfer": verdict.to_json(),
        "passing": {"tasks": passing, "regressed": regressed, "note": regression_note},
    }
    calls = budget.used + gate_budget.used
    if not (verdict.promoted and no_regression):
        why = f"{verdict.outcome}: {verdict.reason}" if not verdict.promoted else regression_note
        reason = f"kept the parent: transfer gate {why}"
        audit.append("skill_refine_rejected", name=parent.name, reason=reason, gate=gate)
        return RefineOutcome("kept_parent", reason, parent, best, calls, gate)
    record = f"transfer gate on {len(holdout)} holdout task(s): {verdict.reason}"
    tested = replace(
        candidate, uses=0, successes=0, claimed_uses=0, claimed_successes=0, tested=record,
        accepted_by=accepted_by,
    )  # fmt: skip
    kept = store.mint(tested) if store else tested
    reason = f"replaced v{parent.version} by v{kept.version}: {verdict.reason}; {regression_note}"
    audit.append("skill_refined", name=kept.name, version=kept.version, reason=reason, gate=gate)
    return RefineOutcome("replaced", reason, kept, best, calls, gate)
