"""The rule machinery: :class:`Verdict`, :class:`Rule`, :class:`RuleMatch`, :class:`RuleSet`.

A rule's ``test`` is a function of the action's
:class:`~chimera.governance.rules.facts.ActionFacts` returning the reasons it matched (empty
when it does not); :meth:`RuleSet.evaluate` runs every rule in order and returns the matches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from chimera.governance.actions import Action
from chimera.governance.rules.facts import ActionFacts


class Verdict(StrEnum):
    """The kernel's answer. Ordered by severity: allow < warn < review < block.

    * ``allow`` — run it.
    * ``warn`` — run it, and note why in the audit log and summary.
    * ``review`` — do not run it now; feed the reason back to the agent and list it for the
      human reviewer (ambiguous: might be fine, a person decides).
    * ``block`` — do not run it; an unambiguous hostile signature.
    """

    ALLOW = "allow"
    WARN = "warn"
    REVIEW = "review"
    BLOCK = "block"

    @property
    def severity(self) -> int:
        return _SEVERITY[self]

    @property
    def executes(self) -> bool:
        """Whether an action with this verdict may run."""
        return self in (Verdict.ALLOW, Verdict.WARN)

    @classmethod
    def worst(cls, verdicts: Iterable[Verdict]) -> Verdict:
        return max(verdicts, key=lambda v: v.severity, default=cls.ALLOW)


_SEVERITY = {Verdict.ALLOW: 0, Verdict.WARN: 1, Verdict.REVIEW: 2, Verdict.BLOCK: 3}

RuleTest = Callable[[ActionFacts], Iterable[str]]


@dataclass(frozen=True, slots=True)
class Rule:
    """One lexical rule.

    Attributes:
        id: stable identifier (kebab-case), recorded in decisions and the audit log.
        description: one sentence for reports.
        verdict: what a match means.
        test: returns the reasons the action matches (empty: no match).
    """

    id: str
    description: str
    verdict: Verdict
    test: RuleTest

    def check(self, facts: ActionFacts) -> RuleMatch | None:
        reasons = tuple(dict.fromkeys(r for r in self.test(facts) if r))
        if not reasons:
            return None
        return RuleMatch(rule=self, reasons=reasons)


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """A rule that matched, with the reasons it gave."""

    rule: Rule
    reasons: tuple[str, ...]

    @property
    def verdict(self) -> Verdict:
        return self.rule.verdict


@dataclass
class RuleSet:
    """An ordered collection of :class:`Rule`; :func:`chimera.governance.rules.default_rule_set`
    is the shipped set (the package assembles the families, which import this module).

    Raises:
        ValueError: two rules share an id.
    """

    rules: list[Rule] = field(default_factory=list)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for rule in self.rules:
            if rule.id in seen:
                raise ValueError(f"duplicate rule id: {rule.id}")
            seen.add(rule.id)

    def ids(self) -> list[str]:
        return [r.id for r in self.rules]

    def add(self, rule: Rule) -> None:
        if rule.id in self.ids():
            raise ValueError(f"duplicate rule id: {rule.id}")
        self.rules.append(rule)

    def without(self, *ids: str) -> RuleSet:
        """A copy with the named rules removed (unknown ids raise ``KeyError``)."""
        known = set(self.ids())
        missing = [i for i in ids if i not in known]
        if missing:
            raise KeyError(f"unknown rule id(s): {', '.join(missing)}")
        return RuleSet([r for r in self.rules if r.id not in ids])

    def evaluate(self, action: Action) -> list[RuleMatch]:
        """Every match of every rule against ``action``, in rule order."""
        facts = ActionFacts(action)
        matches: list[RuleMatch] = []
        for rule in self.rules:
            match = rule.check(facts)
            if match is not None:
                matches.append(match)
        return matches


__all__ = ["Rule", "RuleMatch", "RuleSet", "RuleTest", "Verdict"]
