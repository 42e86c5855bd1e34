"""The decide job: the gate before the agent job (token ``issues: write``; no LLM key).

It decides from the event, makes the API checks (the labeller's permission, the issue's state,
an existing Chimera PR, an approval's head commit), explains a refusal on the issue, and asks
the ChangeQueue for a slot (``chimera:running``) or queues the issue (``chimera:queued`` plus a
comment). Its ``proceed`` output says whether the agent job runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.github.events import Act, Decision, decide
from chimera.github.jobs.context import ActionContext, JobResult, make_queue, post_outcome
from chimera.github.jobs.drain import cancel
from chimera.github.permissions import resolve

if TYPE_CHECKING:
    from chimera.github.settings import ActionSettings

__all__ = ["DecideResult", "decide_job", "dry_run"]


@dataclass(frozen=True)
class DecideResult:
    """The gate's verdict.

    Attributes:
        event_decision: what the payload alone said (its action, issue and pull are the
            ``decision``, ``issue`` and ``pull`` outputs).
        final: the decision after the API checks.
        proceed: the agent job runs.
        status: ``running``, ``queued``, ``refused``, or the decision's action.
        admission: the ChangeQueue's reason, for a new run.
    """

    event_decision: Decision
    final: Decision
    proceed: bool
    status: str
    admission: str | None = None

    def to_job(self) -> JobResult:
        ignored = self.final.action is Act.IGNORE
        decided = "ignore" if ignored else self.event_decision.action.value
        record = self.final.to_json()
        if self.admission is not None:
            record |= {"admission": self.admission}
        return JobResult(
            outputs={
                "decision": decided,
                "issue": str(self.event_decision.issue or ""),
                "pull": str(self.event_decision.pull or ""),
                "proceed": "true" if self.proceed else "false",
                "status": self.status,
            },
            record=record,
        )


def dry_run(ctx: ActionContext, settings: ActionSettings, mode: str) -> JobResult:
    """The decision from the payload alone, offline, changing nothing (``--dry-run``)."""
    decision = decide(ctx.event_name, ctx.payload, settings)
    return JobResult(outputs={}, record=decision.to_json() | {"mode": mode, "dry_run": True})


def decide_job(ctx: ActionContext, settings: ActionSettings) -> DecideResult:
    """Run the gate for the event in ``ctx``.

    Raises:
        UsageError: no repository or no token.
        GitHubError: the API failed after retries.
    """
    decision = decide(ctx.event_name, ctx.payload, settings)
    client = ctx.connect()
    if decision.action in (Act.RUN, Act.RESUME, Act.RERUN):
        final = resolve(decision, client, settings).decision
        if final.action is Act.IGNORE:
            if final.explain and (final.issue or final.pull):
                target = int(final.pull or final.issue or 0)
                post_outcome(ctx, client, target, "refused", f"Nothing was done: {final.reason}.")
            return DecideResult(decision, final, proceed=False, status="refused")
        if final.action is Act.RUN:
            assert final.issue is not None and final.actor is not None
            admission = make_queue(client, settings).admit(
                final.issue, final.actor, claimed=final.from_queue
            )
            return DecideResult(
                decision,
                final,
                proceed=admission.admitted,
                status="running" if admission.admitted else "queued",
                admission=admission.reason,
            )
        return DecideResult(decision, final, proceed=True, status=final.action.value)
    if decision.action is Act.CANCEL:
        cancel(ctx, decision, client, settings)
    elif decision.action is Act.IGNORE and decision.explain and decision.issue:
        post_outcome(
            ctx, client, decision.issue, "refused", f"Nothing was done: {decision.reason}."
        )
    return DecideResult(decision, decision, proceed=False, status=decision.action.value)
