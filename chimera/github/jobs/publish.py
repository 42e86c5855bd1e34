"""The publish job: apply, scan, push, open or update the PR, label, comment (the workflow's
``GITHUB_TOKEN``; no LLM key; no project code). The work is
:func:`chimera.github.publish.publish`, from decide's and verify's outputs; this module gives
it the job's context and turns its result into step outputs and the job summary. First it
writes the run's memory commit (:func:`chimera.github.publish.memory.remember_run`).

The branch stores (memory, learning proposals, the schedules' journal) may be written with a
second client, the App's installation token (the ``store-token`` input): GitHub signs those
commits for the App, so replay trusts them, while the PR branch, PR, comments and labels keep
``GITHUB_TOKEN`` (no workflow starts on agent-written code; the store branches hold no workflow
files, so the App's commits there start nothing either).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import GitHubError, JournalError, UsageError
from chimera.github.action.context import ActionContext, JobResult, make_queue
from chimera.github.publish.gate import PublishAudit
from chimera.github.publish.learning import learn_after_publish
from chimera.github.publish.memory import MemoryNote, memory_sections, remember_run
from chimera.github.publish.publish import (
    PublishContext,
    PublishResult,
    publish,
    publish_without_verdict,
)
from chimera.github.trust.artifacts import read_patch
from chimera.github.trust.branchcommit import app_logins
from chimera.github.trust.chain import Decided, Verified
from chimera.github.trust.identity import token_identity
from chimera.github.trust.schedule_journal import record_finish, scheduled_run

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.conversation.render import Section
    from chimera.github.trust.settings import ActionSettings
    from chimera.scheduler.clock import Clock
    from chimera.scheduler.journal import GitJournal

__all__ = ["PublishJobResult", "publish_job", "store_writer"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PublishJobResult:
    """What publishing did (see :class:`~chimera.github.publish.publish.PublishResult`).

    Attributes:
        finish: for a scheduled run, what became of its ``finish`` record in the schedules'
            journal (the commit, or why there is none); ``""`` for any other run.
        memory: what the run recalled and remembered (``None``: not recorded).
        warnings: one line each, for the job summary (a store token that was not used).
    """

    result: PublishResult
    finish: str = ""
    memory: MemoryNote | None = None
    warnings: tuple[str, ...] = ()

    def to_job(self) -> JobResult:
        result = self.result
        link = f" — {result.pr_url}" if result.pr_url else ""
        remembered = "\n\n".join(s.render() for s in memory_sections(self.memory))
        return JobResult(
            outputs={
                "status": result.outcome,
                "outcome": result.outcome,
                "pr-number": str(result.pr_number or ""),
                "pr-url": result.pr_url or "",
                "audit-head": result.audit_head or "",
            },
            record=result.to_json()
            | ({"schedule_finish": self.finish} if self.finish else {})
            | ({"memory": self.memory.to_json()} if self.memory else {}),
            summary=f"**Chimera publish:** {result.outcome}{link}"
            + (f" · publish audit head `{result.audit_head}`" if result.audit_head else "")
            + (f"\n\n{remembered}" if remembered else "")
            + "".join(f"\n\n**Chimera:** {w}" for w in self.warnings),
        )


def publish_job(
    ctx: ActionContext,
    settings: ActionSettings,
    root: Path,
    artifacts: Path,
    decided: Decided,
    verified: Verified | None,
    *,
    no_verdict: str = "",
    agent_audit_head: str | None = None,
    journal: GitJournal | None = None,
    clock: Clock | None = None,
    store_client: GitHubClient | None = None,
    store_warning: str = "",
    verified_results: str = "",
) -> PublishJobResult:
    """Publish the verified change from the checkout ``root`` (its remote takes pushes): the
    patch from ``artifacts``, everything else from ``decided`` and ``verified``. publish's own
    audit log goes to ``$RUNNER_TEMP/chimera-publish`` (the workflow uploads it); the memory
    commit's, to its ``memory/`` folder.

    Raises:
        UsageError: no repository or no token.
        GitHubError: the API failed after retries (a rate limit is reported on the issue first).

    A run the tick started (``decided.started_by`` is Chimera itself) ends with a ``finish``
    record in the schedules' ``journal`` (GitHub-signed for an App token, else SSH-signed, as
    the tick's are), so the job's next run
    need not wait out its lease; without a journal, or when the write fails, the lease ends it.

    ``store_client`` (see :func:`store_writer`; ``None``: the job's own client) writes and
    reads the branch stores only — memory and learning proposals here, the journal through
    ``journal``; ``store_warning`` is shown in the job summary. ``verified_results`` is
    verify's ``results`` output: claims the Spec check cross-checks, never a verdict.

    ``verified`` is ``None`` when verify left no usable outputs (``no_verdict`` says which):
    nothing is remembered or published; the issue is told the run crashed and the queue slot
    is freed (:func:`~chimera.github.publish.publish.publish_without_verdict`).
    """
    if decided.mode == "refresh":
        raise UsageError("publish never runs for a Spec check refresh (decided-mode: refresh)")
    client = ctx.connect()
    stores = store_client or client
    audit_dir = (ctx.runner_temp or artifacts.parent) / "chimera-publish"
    if verified is None:
        crashed = publish_without_verdict(
            _context(ctx, root, artifacts, audit_dir, agent_audit_head, (), verified_results),
            client, settings, make_queue(client, settings), decided,
            no_verdict or "no verdict",
        )  # fmt: skip
        if not settings.is_self(decided.started_by):
            return PublishJobResult(crashed)
        return PublishJobResult(crashed, _finish(ctx, client, settings, decided, journal, clock))
    # Memory first: the PR body says what was remembered. Its failures are noted, not raised.
    note = remember_run(
        root, artifacts, stores, settings, decided, verified,
        PublishAudit(audit_dir / "memory", f"memory-{decided.issue}-{ctx.workflow_run or 'local'}"),
        workflow_run=ctx.workflow_run, patch=read_patch(artifacts),
    )  # fmt: skip
    pctx = _context(
        ctx, root, artifacts, audit_dir, agent_audit_head, memory_sections(note), verified_results
    )
    queue = make_queue(client, settings)
    result = publish(pctx, client, settings, queue, decided, verified)
    learn_after_publish(ctx, root, artifacts, decided, verified, result, client=stores)
    warnings = (store_warning,) if store_warning else ()
    if settings.no_app and settings.memory:
        from chimera.github.trust.tier import NO_APP_MEMORY

        warnings = (*warnings, NO_APP_MEMORY)
    if not settings.is_self(decided.started_by):
        return PublishJobResult(result, memory=note, warnings=warnings)
    finish = _finish(ctx, client, settings, decided, journal, clock)
    return PublishJobResult(result, finish, note, warnings)


def _context(
    ctx: ActionContext,
    root: Path,
    artifacts: Path,
    audit_dir: Path,
    agent_audit_head: str | None,
    sections: tuple[Section, ...],
    verified_results: str,
) -> PublishContext:
    return PublishContext(
        root=root,
        artifacts=artifacts,
        repository=ctx.repository,
        server_url=ctx.server_url,
        workflow_run=ctx.workflow_run,
        run_attempt=ctx.run_attempt,
        default_branch=ctx.default_branch,
        audit_dir=audit_dir,
        agent_audit_head=agent_audit_head,
        event_name=ctx.event_name,
        sections=sections,
        verified_results=verified_results,
    )


def store_writer(store: GitHubClient, settings: ActionSettings) -> tuple[GitHubClient | None, str]:
    """``(store, "")`` unless GitHub names ``store``'s token as a person's (``GET /user``, one
    call); then ``(None, why)``: that person's commits would not replay as Chimera's App's, so
    the stores keep the job's own client and the reason goes to the job summary. An
    installation token GitHub will not name (an App's: ``GET /app`` wants the App's JWT) or
    an API failure leaves the token in use: replay judges every commit by its verified author
    (``bot-login``, :func:`~chimera.github.trust.branchcommit.app_logins`), so this is a hint, not
    the gate."""
    try:
        found = token_identity(store)
    except GitHubError:
        return store, ""
    if found is None:
        return store, ""
    apps = ", ".join(sorted(app_logins(settings))) or "unset"
    return None, (
        f"store-token not used: it is {found.login}'s, not a GitHub App's (bot-login: {apps}): "
        "replay would not trust its commits"
    )


def _finish(
    ctx: ActionContext,
    client: GitHubClient,
    settings: ActionSettings,
    decided: Decided,
    journal: GitJournal | None,
    clock: Clock | None,
) -> str:
    started = scheduled_run(client.comments(decided.issue), settings)
    if started is None:
        return "not recorded: no tick comment of Chimera's on the issue"
    if journal is None or clock is None:
        return "not recorded: no App token and no journal-signing-key (the lease ends the run)"
    run_id = f"finish-{ctx.workflow_run or 'local'}.{ctx.run_attempt or 1}"
    try:
        return record_finish(journal, started, clock.now(), run_id)
    except JournalError as exc:
        log.warning("the schedules' journal took no finish record: %s", exc)
        return f"not recorded: {exc}"
