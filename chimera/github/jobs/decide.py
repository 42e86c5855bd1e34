"""The decide job: the gate before the agent job (token ``issues: write``; no LLM key).

It decides from the event, makes the API checks (the labeller's permission, the issue's state,
an existing Chimera PR, an approval's head commit), explains a refusal on the issue, and asks
the ChangeQueue for a slot (``chimera:running``) or queues the issue (``chimera:queued`` plus a
comment). Its ``proceed`` output says whether the agent job runs; ``start-ci`` says whether an
approval starts CI instead (the ``start-ci`` job). A new run first creates Chimera's other
labels the repository lacks, with their colours (:mod:`chimera.github.queue.labels`; the trigger
label is on the issue already), and names in the job summary those its token may not create.

What the later jobs may trust comes from here, as job outputs
(:meth:`~chimera.github.trust.chain.Decided.to_outputs`): the issue, the mode, the base commit, the
acceptance block read through the API just now with its SHA-256, who started the run, and —
for a resume or re-run — the PR and the head commit it was decided on. A resume keeps the
base and the acceptance the run started from (the PR marker records both); a block edited
since is refused, never silently used. A re-run (a person with write access asked for it) is
the way to adopt an edited block: it takes the issue's block as it is now, says so on the run's
outcome comment and in the job summary (:data:`ADOPTED_ACCEPTANCE`), and publish records the
new digest in the PR marker. Publish re-derives the adoption itself (the PR marker's digest against
decide's) and keeps it in the outcome comment it edits this run's "Started" comment into.

Past 400 lines: the gate is one sequence of checks over one event whose refusals each post the
run's one outcome comment; cutting it apart would scatter that sequence.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from chimera.errors import GitHubError
from chimera.github.action.cancellation import cancel
from chimera.github.action.command_refusal import explain_command
from chimera.github.action.context import ActionContext, JobResult, make_queue, post_outcome
from chimera.github.conversation.documents import ADOPTED_ACCEPTANCE
from chimera.github.conversation.outcome import outcome_key
from chimera.github.gate.commands import DECIDE_VERBS
from chimera.github.gate.decision import schedule_of
from chimera.github.gate.events import Act, Decision, decide
from chimera.github.gate.permissions import Resolution, resolve
from chimera.github.queue.progress import acknowledge, post_progress
from chimera.github.trust.carriers import PrMarker
from chimera.github.trust.chain import Decided, acceptance_output
from chimera.github.trust.identity import BotLoginMismatch, check_identities
from chimera.github.trust.summary import code

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.queue.claims import Claim
    from chimera.github.queue.queue import Admission
    from chimera.github.trust.settings import ActionSettings

__all__ = ["ADOPTED_ACCEPTANCE", "DecideResult", "decide_job", "dry_run"]

log = logging.getLogger(__name__)

_MODES = {Act.RUN: "run", Act.RESUME: "resume", Act.RERUN: "rerun"}


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
        decided: what the later jobs receive (when ``proceed``).
        notes: warnings for the job summary (a person's token acting as Chimera).
    """

    event_decision: Decision
    final: Decision
    proceed: bool
    status: str
    admission: str | None = None
    decided: Decided | None = None
    notes: tuple[str, ...] = ()

    def to_job(self) -> JobResult:
        ignored = self.final.action is Act.IGNORE
        decided = "ignore" if ignored else self.event_decision.action.value
        record = self.final.to_json()
        if self.admission is not None:
            record |= {"admission": self.admission}
        outputs = {
            "decision": decided,
            "issue": str(self.event_decision.issue or ""),
            "pull": str(self.event_decision.pull or ""),
            "proceed": "true" if self.proceed else "false",
            "start-ci": "true" if self.final.action is Act.START_CI else "false",
            "status": self.status,
        }
        if self.proceed and self.decided is not None:
            outputs |= self.decided.to_outputs()
        summary = "".join(f"**Chimera decide:** {note}\n" for note in self.notes)
        return JobResult(outputs=outputs, record=record, summary=summary)


def dry_run(ctx: ActionContext, settings: ActionSettings, mode: str) -> JobResult:
    """The decision from the payload alone, offline, changing nothing (``--dry-run``)."""
    decision = decide(ctx.event_name, ctx.payload, settings)
    return JobResult(outputs={}, record=decision.to_json() | {"mode": mode, "dry_run": True})


def profile_problem(client: GitHubClient, path: str, sha: str) -> str | None:
    """Why the agent profile ``path`` (the ``agent`` input) cannot be used at commit ``sha``,
    in one line (its first problem at ``file:line:col``), or ``None`` when it is valid."""
    from chimera.github.client.contents import file_at
    from chimera.meta.loader import check_profile_text

    text = file_at(client, path, sha)
    if text is None:
        return f"the agent profile {path} (the agent input) is not in commit {sha[:12]}"
    checked = check_profile_text(text, path)
    if checked.ok:
        return None
    more = len(checked.problems) - 1
    extra = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return f"the agent profile is invalid: {checked.problems[0]}{extra}"


def _decided(
    ctx: ActionContext, client: GitHubClient, res: Resolution, settings: ActionSettings
) -> Decided | str:
    """What the later jobs receive, read through the API now; a refusal reason instead when
    a resume's base or acceptance cannot be carried over, or the agent profile is invalid at
    the base commit (a resume re-checks the recorded profile in the agent job instead)."""
    final = res.decision
    assert final.issue is not None and final.actor is not None
    body = client.issue(final.issue).body
    acceptance, digest = acceptance_output(body)
    blocks = tuple(json.loads(acceptance))
    if final.action is Act.RUN:
        branch = ctx.base_ref or ctx.default_branch
        base = client.branch_sha(branch)
        problem = settings.agent_profile and profile_problem(client, settings.agent_profile, base)
        if problem:
            return problem
        return Decided(
            issue=final.issue,
            mode="run",
            base_sha=base,
            acceptance=blocks,
            acceptance_sha256=digest,
            base_ref=branch,
            started_by=final.actor,
        )
    assert res.pull is not None
    marker = res.marker or PrMarker()
    if final.action is Act.RERUN:
        # The PR's own base (its marker), so the cumulative diff to its head is the change
        # alone even when the default branch moved on; an older marker: the branch now.
        base_sha = marker.base or client.branch_sha(res.pull.base_ref)
        started_by = final.actor
        problem = settings.agent_profile and profile_problem(
            client, settings.agent_profile, base_sha
        )
        if problem:
            return problem
    else:
        base_sha = marker.base or ""
        started_by = marker.started_by or ""
        if not base_sha:
            return (
                f"PR #{res.pull.number}'s marker names no base commit (written by an older "
                "Chimera); close it and add the label again"
            )
        recorded = marker.acceptance_sha256
        if recorded and recorded != digest:
            return (
                f"the issue's acceptance block changed since the run started (PR "
                f"#{res.pull.number}); the paused run cannot resume on another goal: close the "
                "PR and add the label again"
            )
    return Decided(
        issue=final.issue,
        mode=_MODES[final.action],
        base_sha=base_sha,
        acceptance=blocks,
        acceptance_sha256=digest,
        pull=res.pull.number,
        head_sha=res.pull.head_sha,
        base_ref=res.pull.base_ref,
        started_by=started_by,
    )


def decide_job(ctx: ActionContext, settings: ActionSettings) -> DecideResult:
    """Run the gate for the event in ``ctx``.

    An API failure that outlasts the client's retries still leaves the run's one outcome
    comment (``crashed``, when the API answers that), which a re-run edits in place.

    Raises:
        UsageError: no repository or no token; a dispatch's issue-number is not a number.
        GitHubError: the API failed after retries.
    """
    decision = decide(ctx.event_name, ctx.payload, settings)
    comment = decision.event == "issue_comment"
    if comment and decision.command not in DECIDE_VERBS:
        # Not a command, or one the command workflow answers: nothing to do or say here.
        return DecideResult(decision, decision, proceed=False, status="ignored")
    client = ctx.connect()
    try:
        # A new run takes a ChangeQueue slot: counting the drain's needs the App's login.
        checked = check_identities(client, settings, queue=decision.action is Act.RUN)
    except BotLoginMismatch as exc:
        # The run cannot tell Chimera's own events from people's: nothing starts, and the
        # issue says why (the job summary says it too, in one line).
        if decision.issue is not None and decision.action is not Act.IGNORE:
            post_outcome(
                ctx,
                client,
                int(decision.pull or decision.issue),
                "refused",
                f"Nothing was done: Chimera's configuration is wrong: {exc}.",
                authors=settings.identities,
            )
        raise
    settings = checked.settings
    if comment and decision.action is Act.IGNORE:
        if decision.explain:
            explain_command(ctx, client, settings, decision)
        return DecideResult(decision, decision, proceed=False, status="refused")
    try:
        # A new run is where Chimera's labels are first needed (the queue's, then publish's).
        labelled = _ensure_labels(client, settings) if decision.action is Act.RUN else ()
        gated = _gate(ctx, settings, decision, client)
        result = replace(gated, notes=(*checked.warnings, *labelled, *gated.notes))
        if comment and (result.proceed or result.final.action is Act.START_CI):
            acknowledge(client, dict(ctx.payload))
        if result.proceed:
            # The run's one outcome comment, posted now as "Started" (Chimera is working on
            # it, with the run's link): its key names this run, so a drain can free the slot
            # if the run dies and `@chimera stop` finds the run to cancel; publish edits it
            # into the outcome.
            issue = result.decided.issue if result.decided is not None else result.final.issue
            if issue is not None:
                what = _what(decision, result.decided.mode if result.decided else "run")
                if ADOPTED_ACCEPTANCE in gated.notes:
                    what = f"{what}, which {ADOPTED_ACCEPTANCE}"
                post_progress(
                    ctx,
                    client,
                    int(issue),
                    actor=result.final.actor or decision.actor or "?",
                    what=what,
                    authors=settings.identities,
                )
        return result
    except GitHubError as exc:
        if decision.issue is not None and decision.action is not Act.IGNORE:
            try:
                post_outcome(
                    ctx,
                    client,
                    int(decision.pull or decision.issue),
                    "crashed",
                    f"GitHub failed while Chimera was deciding ({code(str(exc), 200)}); nothing "
                    "was started. Re-run the workflow: this comment is edited to the outcome.",
                    authors=settings.identities,
                )
            except GitHubError:
                log.warning("could not report the failure on #%s", decision.issue)
        raise


def _ensure_labels(client: GitHubClient, settings: ActionSettings) -> tuple[str, ...]:
    """Create Chimera's labels but the trigger (it is on the issue already); the one line
    naming those the token may not create, for the job summary."""
    from chimera.github.queue.labels import chimera_labels, ensure_labels

    others = tuple(
        spec for spec in chimera_labels(settings.label)[1:] if spec.name != settings.label
    )
    ensured = ensure_labels(client, others)
    if ensured.created:
        log.info("created the labels %s", ", ".join(ensured.created))
    if ensured.note:
        log.warning("%s", ensured.note)
    return (ensured.note,) if ensured.note else ()


def _what(decision: Decision, mode: str) -> str:
    """What started the run, for its "working on it" comment."""
    comment = decision.event == "issue_comment"
    return f"`@chimera {decision.command}`" if comment else mode


_CLAIM = re.compile(r"[0-9a-f]{16}")


def dispatch_claim(ctx: ActionContext) -> str:
    """The ChangeQueue claim a queue dispatch names (its ``claim`` input; ``""``: none, or
    not a claim token at all)."""
    inputs = ctx.payload.get("inputs") if ctx.event_name == "workflow_dispatch" else None
    raw = inputs.get("claim") if isinstance(inputs, dict) else None
    return raw if isinstance(raw, str) and _CLAIM.fullmatch(raw) else ""


def _admit(
    ctx: ActionContext,
    client: GitHubClient,
    settings: ActionSettings,
    final: Decision,
    decision: Decision,
    schedule: str,
) -> Admission:
    """Ask the ChangeQueue for a slot: a queue dispatch adopts the claim it names; any other
    start claims one, its claim being the run's "working on it" comment."""
    assert final.issue is not None and final.actor is not None
    issue, actor = final.issue, final.actor
    queue = make_queue(client, settings)
    what = _what(decision, "run")
    token = dispatch_claim(ctx) if final.from_queue else ""
    if token:

        def edit(claim: Claim) -> None:
            post_progress(ctx, client, issue, actor=actor, what=what,
                          authors=settings.identities, claim=claim.token,
                          adopt=claim.comment_id)  # fmt: skip

        return queue.adopt(issue, token, ctx.workflow_run or "local", edit)

    def post(number: int, claim: str) -> int:
        cid = post_progress(ctx, client, number, actor=actor, what=what,
                            authors=settings.identities, claim=claim)  # fmt: skip
        return cid if cid is not None else queue.post_bare_claim(number, claim)

    return queue.admit(issue, actor, post=post, schedule=schedule)


def _gate(
    ctx: ActionContext, settings: ActionSettings, decision: Decision, client: GitHubClient
) -> DecideResult:
    if decision.action in (Act.RUN, Act.RESUME, Act.RERUN):
        res = resolve(decision, client, settings)
        final = res.decision
        if final.action is Act.IGNORE:
            if final.from_queue and final.issue is not None:
                # The drain claimed a slot for this dispatch: give back that claim (only it),
                # or the slot stays taken until heal re-queues the issue for another refusal.
                make_queue(client, settings).withdraw(final.issue, dispatch_claim(ctx))
            if final.explain and (final.issue or final.pull):
                target = int(final.pull or final.issue or 0)
                post_outcome(
                    ctx,
                    client,
                    target,
                    "refused",
                    f"Nothing was done: {final.reason}.",
                    authors=settings.identities,
                )
            return DecideResult(decision, final, proceed=False, status="refused")
        if final.action is Act.START_CI:
            return DecideResult(decision, final, proceed=False, status=final.action.value)
        if final.action is Act.RUN:
            assert final.issue is not None and final.actor is not None
            # Chimera as the actor: a scheduled run, whose queue comment names its schedule.
            schedule = ""
            if settings.is_self(final.actor):
                schedule = schedule_of(res.issue.body if res.issue else "") or "(unnamed)"
            admission = _admit(ctx, client, settings, final, decision, schedule)
            if admission.busy or admission.refused or (
                final.from_queue and dispatch_claim(ctx) and not admission.admitted
            ):  # fmt: skip
                # Another start holds the issue (or the dispatch's claim is gone, or the
                # GITHUB_TOKEN-only tier may not queue it): nothing of it is touched, and this
                # run says why once.
                post_outcome(
                    ctx, client, final.issue, "refused", f"Nothing was done: {admission.reason}.",
                    authors=settings.identities,
                )  # fmt: skip
                refused = final.ignore(admission.reason)
                notes = (admission.reason,) if admission.refused else ()
                return DecideResult(decision, refused, proceed=False, status="refused", notes=notes)
            decided = _decided(ctx, client, res, settings) if admission.admitted else None
            if isinstance(decided, str):
                # The slot was taken for a run that cannot start: say so on the run's claim
                # (it is resolved, and was no start), then give the slot back.
                post_outcome(
                    ctx, client, final.issue, "refused", f"{decided}.", authors=settings.identities
                )
                make_queue(client, settings).release(
                    final.issue, key=outcome_key(ctx.workflow_run, final.issue)
                )
                refused = final.ignore(decided)
                return DecideResult(decision, refused, proceed=False, status="refused")
            return DecideResult(
                decision,
                final,
                proceed=admission.admitted,
                status="running" if admission.admitted else "queued",
                admission=admission.reason,
                decided=decided if isinstance(decided, Decided) else None,
            )
        decided = _decided(ctx, client, res, settings)
        if isinstance(decided, str):
            refused = final.ignore(decided)
            post_outcome(
                ctx,
                client,
                int(final.pull or final.issue or 0),
                "refused",
                f"{decided}.",
                authors=settings.identities,
            )
            return DecideResult(decision, refused, proceed=False, status="refused")
        recorded = res.marker.acceptance_sha256 if res.marker else None
        # A re-run adopts the issue's block as it is now (the documented way to change the
        # goal); said out loud so an edit never slips in unseen. Publish's marker records it.
        adopted = final.action is Act.RERUN and recorded and recorded != decided.acceptance_sha256
        return DecideResult(
            decision,
            final,
            proceed=True,
            status=final.action.value,
            decided=decided,
            notes=(ADOPTED_ACCEPTANCE,) if adopted else (),
        )
    if decision.action is Act.CANCEL:
        cancel(ctx, decision, client, settings)
    elif decision.action is Act.IGNORE and decision.explain and decision.issue:
        if decision.from_queue:  # a queue dispatch without a labeller: its claim goes back
            make_queue(client, settings).withdraw(decision.issue, dispatch_claim(ctx))
        post_outcome(
            ctx,
            client,
            decision.issue,
            "refused",
            f"Nothing was done: {decision.reason}.",
            authors=settings.identities,
        )
    return DecideResult(decision, decision, proceed=False, status=decision.action.value)
