"""The review crew: a crew as the AutonomousAgent's manager review, and the session part that
plugs it into every run.

``[tool.chimera.review] crew = "review"`` names a crew file (``.chimera.d/crews/review.yaml``);
every agent of every session (``solve``, ``run``, the Action) then has its attempts reviewed by
that crew instead of the single manager call — for example a tests reviewer and a security
reviewer in parallel, their reviews consolidated into one verdict. Core never imports this
package: :class:`ReviewCrew` is a :class:`chimera.core.deps.Reviewer` (the shape of
:meth:`chimera.core.supervisor.ManagerReview.review`), and :class:`CrewsPart` has the session
factory's ``SessionPart`` shape (``attach(session)``, ``agent_deps(deps, session)``).

The verdict is never an opinion waved through:

* a ``supervisor`` crew's verdict is the supervisor's synthesis, parsed like a manager review;
* otherwise every role's answer is parsed; any rejection sends the attempt back (the reasons
  kept with their roles); approval needs every role to approve explicitly;
* an answer that parses to no verdict — a role's or the supervisor's, or a crew that produced
  nothing — makes the whole review *no review* (``parsed=False``): never an approval, and the
  checks alone decide.

The crew file is read once, when the session opens (before any agent edits the tree), so an
attempt that rewrites ``.chimera.d/`` cannot change its own reviewers.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from chimera.core.deps import PartSession
from chimera.core.supervisor import ManagerReview, ReviewVerdict, parse_review
from chimera.crews.agent import RoleBackends
from chimera.crews.crew import CrewResult, CrewRuntime, parse_delegations
from chimera.crews.loader import load_crew, resolve_crew
from chimera.crews.model import CrewDefinition
from chimera.errors import ConfigError
from chimera.governance.redactor import cut_redacted
from chimera.protocols import EventSink, Purpose, SupportsComplete, Usage

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from chimera.governance.audit import AuditLog
    from chimera.providers import TokenBudget

__all__ = ["VERDICT_LINE", "CrewsPart", "ReviewCrew", "crew_verdict"]

VERDICT_LINE = (
    "## Your answer\nStart with one line: `APPROVE` or `REJECT: <the reason, one sentence>`; "
    "then your points, one per line."
)
_REASON_CHARS = 600


def crew_verdict(result: CrewResult, *, supervisor: str | None = None) -> ReviewVerdict:
    """One verdict from a review crew's result (rules in the module docstring).

    ``supervisor``: the supervising role of a ``supervisor`` crew; its own last answer
    decides (a crew whose supervisor gave none is no review — the workers' consolidation is
    never parsed as a verdict, since it quotes every reviewer's words).
    """
    usage = Usage(result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.cost_usd)
    model = f"crew:{result.crew}"
    raw = result.answer
    if result.status == "failed":
        return ReviewVerdict(False, "", False, raw, usage, model)
    if supervisor is not None:
        own = [o for o in result.outputs if o.role == supervisor and o.text]
        if not own:
            return ReviewVerdict(False, "", False, raw, usage, model)
        _asks, text = parse_delegations(own[-1].text)
        approved, reason, parsed = parse_review(text)
        return ReviewVerdict(approved and parsed, reason, parsed, raw, usage, model)
    latest: dict[str, str] = {}
    for o in result.outputs:
        latest[o.role] = o.text
    rejections: list[str] = []
    approvals: list[str] = []
    unparsed = False
    for role, text in latest.items():
        approved, reason, parsed = parse_review(text)
        if not parsed:
            unparsed = True
        elif not approved:
            rejections.append(f"{role}: {reason}")
        else:
            approvals.append(f"{role}: {reason}" if reason else role)
    if rejections:
        reason = cut_redacted("; ".join(rejections), _REASON_CHARS)
        return ReviewVerdict(False, reason, True, raw, usage, model)
    if unparsed:
        return ReviewVerdict(False, "", False, raw, usage, model)
    # The reviewers' words, redacted before the cut (a cut through a token keeps a piece).
    reason = cut_redacted("; ".join(approvals), _REASON_CHARS)
    return ReviewVerdict(True, reason, True, raw, usage, model)


class ReviewCrew:
    """A crew reviewing one attempt (the shape of ``ManagerReview.review``).

    Args:
        definition: the crew (its roles take no tools: the evidence is in their prompt).
        run_budget: the run's budget (roles with a model of their own reserve on it).
        make: a model name to an unbudgeted backend (cached by the caller).
        default_model: the run's model (``rung: 0``).
        rungs: the run's ladder.
        audit: ``crew.*`` events and budget refusals.
        events: live progress.
        max_tokens: each role call's completion cap.

    Raises:
        ConfigError: a role has tools.
    """

    def __init__(
        self,
        definition: CrewDefinition,
        *,
        run_budget: TokenBudget,
        make: Callable[[str], SupportsComplete],
        default_model: str,
        rungs: Sequence[str] = (),
        audit: AuditLog | None = None,
        events: EventSink | None = None,
        max_tokens: int = 1024,
    ) -> None:
        armed = [r.name for r in definition.roles if r.tools]
        if armed:
            raise ConfigError(
                f"{definition.source}: review crew roles take no tools (the diff is in their "
                f"prompt); remove 'tools' from: {', '.join(armed)}"
            )
        self.definition = definition
        self.run_budget = run_budget
        self.make = make
        self.default_model = default_model
        self.rungs = list(rungs)
        self.audit = audit
        self.events = events
        self.max_tokens = max_tokens
        self.evidence = ManagerReview()

    def review(
        self,
        backend: SupportsComplete,
        *,
        task: str,
        targets: Sequence[str],
        diff: str,
        summary: str,
        plan: str = "",
    ) -> ReviewVerdict:
        """Run the crew on the attempt's evidence; roles without a model of their own use
        ``backend`` (the agent's current rung). Never raises for a role's budget refusal or
        provider error: that role's answer is missing, so the review is *no review*."""
        messages = self.evidence.messages(
            task=task, targets=targets, diff=diff, summary=summary, plan=plan
        )
        evidence = f"{messages[1]['content']}\n\n{VERDICT_LINE}"
        backends = RoleBackends(
            self.definition,
            run_budget=self.run_budget,
            make=self.make,
            default_model=self.default_model,
            rungs=self.rungs,
            shared=backend,
            audit=self.audit,
            max_tokens=self.max_tokens,
        )
        runtime = CrewRuntime(
            backends.for_role, None, self.audit, self.events, purpose=Purpose.REVIEW
        )
        result = self.definition.build().run(evidence, runtime)
        process = self.definition.process
        lead = getattr(process, "role", None) if process.kind_name == "supervisor" else None
        verdict = crew_verdict(result, supervisor=lead)
        if self.audit is not None:
            self.audit.append(
                "crew.verdict",
                crew=self.definition.name,
                status=result.status,
                parsed=verdict.parsed,
                approved=verdict.approved,
                reason=cut_redacted(verdict.reason, 300),
            )
        return verdict


D = TypeVar("D", bound="DataclassInstance")


class CrewsPart:
    """The session part that makes a configured review crew every agent's reviewer.

    Register it with the session factory (``SessionFactory(parts=[CrewsPart()])``). With no
    ``[tool.chimera.review] crew`` (and no ``crew`` given here) it changes nothing.

    Args:
        crew: a crew name or path that overrides the configuration.
    """

    def __init__(self, crew: str | None = None) -> None:
        self.crew = crew
        self._reviewers: dict[str, ReviewCrew] = {}

    def attach(self, session: PartSession) -> None:
        """Load the crew file once for this session (before any agent runs).

        Raises:
            UsageError: the named crew file does not exist.
            CrewError: the crew file is invalid (every problem listed).
            ConfigError: a review role has tools, or a role's model cannot be priced.
        """
        name = self.crew or session.config.review.crew
        if not name:
            return
        definition = load_crew(resolve_crew(session.root, name))
        config = session.config

        @functools.cache
        def make(model: str) -> SupportsComplete:
            from chimera.providers import make_backend

            return make_backend(model, config)

        self._reviewers[session.run_id] = ReviewCrew(
            definition,
            run_budget=session.budget,
            make=make,
            default_model=session.model,
            rungs=[session.model, *config.models.ladder],
            audit=session.audit,
            events=session.events,
        )
        session.audit.append(
            "crew.attached",
            crew=definition.name,
            source=definition.source,
            kind=definition.process.kind_name,
            roles=[r.name for r in definition.roles],
        )

    def reviewer(self, session: PartSession) -> ReviewCrew | None:
        """The session's review crew (``None`` when none is configured)."""
        return self._reviewers.get(session.run_id)

    def agent_deps(self, deps: D, session: PartSession) -> D:
        """``deps`` with the review crew as its ``reviewer`` (unchanged without one)."""
        crew = self._reviewers.get(session.run_id)
        if crew is None:
            return deps
        changes: dict[str, Any] = {"reviewer": crew}
        return dataclasses.replace(deps, **changes)
