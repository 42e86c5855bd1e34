"""Publish a verified change: push ``chimera/issue-<n>``, open or update the PR, show the Spec
verdict on its head, label, comment — exactly one outcome comment on the issue, never silence.

(DESIGN.md step 5.) The publish job holds the workflow's ``GITHUB_TOKEN`` (so no workflow
starts on agent-written code) and no LLM key, and runs no project code. It acts only on:

* decide's outputs — the issue, the mode, the base commit, the acceptance block's hash
  (:class:`~chimera.github.trust.Decided`);
* verify's outputs — the verdict, and the patch hash and Spec digest it was reached on
  (:class:`~chimera.github.trust.Verified`);
* what it re-derives itself (:func:`chimera.github.publish_gate.gate`): the patch's hash
  (a mismatch refuses), the Spec digest of the base commit, the risk, ``spec-change`` and
  the scan.

The agent job's artifact is the patch plus untrusted display data: the run report and the
audit summary are shown (fenced, sanitised), and its status is read for one thing only — a
paused run whose risky part publish, too, finds risky opens as a held draft. Risky changes
(``risk:high``), changes with review findings and advisory verdicts (``sandbox: scrubbed``)
open as drafts; only a low-risk, clean, sandboxed change may get auto-merge.
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.errors import ChimeraError, GitHubError, GitHubPermissionDenied, GitHubRateLimited
from chimera.github.artifacts import SUMMARY_FILE, Outcome, read_outcome, read_patch
from chimera.github.client import GitHubClient, PullInfo
from chimera.github.documents import outcome_comment, pr_body
from chimera.github.gitops import PublishGit
from chimera.github.outcome import REPLACEABLE, find_outcome, outcome_key, post_outcome_once
from chimera.github.permissions import chimera_pull
from chimera.github.publish_gate import GateResult, PublishAudit, gate
from chimera.github.queue import (
    LABEL_AWAITING,
    LABEL_FAILED,
    LABEL_PR_OPEN,
    LABEL_RISK_HIGH,
    LABEL_RUNNING,
    LABEL_SPEC_CHANGE,
    ChangeQueue,
)
from chimera.github.render import Section
from chimera.github.report import RunReport, read_report
from chimera.github.settings import SCHEDULE_LABEL, ActionSettings
from chimera.github.summary import artifact_link, code
from chimera.github.trust import Decided, Verified

__all__ = ["ACTIONS_PR_SETTING", "PublishContext", "PublishResult", "publish"]

log = logging.getLogger(__name__)

# Everything a public surface ever says about a held-out failure: the requirement, its
# evidence and even how many failed stay with the maintainer's sealed record.
HELD_DETAIL = (
    "The visible requirements pass, but a held-out check failed; nothing was published, and "
    "the run ends here (no retry). Maintainers: the verify job's summary holds the record's "
    "digest, and its held-out artifact the record, sealed to your key."
)

ACTIONS_PR_SETTING = (
    'enable Settings → Actions → General → "Allow GitHub Actions to create and approve pull '
    "requests\" (the PR is opened with the workflow's GITHUB_TOKEN, so no CI runs on "
    "agent-written code before a person approves)"
)


@dataclass(frozen=True)
class PublishContext:
    """Where publishing happens.

    Attributes:
        root: a checkout of the repository whose ``remote`` accepts pushes.
        artifacts: the agent job's artifacts folder (the patch; display data).
        repository: ``owner/name``.
        server_url: ``GITHUB_SERVER_URL`` (links).
        workflow_run: ``GITHUB_RUN_ID`` of this workflow run (its artifact holds the run).
        run_attempt: ``GITHUB_RUN_ATTEMPT`` (a re-run's attempt; ``None``: unknown).
        default_branch: the base branch for new PRs.
        remote: the git remote name.
        audit_dir: where publish writes its own audit log (``None``: not kept).
        agent_audit_head: the agent job's audit head, received as a job output.
        event_name: ``GITHUB_EVENT_NAME`` (``issue_comment``: a run ``@chimera run`` started,
            which has no trigger label to lose; ``None``: unknown, read as a label's run).
        sections: the PR body's sections from features (memory's:
            :func:`chimera.github.memory.memory_sections`).
    """

    root: Path
    artifacts: Path
    repository: str
    server_url: str
    workflow_run: str | None
    default_branch: str = "main"
    run_attempt: str | None = None
    remote: str = "origin"
    audit_dir: Path | None = None
    agent_audit_head: str | None = None
    event_name: str | None = None
    sections: tuple[Section, ...] = ()


@dataclass
class PublishResult:
    """What publishing did (``chimera action --mode publish`` prints it as JSON)."""

    outcome: str
    issue: int | None = None
    pr_number: int | None = None
    pr_url: str | None = None
    created: bool = False
    comment_id: int | None = None
    merge: str = ""
    scan: dict[str, Any] = field(default_factory=dict)
    detail: str = ""
    audit_head: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "issue": self.issue,
            "pr_number": self.pr_number,
            "pr_url": self.pr_url,
            "created": self.created,
            "comment_id": self.comment_id,
            "merge": self.merge,
            "scan": self.scan,
            "detail": self.detail,
            "audit_head": self.audit_head,
        }


def _display(artifacts: Path) -> tuple[Outcome | None, RunReport | None, str]:
    """The agent job's display data: outcome, report, audit summary (each may be missing or
    unreadable: it is only shown)."""
    try:
        outcome: Outcome | None = read_outcome(artifacts)
    except ChimeraError:
        outcome = None
    try:
        report = read_report(artifacts)
    except ChimeraError:
        report = None
    path = artifacts / SUMMARY_FILE
    summary = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    return outcome, report, summary


class Publisher:
    """One publish step (see the module docstring); use :func:`publish`."""

    def __init__(
        self,
        ctx: PublishContext,
        client: GitHubClient,
        settings: ActionSettings,
        queue: ChangeQueue,
        decided: Decided,
        verified: Verified,
    ) -> None:
        self.ctx = ctx
        self.client = client
        self.settings = settings
        self.queue = queue
        self.decided = decided
        self.verified = verified
        self.git = PublishGit(ctx.root)
        self.run_link = artifact_link(ctx.server_url, ctx.repository, ctx.workflow_run)
        self.audit = PublishAudit(
            ctx.audit_dir, f"publish-{decided.issue}-{ctx.workflow_run or 'local'}"
        )
        self.outcome, self.report, self.audit_summary = _display(ctx.artifacts)

    # -- comments and labels ---------------------------------------------------------------

    def comment(self, kind: str, detail: str, *, link: str | None = None) -> int:
        # One outcome comment per workflow run: a re-run of the step finds it again and
        # edits it to the newest truth (chimera.github.outcome).
        issue = self.decided.issue

        def render(key: str) -> str:
            return outcome_comment(
                kind,
                issue=issue,
                key=key,
                detail=detail,
                link=link,
                report=self.report,
                run_link=self.run_link,
            )

        return post_outcome_once(
            self.client,
            issue,
            kind,
            render,
            workflow_run=self.ctx.workflow_run,
            attempt=self.ctx.run_attempt,
            authors=self.settings.identities,
        )

    def _finish_labels(self, *, add: tuple[str, ...], drop: tuple[str, ...]) -> None:
        issue = self.decided.issue
        self.client.add_labels(issue, *add)
        for label in drop:
            if label not in add:
                self.client.remove_label(issue, label)
        # After a run the trigger label goes, so adding it again retries. Chimera's own
        # removal is an event from its identity, which never cancels anything.
        self.client.remove_label(issue, self.settings.label)
        self.queue.release(issue)

    def _fail(self, kind: str, detail: str) -> PublishResult:
        self.audit.record("decision", outcome=kind, detail=detail)
        cid = self.comment(kind, detail)
        self._finish_labels(add=(LABEL_FAILED,), drop=(LABEL_PR_OPEN, LABEL_AWAITING))
        return PublishResult(
            kind,
            issue=self.decided.issue,
            comment_id=cid,
            detail=detail,
            audit_head=self.audit.head,
        )

    # -- the flow --------------------------------------------------------------------------

    def run(self) -> PublishResult:
        received = self.ctx.agent_audit_head
        shown = self.report.audit_head if self.report else None
        self.audit.record(
            "agent_audit_head",
            received=received,
            in_artifact=shown,
            # A difference means the artifact's log was cut or altered in transit: the
            # agent's log is display data, never evidence that its job was compromised.
            matches=bool(received) and received == shown,
        )
        patch = read_patch(self.ctx.artifacts)
        stopped = self._stopped()
        if stopped is not None:
            return self._cancelled(stopped)
        try:
            self.git.ensure_commit(self.ctx.remote, self.decided.base_sha)
            approved = self.decided.head_sha if self.decided.mode == "resume" else None
            if approved:
                self.git.ensure_commit(self.ctx.remote, approved)
            with tempfile.TemporaryDirectory(prefix="chimera-publish-") as work:
                g = gate(
                    self.ctx.root,
                    self.settings,
                    self.decided,
                    self.verified,
                    patch,
                    self.audit,
                    work=Path(work),
                    approved_head=approved,
                )
        except ChimeraError as exc:
            return self._fail(
                "crashed", f"Publishing could not read the base commit: {code(str(exc), 300)}."
            )
        if g.refusal is not None:
            return self._fail(*g.refusal)
        if g.verdict == "error":
            return self._fail(
                "crashed",
                "The verify job could not judge the patch (see its job summary); nothing was "
                "published. Add the label again to retry.",
            )
        if g.verdict == "held":
            return self._fail("held", HELD_DETAIL)
        paused = self.outcome is not None and self.outcome.status == "awaiting_approval"
        if not patch.strip():
            return self._fail(
                "hollow",
                "The run changed nothing: a hollow success is not published. The goal "
                "requirements may already pass on the base; check the issue's acceptance "
                "requirements.",
            )
        if g.verdict != "passed" and not (paused and g.risk_high):
            return self._not_met()
        return self._push_and_pr(g, held_unmet=g.verdict != "passed")

    def _not_met(self) -> PublishResult:
        stopped = self.outcome is not None and self.outcome.status == "stopped"
        said = ""
        if self.report is not None and self.report.stop_detail:
            said = f" The agent job reports: {code(self.report.stop_detail, 300)}."
        if self.report is not None and self.report.last_failure:
            said += f" Last failure: {code(self.report.last_failure, 400)}."
        return self._fail(
            "budget_exhausted" if stopped else "spec_not_met",
            "The verify job rebuilt the goal from the base commit and the patch does not meet "
            f"it; nothing was published.{said} Raise the budget, refine the issue's acceptance "
            "block, or add the label again.",
        )

    def _stopped(self) -> str | None:
        """Why the run was cancelled while in flight, read just before pushing (cancelling a
        workflow run is asynchronous, so the run may get this far): ``None`` to go on.

        A run the label started (or its queue dispatch) stops when the label goes; a run that
        ``@chimera run`` started has no label to lose, and stops when ``@chimera stop`` gave
        its ChangeQueue slot back."""
        info = self.client.issue(self.decided.issue)
        run = self.decided.mode == "run"
        by_label = run and self.ctx.event_name != "issue_comment"
        # A scheduled run (the tick's dispatch) hangs on chimera:schedule instead.
        scheduled = self.settings.is_self(self.decided.started_by)
        trigger = SCHEDULE_LABEL if scheduled else self.settings.label
        unlabelled = by_label and trigger not in info.labels
        released = run and not by_label and LABEL_RUNNING not in info.labels
        if info.state == "open" and not unlabelled and not released:
            return None
        key = outcome_key(self.ctx.workflow_run, self.decided.issue)
        found = find_outcome(self.client, info.number, key, self.settings.identities)
        if found is not None and found[1] not in REPLACEABLE and found[1] != "cancelled":
            return None  # a re-run of a publish that finished: it removed the label itself
        if info.state != "open":
            return f"#{info.number} was closed"
        if unlabelled:
            return f"the {trigger!r} label was removed"
        return "`@chimera stop` stopped the run"

    def _cancelled(self, why: str) -> PublishResult:
        self.audit.record("decision", outcome="cancelled", detail=why)
        key = outcome_key(self.ctx.workflow_run, self.decided.issue)
        found = find_outcome(self.client, self.decided.issue, key, self.settings.identities)
        detail = f"Cancelled: {why} while the run was in flight; nothing was published."
        # drain's cancel may have said it already, naming who cancelled: that stays.
        cid = found[0] if found and found[1] == "cancelled" else self.comment("cancelled", detail)
        self.queue.release(self.decided.issue)
        return PublishResult(
            "cancelled",
            issue=self.decided.issue,
            comment_id=cid,
            detail=detail,
            audit_head=self.audit.head,
        )

    def _push_and_pr(self, g: GateResult, *, held_unmet: bool) -> PublishResult:
        d = self.decided
        stopped = self._stopped()
        if stopped is not None:
            return self._cancelled(stopped)
        branch = self.settings.branch(d.issue)
        remote = self.ctx.remote
        current = self.git.remote_sha(remote, branch)
        # A person's push since decide is never overwritten; a re-run's own earlier push (this
        # step run again) is told apart below, once the commit it would push is known.
        moved = bool(d.head_sha) and current != d.head_sha
        if moved and d.mode != "rerun":
            return self._fail_moved(branch, current)
        self.git.run("checkout", "--quiet", "--force", "-B", branch, d.base_sha)
        with tempfile.NamedTemporaryFile("wb", suffix=".diff", delete=False) as fh:
            fh.write(g.patch.encode("utf-8", "surrogateescape"))
            patch_file = fh.name
        try:
            applied = self.git.run("apply", "--index", "--binary", patch_file, check=False)
        finally:
            Path(patch_file).unlink(missing_ok=True)
        if applied.returncode != 0:
            return self._fail(
                "crashed",
                f"The patch does not apply to {d.base_sha[:12]}: "
                f"{code(applied.stderr.strip(), 300)}. Nothing was pushed.",
            )
        message = f"chimera: {self._title()} (#{d.issue})\n\nVerified patch {g.patch_sha[:16]}."
        self.git.run("commit", "--quiet", "--no-verify", "-m", message)
        head = self.git.run("rev-parse", "HEAD").stdout.strip()
        if d.mode == "rerun" and d.head_sha:
            # Iterating on review: the same tree (base + the cumulative patch) as one new
            # commit on the PR's head, so the PR keeps its history and gains a commit.
            head = self.git.on_top(remote, head, d.head_sha, message)
        if current and self.git.same_change(remote, branch, current, head):
            head = current  # a re-run of this step: the branch already holds this change
        elif moved:
            return self._fail_moved(branch, current)
        else:
            push = self.git.run(
                "push",
                "--quiet",
                f"--force-with-lease=refs/heads/{branch}:{current}",
                remote,
                f"HEAD:refs/heads/{branch}",
                check=False,
            )
            if push.returncode != 0:
                return self._fail(
                    "blocked",
                    f"Pushing {branch} was refused: {code(push.stderr.strip(), 300)}. Nothing "
                    "was overwritten.",
                )
        self.audit.record("pushed", branch=branch, head=head, lease=current)
        try:
            return self._pull_request(g, head=head, held_unmet=held_unmet)
        except GitHubPermissionDenied as exc:
            return self._fail(
                "blocked",
                f"GitHub refused to open the pull request ({code(str(exc), 200)}): "
                f"{ACTIONS_PR_SETTING}.",
            )

    def _fail_moved(self, branch: str, current: str) -> PublishResult:
        return self._fail(
            "blocked",
            f"{branch} moved (now {current[:12] or 'deleted'}; the run started from "
            f"{(self.decided.head_sha or '')[:12]}): a person pushed meanwhile, and Chimera "
            "never overwrites that. Review the PR, then approve or request changes again.",
        )

    def _title(self) -> str:
        try:
            info = self.client.issue(self.decided.issue)
        except GitHubError:
            return f"issue {self.decided.issue}"
        return " ".join(info.title.split())[:120] or f"issue {self.decided.issue}"

    def _pull_request(self, g: GateResult, *, head: str, held_unmet: bool) -> PublishResult:
        d = self.decided
        awaiting = g.risk_high
        paused = self.outcome is not None and self.outcome.status == "awaiting_approval"
        draft = awaiting or bool(g.scan.flagged) or g.advisory
        marker = {
            "issue": d.issue,
            "run_id": self.outcome.run_id if self.outcome else None,
            "workflow_run": self.ctx.workflow_run,
            "artifact": self.settings.run_artifact,
            "status": "awaiting_approval" if awaiting else "ready",
            "paused": paused,
            "started_by": d.started_by,
            "risk": "high" if awaiting else "low",
            "spec_change": g.spec_change,
            "base": d.base_sha,
            "acceptance_sha256": d.acceptance_sha256,
            "head": head,
        }
        body = pr_body(
            issue=d.issue,
            report=self.report,
            awaiting=awaiting,
            marker=marker,
            repository=self.ctx.repository,
            server_url=self.ctx.server_url,
            workflow_run=self.ctx.workflow_run,
            audit_summary=self.audit_summary,
            findings=[f.__dict__ for f in g.scan.flagged],
            risk_reasons=g.risk_reasons,
            verification=self._verification(g, held_unmet),
            spec_met=not held_unmet,
            advisory=g.advisory,
            sections=self.ctx.sections,
        )
        title = f"Chimera: {self._title()} (#{d.issue})"
        base_ref = d.base_ref or self.ctx.default_branch
        _earlier_pull, earlier = chimera_pull(self.client, self.settings, d.issue)
        pull, created = self.queue.open_or_update(
            d.issue, title=title, body=body, base=base_ref, draft=draft
        )
        if not created and earlier is not None and self.ctx.workflow_run:
            # A re-run of this step finds the PR this run opened: it still "opened" it.
            created = earlier.get("workflow_run") == self.ctx.workflow_run and d.mode == "run"
        labels = [LABEL_RISK_HIGH] if awaiting else []
        if g.spec_change:
            labels.append(LABEL_SPEC_CHANGE)
        if labels:
            self.client.add_labels(pull.number, *labels)
        if awaiting:
            reviewers = [r for r in self.settings.risk_reviewers if r and r != pull.author]
            self.client.request_reviewers(pull.number, reviewers)
        elif pull.draft and not draft:
            self.client.mark_ready(pull)
            pull = self.client.pull(pull.number)
        merge = self._merge(pull, g, draft=draft, labels=labels)
        shown_on = self._spec_verdict(head, g, held_unmet)
        self.audit.record(
            "decision",
            outcome="awaiting_approval" if awaiting else "published",
            pr=pull.number,
            draft=draft,
            labels=labels,
            merge=merge,
            verdict_shown_as=shown_on,
        )
        return self._announce(pull, g, created=created, awaiting=awaiting, merge=merge)

    def _verification(self, g: GateResult, held_unmet: bool) -> list[str]:
        v = self.verified
        lines = [
            f"Verify job verdict: **{v.verdict}** — the goal rebuilt from the base commit "
            f"`{v.base_sha[:12]}` (Spec digest `{v.spec_digest[:16]}`), on the patch "
            f"`{v.patch_sha256[:16]}`, which publish re-hashed before applying it.",
        ]
        if held_unmet:
            lines.append(
                "The goal is **not met yet**: the run paused after a risky step, which is held "
                "for approval; the remaining work resumes after it."
            )
        if g.advisory:
            lines.append(
                "**The verdict is advisory: the verify job ran agent-written code without the "
                "sandbox (`sandbox: scrubbed`)**, so this PR stays a draft labelled `risk:high` "
                "and is never auto-merged."
            )
        return lines

    def _merge(self, pull: PullInfo, g: GateResult, *, draft: bool, labels: list[str]) -> str:
        if g.scan.flagged:
            return "not requested: the patch has findings flagged for review"
        if g.advisory:
            return "not requested: the verdict is advisory (sandbox: scrubbed)"
        if draft or g.risk_high:
            return "not requested: the change is held for a person"
        try:
            return self.queue.request_merge(
                pull, enabled=self.settings.auto_merge, labels=(*pull.labels, *labels)
            )
        except GitHubError as exc:
            return f"auto-merge not enabled: {exc}"

    def _spec_verdict(self, head: str, g: GateResult, held_unmet: bool) -> str:
        passed = g.verdict == "passed" and not g.advisory
        if held_unmet:
            title = "Spec not met yet: a risky step awaits approval"
        elif g.advisory:
            title = "Spec verdict advisory: verify ran without the sandbox"
        else:
            title = "Spec met: verified from the base commit"
        summary = "\n".join(self._verification(g, held_unmet))
        try:
            return self.client.spec_verdict(head, passed=passed, title=title, summary=summary)
        except GitHubError as exc:
            log.warning("could not show the Spec verdict on %s: %s", head[:12], exc)
            return f"not shown: {exc}"

    def _announce(
        self, pull: PullInfo, g: GateResult, *, created: bool, awaiting: bool, merge: str
    ) -> PublishResult:
        if awaiting:
            kind = "awaiting_approval"
            reasons = "; ".join(code(r, 160) for r in g.risk_reasons)
            detail = (
                f"PR #{pull.number} is a draft labelled `risk:high` ({reasons}). A person with "
                "write access, other than the one who started the run, must approve the PR's "
                "head commit; then CI starts (and a paused run resumes)."
            )
            add: tuple[str, ...] = (LABEL_AWAITING,)
            drop: tuple[str, ...] = (LABEL_PR_OPEN, LABEL_FAILED)
        else:
            kind = (
                "resumed"
                if self.decided.mode == "resume"
                else ("pr_opened" if created else "pr_updated")
            )
            flagged = (
                f" {len(g.scan.flagged)} finding(s) are flagged for review in the PR body, so "
                "it is a draft."
                if g.scan.flagged
                else ""
            )
            detail = (
                f"PR #{pull.number} meets the Spec: the verify job rebuilt the goal from the base "
                "commit, every goal requirement passes and nothing that passed before turned "
                f"red.{flagged} CI starts after a person with write access approves its head "
                f"commit. Merge: {merge or 'left to people'}."
            )
            add = (LABEL_PR_OPEN,)
            drop = (LABEL_AWAITING, LABEL_FAILED)
        head = self.audit.head
        if head:
            detail += f" Publish audit log head: `{head}` (the publish job's artifact)."
        cid = self.comment(kind, detail, link=pull.html_url)
        self._finish_labels(add=add, drop=drop)
        return PublishResult(
            kind,
            issue=self.decided.issue,
            pr_number=pull.number,
            pr_url=pull.html_url,
            created=created,
            comment_id=cid,
            merge=merge,
            scan=g.scan.to_json(),
            detail=detail,
            audit_head=self.audit.head,
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
    try:
        return publisher.run()
    except GitHubError as exc:
        limited = isinstance(exc, GitHubRateLimited)
        what = "rate-limited Chimera" if limited else "failed"
        try:
            publisher.comment(
                "rate_limited" if limited else "crashed",
                f"GitHub {what} while publishing ({code(str(exc), 200)}). Re-run the "
                "workflow's publish job: it is idempotent (no duplicate PR), and this comment "
                "is edited to the outcome.",
            )
            # The slot is freed (a stalled publish must not stall the queue); a re-run of
            # publish takes the labels to the outcome.
            client.add_labels(decided.issue, LABEL_FAILED)
            queue.release(decided.issue)
        except GitHubError:
            log.warning("could not report the failure on #%s", decided.issue)
        raise
