"""The publish job: apply, scan, push, open or update the PR, label, comment (the workflow's
``GITHUB_TOKEN``; no LLM key; no project code). The work is
:func:`chimera.github.publish.publish`, from decide's and verify's outputs; this module gives
it the job's context and turns its result into step outputs and the job summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import UsageError
from chimera.github.jobs.context import ActionContext, JobResult, make_queue
from chimera.github.publish import PublishContext, PublishResult, publish
from chimera.github.trust import Decided, Verified

if TYPE_CHECKING:
    from chimera.github.settings import ActionSettings

__all__ = ["PublishJobResult", "publish_job"]


@dataclass(frozen=True)
class PublishJobResult:
    """What publishing did (see :class:`~chimera.github.publish.PublishResult`)."""

    result: PublishResult

    def to_job(self) -> JobResult:
        result = self.result
        link = f" — {result.pr_url}" if result.pr_url else ""
        return JobResult(
            outputs={
                "status": result.outcome,
                "outcome": result.outcome,
                "pr-number": str(result.pr_number or ""),
                "pr-url": result.pr_url or "",
                "audit-head": result.audit_head or "",
            },
            record=result.to_json(),
            summary=f"**Chimera publish:** {result.outcome}{link}"
            + (f" · publish audit head `{result.audit_head}`" if result.audit_head else ""),
        )


def publish_job(
    ctx: ActionContext,
    settings: ActionSettings,
    root: Path,
    artifacts: Path,
    decided: Decided,
    verified: Verified,
    *,
    agent_audit_head: str | None = None,
) -> PublishJobResult:
    """Publish the verified change from the checkout ``root`` (its remote takes pushes): the
    patch from ``artifacts``, everything else from ``decided`` and ``verified``. publish's own
    audit log goes to ``$RUNNER_TEMP/chimera-publish`` (the workflow uploads it).

    Raises:
        UsageError: no repository or no token.
        GitHubError: the API failed after retries (a rate limit is reported on the issue first).
    """
    if decided.mode == "refresh":
        raise UsageError("publish never runs for a Spec check refresh (decided-mode: refresh)")
    client = ctx.connect()
    pctx = PublishContext(
        root=root,
        artifacts=artifacts,
        repository=ctx.repository,
        server_url=ctx.server_url,
        workflow_run=ctx.workflow_run,
        run_attempt=ctx.run_attempt,
        default_branch=ctx.default_branch,
        audit_dir=(ctx.runner_temp or artifacts.parent) / "chimera-publish",
        agent_audit_head=agent_audit_head,
        event_name=ctx.event_name,
    )
    queue = make_queue(client, settings)
    return PublishJobResult(publish(pctx, client, settings, queue, decided, verified))
