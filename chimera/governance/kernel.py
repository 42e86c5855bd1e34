"""The TrustKernel: one verdict per action, from lexical rules and the taint layer.

``TrustKernel.evaluate(action) -> Decision(verdict, rule_ids, reasons)`` where ``verdict`` is
``allow``, ``warn``, ``review`` or ``block`` (design after AgentTrust, arXiv 2606.08539: a
deterministic rule layer for fixed-signature threats, an optional semantic judge for intent,
distilled rules that make the judge cheaper over time).

Invariant: **never hard-block a benign action.** ``block`` is reserved for unambiguous
signatures (see :mod:`chimera.governance.rules`); anything ambiguous is ``review`` (denied in
the moment, listed for a person) or ``warn`` (allowed, noted). The judge, when one is given,
may only settle a ``review`` — it can never produce ``block``, so a biased model cannot turn a
benign action into a hard failure.

Everything here is lexical analysis, never a boundary: the sandbox (no network, own process
namespace, allowlisted environment) is the boundary. The kernel decides what is *attempted*
and makes each attempt visible in the audit log.

Measured on the corpora kept in ``tests/data/governance/`` (``test_governance_corpus.py``
prints this table on every run and fails when this docstring no longer matches it; default
rules, no judge, not a single model call)::

    corpus                  n   allow  warn  review  block
    benign_actions.yaml   135     123    12       0      0
    hostile_actions.yaml  132       0     0       8    124

Every benign action runs (allow or warn); every hostile one is stopped (review or block). With
the run tainted (a TaintLedger holding untrusted input among the assessors), the benign corpus
moves to 62 allow / 1 warn / 72 review / 0 block — commands off the tainted-run allowlist wait
for a person, nothing benign is hard-blocked — and the hostile corpus stays 8 review /
124 block (``test_governance_taint.py``).

Why no judge is wired by default (see :mod:`chimera.governance.judge`): the rules and the taint
ledger stop every hostile corpus entry without a model call; a judge would add a model call to
most tool actions and a bias of its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from chimera.governance.actions import Action
from chimera.governance.rules import RuleMatch, RuleSet, Verdict, default_rule_set


@dataclass(frozen=True, slots=True)
class Decision:
    """The kernel's answer for one action.

    Attributes:
        verdict: ``allow`` | ``warn`` | ``review`` | ``block``.
        rule_ids: ids of the rules (or layers, e.g. ``taint-allowlist``) behind the verdict.
        reasons: one human sentence per finding, in the order found.
        source: which layer decided: ``rules``, ``taint``, ``judge``, or a combination.
    """

    verdict: Verdict
    rule_ids: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    source: str = "rules"

    @classmethod
    def allow(cls) -> Decision:
        return cls(Verdict.ALLOW)

    @property
    def executes(self) -> bool:
        """Whether the action may run (``allow`` or ``warn``)."""
        return self.verdict.executes

    @property
    def denied(self) -> bool:
        return not self.executes

    def message(self) -> str:
        """The text fed back to the agent (and shown to the reviewer) for a denied action."""
        head = {
            Verdict.BLOCK: "Blocked by governance",
            Verdict.REVIEW: "Held for human review (not executed)",
            Verdict.WARN: "Allowed with a warning",
            Verdict.ALLOW: "Allowed",
        }[self.verdict]
        rules = f" [{', '.join(self.rule_ids)}]" if self.rule_ids else ""
        body = "; ".join(self.reasons) if self.reasons else "no rule matched"
        tail = ""
        if self.denied:
            tail = (
                " Do not retry this action in another form; continue the task without it, "
                "or explain in your final answer why it is needed."
            )
        return f"{head}{rules}: {body}.{tail}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "rule_ids": list(self.rule_ids),
            "reasons": list(self.reasons),
            "source": self.source,
        }

    @staticmethod
    def combine(decisions: Iterable[Decision]) -> Decision:
        """The most severe verdict; ids and reasons of every contributing non-allow decision.

        Reasons of milder layers are kept after the deciding ones, so a ``review`` still shows
        the ``warn`` notes that came with it.
        """
        items = [d for d in decisions if d.verdict is not Verdict.ALLOW]
        if not items:
            return Decision.allow()
        items.sort(key=lambda d: -d.verdict.severity)
        verdict = items[0].verdict
        ids = tuple(dict.fromkeys(i for d in items for i in d.rule_ids))
        reasons = tuple(dict.fromkeys(r for d in items for r in d.reasons))
        sources = "+".join(dict.fromkeys(d.source for d in items if d.verdict is verdict))
        return Decision(verdict, ids, reasons, sources)


def decision_from_matches(matches: Sequence[RuleMatch], source: str = "rules") -> Decision:
    """Fold rule matches into one :class:`Decision` (most severe first)."""
    if not matches:
        return Decision.allow()
    ordered = sorted(matches, key=lambda m: -m.verdict.severity)
    verdict = ordered[0].verdict
    return Decision(
        verdict=verdict,
        rule_ids=tuple(m.rule.id for m in ordered),
        reasons=tuple(dict.fromkeys(r for m in ordered for r in m.reasons)),
        source=source,
    )


@runtime_checkable
class Assessor(Protocol):
    """A further layer the kernel consults (the TaintLedger, an AdaptiveToolAllowlist, an
    AggregateMonitor's per-agent view). Returns a Decision; ``allow`` means no objection."""

    def assess_action(self, action: Action) -> Decision: ...


class Settler(Protocol):
    """A second opinion on a ``review`` decision (the
    :class:`~chimera.governance.judge.SemanticJudge`): returns the decision to use instead,
    never one more permissive than the rules allow (the judge clamps its own answer)."""

    def settle(self, action: Action, decision: Decision) -> Decision: ...


class TrustKernel:
    """Evaluate actions: the RuleSet, then each assessor; the most severe verdict wins.

    Args:
        rules: the lexical rules (default: :func:`~chimera.governance.rules.default_rule_set`).
        assessors: further layers (taint ledger, tool allowlist, aggregate monitor).
        judge: an optional :class:`~chimera.governance.judge.SemanticJudge` consulted only for
            ``review`` verdicts; it may settle them as allow/warn or confirm the review, never
            produce ``block``. No shipped surface passes one (see the module docstring).
    """

    def __init__(
        self,
        rules: RuleSet | None = None,
        *,
        assessors: Sequence[Assessor] = (),
        judge: Settler | None = None,
    ) -> None:
        self.rules = rules if rules is not None else default_rule_set()
        self.assessors: list[Assessor] = list(assessors)
        self.judge = judge

    def add_assessor(self, assessor: Assessor) -> None:
        self.assessors.append(assessor)

    def evaluate(self, action: Action) -> Decision:
        """The verdict for ``action``; never raises for any Action (a rule that crashes is a
        bug, reported as ``review`` with the exception's text rather than letting it run)."""
        try:
            matches = self.rules.evaluate(action)
        except Exception as exc:  # a crashing rule must fail closed, softly (review)
            return Decision(
                Verdict.REVIEW,
                ("kernel-error",),
                (f"the rule engine failed on this action ({type(exc).__name__}: {exc})",),
                "rules",
            )
        decisions = [decision_from_matches(matches)]
        for assessor in self.assessors:
            decisions.append(assessor.assess_action(action))
        decision = Decision.combine(decisions)
        if (
            self.judge is not None
            and decision.verdict is Verdict.REVIEW
            and decision.source == "rules"
        ):
            decision = self.judge.settle(action, decision)
        return decision

    def evaluate_command(
        self,
        command: str,
        workspace: str | os.PathLike[str],
        *,
        cwd: str | None = None,
        home: str | None = None,
    ) -> Decision:
        """The verdict for a shell command — e.g. an agent-written requirement's ``command``
        check, which must pass the kernel before it runs (in the sandbox)."""
        return self.evaluate(Action.for_command(command, workspace, cwd=cwd, home=home))


__all__ = ["Assessor", "Decision", "Settler", "TrustKernel", "Verdict", "decision_from_matches"]
