"""Publish a verified change: push ``chimera/issue-<n>``, open or update the PR, show the Spec
verdict on its head, label, comment — exactly one outcome comment on the issue, never silence.

(DESIGN.md step 5.) The publish job holds the workflow's ``GITHUB_TOKEN`` (so no workflow
starts on agent-written code) and no LLM key, and runs no project code. It acts only on:

* decide's outputs — the issue, the mode, the base commit, the acceptance block's hash
  (:class:`~chimera.github.trust.chain.Decided`);
* verify's outputs — the verdict, and the patch hash and Spec digest it was reached on
  (:class:`~chimera.github.trust.chain.Verified`);
* what it re-derives itself (:func:`chimera.github.publish.gate.gate`): the patch's hash
  (a mismatch refuses), the Spec digest of the base commit, the risk, ``spec-change`` and
  the scan.

Only two verdicts push: ``passed`` and ``paused``. verify says ``paused`` when it re-derives
that the change is risky from the base commit, that the risky step's requirements pass and
that nothing green on the base turned red, while the rest of the goal waits for a person's
approval; publish then checks the risk itself
(:attr:`~chimera.github.publish.gate.GateResult.pause_reasons`) and opens a
held draft. The run id the PR's marker names is derived here
(:meth:`~chimera.github.publish.base.PublishStep.run_id`).

The agent job's artifact is the patch plus untrusted display data, each part parsed once at
the door and read without following links: the run report and the audit summary are shown
(fenced, sanitised), and its status is read for two things only, neither of which can push:
a ``paused`` verdict is not published when the run did not pause, and a held change whose run
awaits approval is marked so that an approval resumes it. Risky changes (``risk:high``),
changes with review findings and advisory verdicts (``sandbox: scrubbed``) open as drafts;
only a low-risk, clean, sandboxed change may get auto-merge.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path

from chimera.errors import (
    ChimeraError,
    GitHubError,
    GitHubPermissionDenied,
    GitHubRateLimited,
    HandoffError,
)
from chimera.github.client.client import GitHubClient
from chimera.github.conversation.outcome import outcome_key
from chimera.github.publish.base import (
    ACTIONS_PR_SETTING,
    PublishContext,
    PublishResult,
    PublishStep,
)
from chimera.github.publish.gate import GateResult, gate
from chimera.github.publish.guards import PublishGuards
from chimera.github.publish.pr import PullRequestStep
from chimera.github.queue.queue import LABEL_FAILED, ChangeQueue
from chimera.github.trust.artifacts import read_patch
from chimera.github.trust.chain import Decided, Verified
from chimera.github.trust.settings import ActionSettings
from chimera.github.trust.summary import code

__all__ = [
    "ACTIONS_PR_SETTING",
    "PublishContext",
    "PublishResult",
    "publish",
    "publish_without_verdict",
]

log = logging.getLogger(__name__)

# Everything a public surface ever says about a held-out failure: the requirement, its
# evidence and even how many failed stay with the maintainer's sealed record.
HELD_DETAIL = (
    "The visible requirements pass, but a held-out check failed; nothing was published, and "
    "the run ends here (no retry). Maintainers: the verify job's summary holds the record's "
    "digest, and its held-out artifact the record, sealed to your key."
)


PAUSE_NOT_RISKY = (
    "The verify job judged the change a pause after a risky step, but publish finds nothing "
    "risky in it from the base commit (no deletion, no high-risk path, no risk: high "
    "requirement of the issue's acceptance block); a pause holds only a risky change for a "
    "person, so nothing was published."
)


class Publisher:
    """One publish step (see the module docstring); use :func:`publish`.

    The flow and the push are here. It owns its parts: the inputs, the outcome comment and the
    failure path (:class:`~chimera.github.publish.base.PublishStep`), the guards re-checked
    before pushing (:class:`~chimera.github.publish.guards.PublishGuards`), the PR, its Spec
    verdict and the announcement (:class:`~chimera.github.publish.pr.PullRequestStep`).

    Args:
        ctx, client, settings, queue, decided, verified: see :class:`PublishStep`.
    """

    def __init__(
        self,
        ctx: PublishContext,
        client: GitHubClient,
        settings: ActionSettings,
        queue: ChangeQueue,
        decided: Decided,
        verified: Verified | None,
    ) -> None:
        self.step = PublishStep(ctx, client, settings, queue, decided, verified)
        self.guards = PublishGuards(self.step)
        self.pr = PullRequestStep(self.step)

    # -- the flow --------------------------------------------------------------------------

    def run(self) -> PublishResult:
        """Publish (see the module docstring); every path ends in one outcome comment.

        Raises:
            GitHubError: the API failed after retries.
        """
        step = self.step
        received = step.ctx.agent_audit_head
        shown = step.report.audit_head if step.report else None
        step.audit.record(
            "agent_audit_head",
            received=received,
            in_artifact=shown,
            # A difference means the artifact's log was cut or altered in transit: the
            # agent's log is display data, never evidence that its job was compromised.
            matches=bool(received) and received == shown,
        )
        for reason in step.display.refused:
            step.audit.record("display_refused", reason=reason)
        try:
            patch = read_patch(step.ctx.artifacts)
        except HandoffError as exc:
            return step.fail("blocked", f"The agent's patch was refused: {code(str(exc), 300)}.")
        step.adopted_from()  # before the PR's marker is rewritten with this run's digest
        stopped = self.guards.stopped()
        if stopped is not None:
            return self.guards.cancelled(stopped)
        try:
            step.git.ensure_commit(step.ctx.remote, step.decided.base_sha)
            approved = step.decided.head_sha if step.decided.mode == "resume" else None
            if approved:
                step.git.ensure_commit(step.ctx.remote, approved)
            with tempfile.TemporaryDirectory(prefix="chimera-publish-") as work:
                g = gate(
                    step.ctx.root,
                    step.settings,
                    step.decided,
                    step.verified,
                    patch,
                    step.audit,
                    work=Path(work),
                    approved_head=approved,
                )
        except ChimeraError as exc:
            return step.fail(
                "crashed", f"Publishing could not read the base commit: {code(str(exc), 300)}."
            )
        if g.refusal is not None:
            return step.fail(*g.refusal)
        if g.verdict == "error":
            return step.fail(
                "crashed",
                "The verify job could not judge the patch (see its job summary); nothing was "
                "published. Add the label again to retry.",
            )
        if g.verdict == "held":
            return step.fail("held", HELD_DETAIL)
        if not patch.strip():
            return step.fail(
                "hollow",
                "The run changed nothing: a hollow success is not published. The goal "
                "requirements may already pass on the base; check the issue's acceptance "
                "requirements.",
            )
        # Only verify's two verdicts push, whatever the agent's outcome says (it can only
        # keep a pause from being published: a run that did not pause cannot resume).
        if g.verdict == "paused":
            if not g.pause_reasons:
                return step.fail("blocked", PAUSE_NOT_RISKY)
            if not step.run_paused:
                return self._not_met()
        elif g.verdict != "passed":
            return self._not_met()
        return self._push_and_pr(g, held_unmet=g.verdict == "paused")

    def _not_met(self) -> PublishResult:
        step = self.step
        stopped = step.outcome is not None and step.outcome.status == "stopped"
        said = ""
        if step.report is not None and step.report.stop_detail:
            said = f" The agent job reports: {code(step.report.stop_detail, 300)}."
        if step.report is not None and step.report.last_failure:
            said += f" Last failure: {code(step.report.last_failure, 400)}."
        return step.fail(
            "budget_exhausted" if stopped else "spec_not_met",
            "The verify job rebuilt the goal from the base commit and the patch does not meet "
            f"it; nothing was published.{said} Raise the budget, refine the issue's acceptance "
            "block, or add the label again.",
        )

    def _push_and_pr(self, g: GateResult, *, held_unmet: bool) -> PublishResult:
        step = self.step
        d = step.decided
        stopped = self.guards.stopped()
        if stopped is not None:
            return self.guards.cancelled(stopped)
        branch = step.settings.branch(d.issue)
        remote = step.ctx.remote
        current = step.git.remote_sha(remote, branch)
        # A person's push since decide is never overwritten; a re-run's own earlier push (this
        # step run again) is told apart below, once the commit it would push is known.
        moved = bool(d.head_sha) and current != d.head_sha
        if moved and d.mode != "rerun":
            return self.guards.fail_moved(branch, current)
        step.git.run("checkout", "--quiet", "--force", "-B", branch, d.base_sha)
        with tempfile.NamedTemporaryFile("wb", suffix=".diff", delete=False) as fh:
            fh.write(g.patch.encode("utf-8", "surrogateescape"))
            patch_file = fh.name
        try:
            applied = step.git.run("apply", "--index", "--binary", patch_file, check=False)
        finally:
            Path(patch_file).unlink(missing_ok=True)
        if applied.returncode != 0:
            return step.fail(
                "crashed",
                f"The patch does not apply to {d.base_sha[:12]}: "
                f"{code(applied.stderr.strip(), 300)}. Nothing was pushed.",
            )
        message = f"chimera: {step.title()} (#{d.issue})\n\nVerified patch {g.patch_sha[:16]}."
        step.git.run("commit", "--quiet", "--no-verify", "-m", message)
        head = step.git.run("rev-parse", "HEAD").stdout.strip()
        if d.mode == "rerun" and d.head_sha:
            # Iterating on review: the same tree (base + the cumulative patch) as one new
            # commit on the PR's head, so the PR keeps its history and gains a commit.
            head = step.git.on_top(remote, head, d.head_sha, message)
        if current and step.git.same_change(remote, branch, current, head):
            head = current  # a re-run of this step: the branch already holds this change
        elif moved:
            return self.guards.fail_moved(branch, current)
        else:
            push = step.git.run(
                "push",
                "--quiet",
                f"--force-with-lease=refs/heads/{branch}:{current}",
                remote,
                f"HEAD:refs/heads/{branch}",
                check=False,
            )
            if push.returncode != 0:
                return step.fail(
                    "blocked",
                    f"Pushing {branch} was refused: {code(push.stderr.strip(), 300)}. Nothing "
                    "was overwritten.",
                )
        step.audit.record("pushed", branch=branch, head=head, lease=current)
        try:
            return self.pr.pull_request(g, head=head, held_unmet=held_unmet)
        except GitHubPermissionDenied as exc:
            return step.fail(
                "blocked",
                f"GitHub refused to open the pull request ({code(str(exc), 200)}): "
                f"{ACTIONS_PR_SETTING}.",
            )


def publish(
    ctx: PublishContext,
    client: GitHubClient,
    settings: ActionSettings,
    queue: ChangeQueue,
    decided: Decided,
    verified: Verified,
) -> PublishResult:
    """Publish the verified change (see the module docstring).

    An API failure that outlasts the retries (a rate limit: ``rate-limited``; else
    ``crashed``) is reported on the issue when the API still answers, the queue slot is
    freed, and the error is re-raised so the job fails visibly; a re-run edits that comment.

    Raises:
        GitHubError: the API failed after retries.
    """
    publisher = Publisher(ctx, client, settings, queue, decided, verified)
    return _reported(publisher, publisher.run)


def publish_without_verdict(
    ctx: PublishContext,
    client: GitHubClient,
    settings: ActionSettings,
    queue: ChangeQueue,
    decided: Decided,
    why: str,
) -> PublishResult:
    """verify left no usable verdict (it crashed, timed out or was cancelled; ``why`` says
    what was missing): nothing is published, the issue gets its one outcome comment
    (``crashed``; ``cancelled`` when the run was stopped meanwhile) and the queue slot is
    freed here, not left for the next drain.

    Raises:
        GitHubError: the API failed after retries (reported as :func:`publish` does).
    """
    publisher = Publisher(ctx, client, settings, queue, decided, None)

    def report() -> PublishResult:
        publisher.step.audit.record("no_verdict", reason=why)
        stopped = publisher.guards.stopped()
        if stopped is not None:
            return publisher.guards.cancelled(stopped)
        return publisher.step.fail(
            "crashed",
            f"The verify job left no verdict ({code(why, 200)}): it crashed, timed out or was "
            "cancelled, so nothing was published. Add the label again to retry.",
        )

    return _reported(publisher, report)


def _reported(publisher: Publisher, work: Callable[[], PublishResult]) -> PublishResult:
    step = publisher.step
    client, decided, queue, ctx = step.client, step.decided, step.queue, step.ctx
    try:
        return work()
    except GitHubError as exc:
        limited = isinstance(exc, GitHubRateLimited)
        what = "rate-limited Chimera" if limited else "failed"
        try:
            step.comment(
                "rate_limited" if limited else "crashed",
                f"GitHub {what} while publishing ({code(str(exc), 200)}). Re-run the "
                "workflow's publish job: it is idempotent (no duplicate PR), and this comment "
                "is edited to the outcome.",
            )
            # The slot is freed (a stalled publish must not stall the queue); a re-run of
            # publish takes the labels to the outcome.
            client.add_labels(decided.issue, LABEL_FAILED)
            queue.release(decided.issue, key=outcome_key(ctx.workflow_run, decided.issue))
        except GitHubError:
            log.warning("could not report the failure on #%s", decided.issue)
        raise
