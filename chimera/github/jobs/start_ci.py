"""The start-ci job: CI starts on a Chimera PR only after a person looked.

Chimera pushes its branch and opens its PR with the workflow's ``GITHUB_TOKEN``, whose events
start no workflow, so agent-written code never runs in the project's CI (with its secrets)
before anyone has looked. After an approving review of the PR's *current head commit* by a
person with write access other than the one who started the run, this job — holding the
GitHub App's installation token, whose events do start workflows — closes and reopens the PR.
``reopened`` is a default ``pull_request`` activity type, so CI starts, and the head stays
the approved commit. A later Chimera push is again a ``GITHUB_TOKEN`` push: CI waits for a
new approval.

The job re-derives the approval itself through the API (the same checks as decide), so a
wrong ``if:`` in a workflow cannot start CI on an unapproved head. Without an App (the
GITHUB_TOKEN-only tier, :mod:`chimera.github.trust.tier`) a close and reopen would start nothing:
the job refuses, and says so on the pull request and in the job summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.errors import ChimeraError
from chimera.github.action.context import ActionContext, JobResult
from chimera.github.gate.events import Act, Decision, decide
from chimera.github.gate.permissions import resolve

if TYPE_CHECKING:
    from chimera.github.trust.settings import ActionSettings

__all__ = ["StartCiResult", "start_ci_job"]


@dataclass(frozen=True)
class StartCiResult:
    """What start-ci did: ``started`` (closed and reopened ``pull`` at ``head``),
    ``ignored``, or ``no-app`` (approved, but the GITHUB_TOKEN-only tier cannot start CI:
    ``reason``)."""

    decision: Decision
    status: str
    pull: int | None = None
    head: str | None = None
    reason: str = ""

    def to_job(self) -> JobResult:
        return JobResult(
            outputs={"status": self.status, "pr-number": str(self.pull or "")},
            record=self.decision.to_json()
            | {"status": self.status, "head": self.head, "reason": self.reason},
            summary=(
                f"**Chimera:** CI started on PR #{self.pull} at `{(self.head or '')[:12]}`."
                if self.status == "started"
                else f"**Chimera:** PR #{self.pull}: {self.reason}."
                if self.reason
                else ""
            ),
        )


def start_ci_job(ctx: ActionContext, settings: ActionSettings) -> StartCiResult:
    """Close and reopen the approved Chimera PR of the review event in ``ctx``.

    Raises:
        UsageError: no repository or no token.
        GitHubError: the API failed after retries.
        ChimeraError: the PR's head moved while it was reopened (CI would test another commit).
    """
    decision = decide(ctx.event_name, ctx.payload, settings)
    if decision.action is not Act.RESUME:
        return StartCiResult(decision, "ignored")
    client = ctx.connect()
    res = resolve(decision, client, settings)
    if res.decision.action is not Act.START_CI or res.pull is None:
        return StartCiResult(res.decision, "ignored")
    pull = res.pull
    if settings.no_app:
        from chimera.github.trust.summary import render_marker
        from chimera.github.trust.tier import NO_APP_CI

        # Said once per approved head, where the reviewer looks.
        marker = render_marker("no-app-ci", {"pull": pull.number, "head": pull.head_sha})
        client.comment(pull.number, f"**Chimera:** {NO_APP_CI}.\n\n{marker}", marker=marker)
        return StartCiResult(
            res.decision, "no-app", pull=pull.number, head=pull.head_sha, reason=NO_APP_CI
        )
    client.update_pull(pull.number, state="closed")
    reopened = client.update_pull(pull.number, state="open")
    if reopened.head_sha != pull.head_sha:
        raise ChimeraError(
            f"PR #{pull.number}'s head moved to {reopened.head_sha[:12]} while CI was started on "
            f"the approved {pull.head_sha[:12]}; approve the new head"
        )
    return StartCiResult(res.decision, "started", pull=pull.number, head=pull.head_sha)
