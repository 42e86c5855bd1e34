"""Publish a finished run: apply, scan, push ``chimera/issue-<n>``, open or update the PR, label,
request reviewers, comment — exactly one outcome comment on the issue, never silence.

(DESIGN.md step 5; issue "Publishing and the ChangeQueue".) The publish job holds the write
token and no LLM key. It trusts nothing from the agent job it does not re-check:

1. the patch must apply to the recorded base commit (``git apply --check`` first);
2. :func:`chimera.github.scan.scan_patch` scans it — a ``block`` finding rejects it (reported,
   never pushed), ``review`` findings are listed in the PR body and stop auto-merge;
3. it is committed on ``chimera/issue-<n>`` and pushed with ``--force-with-lease`` against the
   branch tip the run started from, so a person's push in between is never overwritten;
4. the ChangeQueue opens the PR or updates the existing one (one PR per issue, idempotent);
   ``risk: high`` changes open as a draft labelled ``risk:high`` with reviewers requested;
   added requirements add ``spec-change``; low-risk PRs may get auto-merge or the merge queue;
5. the issue's labels show the new report, the trigger label is removed (adding it again
   retries), and one outcome comment says what happened.

Every outcome kind is in :data:`chimera.github.summary.OUTCOME_TITLES`.

The run report (``report.json``, :class:`~chimera.github.report.RunReport`) is parsed once, at
the start, and only shown: what to publish, whether it is a held risky change, and the
marker's run and starter come from the :class:`~chimera.github.artifacts.Outcome` and the
patch. A report that does not parse is a ``crashed`` outcome naming the problem.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.errors import ChimeraError, GitHubError, GitHubRateLimited, HandoffError
from chimera.github.artifacts import PATCH_FILE, SUMMARY_FILE, Outcome, read_outcome
from chimera.github.client import GitHubClient, PullInfo
from chimera.github.queue import (
    LABEL_AWAITING,
    LABEL_FAILED,
    LABEL_PR_OPEN,
    LABEL_RISK_HIGH,
    LABEL_SPEC_CHANGE,
    ChangeQueue,
)
from chimera.github.report import RunReport, read_report
from chimera.github.scan import ScanLimits, ScanResult, scan_patch
from chimera.github.settings import ActionSettings
from chimera.github.summary import artifact_link, code, outcome_comment, pr_body

__all__ = ["PublishContext", "PublishResult", "publish"]

log = logging.getLogger(__name__)

COMMIT_NAME = "Chimera"
COMMIT_EMAIL = "chimera@users.noreply.github.com"


@dataclass(frozen=True)
class PublishContext:
    """Where publishing happens.

    Attributes:
        root: a checkout of the repository whose ``remote`` accepts pushes (write token).
        artifacts: the agent job's artifacts folder.
        repository: ``owner/name``.
        server_url: ``GITHUB_SERVER_URL`` (links).
        workflow_run: ``GITHUB_RUN_ID`` of this workflow run (its artifact holds the run).
        default_branch: the base branch for new PRs.
        remote: the git remote name.
    """

    root: Path
    artifacts: Path
    repository: str
    server_url: str
    workflow_run: str | None
    default_branch: str = "main"
    remote: str = "origin"


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
        }


class _Git:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = dict(
            os.environ,
            GIT_AUTHOR_NAME=COMMIT_NAME,
            GIT_AUTHOR_EMAIL=COMMIT_EMAIL,
            GIT_COMMITTER_NAME=COMMIT_NAME,
            GIT_COMMITTER_EMAIL=COMMIT_EMAIL,
            GIT_TERMINAL_PROMPT="0",
        )

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["git", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            env=self.env,
            check=False,
        )
        if check and proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise ChimeraError(f"git {args[0]} failed: {' / '.join(tail)}")
        return proc

    def has_commit(self, sha: str) -> bool:
        return self.run("cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0

    def ensure_commit(self, remote: str, sha: str) -> None:
        if self.has_commit(sha):
            return
        self.run("fetch", "--quiet", remote, sha, check=False)
        if not self.has_commit(sha):
            self.run("fetch", "--quiet", remote)
        if not self.has_commit(sha):
            raise ChimeraError(f"the base commit {sha[:12]} is not in {remote}")

    def remote_sha(self, remote: str, branch: str) -> str:
        out = self.run("ls-remote", remote, f"refs/heads/{branch}").stdout.strip()
        return out.split()[0] if out else ""


class Publisher:
    """One publish step (see the module docstring); use :func:`publish`."""

    def __init__(
        self,
        ctx: PublishContext,
        client: GitHubClient,
        settings: ActionSettings,
        queue: ChangeQueue,
    ) -> None:
        self.ctx = ctx
        self.client = client
        self.settings = settings
        self.queue = queue
        self.git = _Git(ctx.root)
        self.run_link = artifact_link(ctx.server_url, ctx.repository, ctx.workflow_run)

    # -- comments and labels ---------------------------------------------------------------

    def _comment(
        self,
        issue: int,
        kind: str,
        detail: str,
        *,
        link: str | None = None,
        report: RunReport | None = None,
    ) -> int:
        # One outcome comment per workflow run: a re-run of the step finds it and posts nothing.
        key = f"{self.ctx.workflow_run or 'local'}:{issue}"
        body = outcome_comment(
            kind,
            issue=issue,
            key=key,
            detail=detail,
            link=link,
            report=report,
            run_link=self.run_link,
        )
        marker = body[body.rindex("<!-- chimera:outcome") :]
        return self.client.comment(issue, body, marker=marker)

    def _finish_labels(self, issue: int, *, add: tuple[str, ...], drop: tuple[str, ...]) -> None:
        self.client.add_labels(issue, *add)
        for label in drop:
            if label not in add:
                self.client.remove_label(issue, label)
        # After a run the trigger label goes, so adding it again retries. Chimera's own
        # removal is an event from its identity, which never cancels anything.
        self.client.remove_label(issue, self.settings.label)
        self.queue.release(issue)

    def _fail(self, issue: int, kind: str, detail: str, report: RunReport | None) -> PublishResult:
        cid = self._comment(issue, kind, detail, report=report)
        self._finish_labels(issue, add=(LABEL_FAILED,), drop=(LABEL_PR_OPEN, LABEL_AWAITING))
        return PublishResult(kind, issue=issue, comment_id=cid, detail=detail)

    # -- the flow --------------------------------------------------------------------------

    def run(self) -> PublishResult:
        try:
            outcome = read_outcome(self.ctx.artifacts)
        except ChimeraError as exc:
            return self._crashed_without_outcome(str(exc))
        if outcome.issue is None:
            return PublishResult("ignored", detail=outcome.detail or "no issue")
        if outcome.kind == "ignored":
            return self._ignored(outcome)
        try:
            report = read_report(self.ctx.artifacts)
        except HandoffError as exc:
            return self._fail(
                outcome.issue,
                "crashed",
                f"The run report is unreadable: {code(str(exc), 300)}. Nothing was published. "
                "Add the label again to retry.",
                None,
            )
        if outcome.kind == "crashed":
            return self._fail(
                outcome.issue,
                "crashed",
                f"The run crashed: {code(outcome.detail, 300)}. Nothing was published. Add the "
                f"label again to retry.",
                report,
            )
        return self._published_run(outcome, report)

    def _crashed_without_outcome(self, why: str) -> PublishResult:
        issue_env = os.environ.get("CHIMERA_ISSUE", "").strip()
        if not issue_env.isdigit():
            return PublishResult("crashed", detail=why)
        issue = int(issue_env)
        return self._fail(
            issue,
            "crashed",
            "The agent job ended without an outcome (it crashed or was cancelled). Nothing was "
            "published. Add the label again to retry.",
            None,
        )

    def _ignored(self, outcome: Outcome) -> PublishResult:
        assert outcome.issue is not None
        if not outcome.explain:
            return PublishResult("ignored", issue=outcome.issue, detail=outcome.detail)
        target = outcome.pull or outcome.issue
        cid = self._comment(target, "refused", f"Nothing was done: {outcome.detail}")
        return PublishResult("refused", issue=outcome.issue, comment_id=cid, detail=outcome.detail)

    def _published_run(self, outcome: Outcome, report: RunReport | None) -> PublishResult:
        assert outcome.issue is not None
        issue = outcome.issue
        # The decision reads the outcome; the report only fills in words it left empty.
        status = outcome.status
        stop_reason = outcome.stop_reason or ""
        shown_reason = stop_reason or (report.stop_reason or "" if report else "")
        detail = outcome.stop_detail or (report.stop_detail if report else "")
        if status in ("stopped",):
            return self._fail(
                issue,
                "budget_exhausted",
                f"The run stopped before the Spec was met: {code(shown_reason, 40)} — "
                f"{code(detail, 300)}. Raise the budget or the iteration limit and add the label "
                "again.",
                report,
            )
        if status == "failed":
            kind = "blocked" if stop_reason == "blocked" else "spec_not_met"
            last = report.last_failure if report else ""
            text = (
                f"The Spec is not met after the run: {code(detail, 300)}."
                + (f" Last failure: {code(last, 400)}." if last else "")
                + " Nothing was published."
            )
            return self._fail(issue, kind, text, report)
        if status not in ("done", "awaiting_approval"):
            return self._fail(
                issue,
                "crashed",
                f"The run ended in status {code(status or 'unknown', 40)} "
                f"({code(detail, 200)}); nothing was published.",
                report,
            )
        if report is None:
            return self._fail(
                issue,
                "crashed",
                "The agent job reported a finished run but wrote no run report; nothing was "
                "published. Add the label again to retry.",
                None,
            )
        patch_path = self.ctx.artifacts / PATCH_FILE
        patch = patch_path.read_text(encoding="utf-8") if patch_path.is_file() else ""
        if not patch.strip():
            if outcome.mode == "resume" and outcome.pull is not None:
                return self._push_and_pr(outcome, report, patch="", scan=ScanResult())
            return self._fail(
                issue,
                "hollow",
                "The run reported success but changed nothing: a hollow success is not "
                "published. The goal requirements may already pass on the base; check the "
                "issue's acceptance requirements.",
                report,
            )
        scan = scan_patch(
            patch,
            workspace=str(self.ctx.root),
            limits=ScanLimits(self.settings.max_patch_bytes, self.settings.max_file_bytes),
            base=outcome.base_sha,
        )
        if scan.blocked:
            reasons = "; ".join(
                f"{code(f.path or 'patch', 80)}: {code(f.reason, 160)}" for f in scan.blocked[:10]
            )
            return self._fail(
                issue,
                "blocked",
                f"The patch was rejected by the publish scan and was not pushed: {reasons}.",
                report,
            )
        return self._push_and_pr(outcome, report, patch=patch, scan=scan)

    def _push_and_pr(
        self, outcome: Outcome, report: RunReport, *, patch: str, scan: ScanResult
    ) -> PublishResult:
        assert outcome.issue is not None and outcome.base_sha is not None
        issue = outcome.issue
        branch = self.settings.branch(issue)
        remote = self.ctx.remote
        self.git.ensure_commit(remote, outcome.base_sha)
        current = self.git.remote_sha(remote, branch)
        expected = outcome.branch_head if outcome.mode in ("resume", "rerun") else None
        if expected and current != expected:
            return self._fail(
                issue,
                "blocked",
                f"{branch} moved (now {current[:12] or 'deleted'}, the run started from "
                f"{expected[:12]}): a person pushed meanwhile, and Chimera never overwrites "
                "that. Review the PR, then approve or request changes again.",
                report,
            )
        self.git.run("checkout", "--quiet", "--force", "-B", branch, outcome.base_sha)
        if patch.strip():
            with tempfile.NamedTemporaryFile(
                "w", suffix=".diff", delete=False, encoding="utf-8"
            ) as fh:
                fh.write(patch)
                patch_file = fh.name
            try:
                check = self.git.run("apply", "--check", "--binary", patch_file, check=False)
                if check.returncode != 0:
                    return self._fail(
                        issue,
                        "crashed",
                        f"The patch does not apply to {outcome.base_sha[:12]}: "
                        f"{code(check.stderr.strip(), 300)}. Nothing was pushed.",
                        report,
                    )
                self.git.run("apply", "--index", "--binary", patch_file)
            finally:
                Path(patch_file).unlink(missing_ok=True)
            title = self._title(issue)
            message = (
                f"chimera: {title} (#{issue})\n\nRun {outcome.run_id}; "
                f"audit head {report.audit_head or 'none'}."
            )
            self.git.run("commit", "--quiet", "--no-verify", "-m", message)
            head = self.git.run("rev-parse", "HEAD").stdout.strip()
            if current and self._same_tree(remote, branch, current, head):
                # A re-run of this step: the branch already holds exactly this change.
                return self._pull_request(outcome, report, scan=scan, head=current)
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
                    issue,
                    "blocked",
                    f"Pushing {branch} was refused: {code(push.stderr.strip(), 300)}. Nothing "
                    "was overwritten.",
                    report,
                )
        else:
            head = current or outcome.base_sha
        return self._pull_request(outcome, report, scan=scan, head=head)

    def _same_tree(self, remote: str, branch: str, current: str, head: str) -> bool:
        if not self.git.has_commit(current):
            self.git.run("fetch", "--quiet", remote, f"refs/heads/{branch}", check=False)
        if not self.git.has_commit(current):
            return False
        trees = [
            self.git.run("rev-parse", f"{sha}^{{tree}}").stdout.strip() for sha in (current, head)
        ]
        parents = [self.git.run("rev-parse", f"{sha}^").stdout.strip() for sha in (current, head)]
        return trees[0] == trees[1] and parents[0] == parents[1]

    def _title(self, issue: int) -> str:
        try:
            info = self.client.issue(issue)
        except GitHubError:
            return f"issue {issue}"
        return " ".join(info.title.split())[:120] or f"issue {issue}"

    def _pull_request(
        self, outcome: Outcome, report: RunReport, *, scan: ScanResult, head: str
    ) -> PublishResult:
        assert outcome.issue is not None
        issue = outcome.issue
        awaiting = outcome.status == "awaiting_approval"
        spec_dir = self.settings.spec_path.strip("/") + "/"
        spec_change = outcome.spec_change or any(f.startswith(spec_dir) for f in scan.files)
        risk_high = awaiting or bool(outcome.risk_reasons)
        marker = {
            "issue": issue,
            "run_id": outcome.run_id,
            "workflow_run": self.ctx.workflow_run,
            "artifact": self.settings.artifact_name,
            "status": "awaiting_approval" if awaiting else "ready",
            "started_by": outcome.started_by,
            "risk": "high" if risk_high else "low",
            "spec_change": spec_change,
            "head": head,
        }
        summary_path = self.ctx.artifacts / SUMMARY_FILE
        audit_summary = summary_path.read_text(encoding="utf-8") if summary_path.is_file() else ""
        body = pr_body(
            issue=issue,
            report=report,
            awaiting=awaiting,
            marker=marker,
            repository=self.ctx.repository,
            server_url=self.ctx.server_url,
            workflow_run=self.ctx.workflow_run,
            audit_summary=audit_summary,
            findings=[f.__dict__ for f in scan.flagged],
            risk_reasons=outcome.risk_reasons,
        )
        title = f"Chimera: {self._title(issue)} (#{issue})"
        base_ref = outcome.base_ref or self.ctx.default_branch
        pull, created = self.queue.open_or_update(
            issue, title=title, body=body, base=base_ref, draft=awaiting
        )
        labels: list[str] = []
        if risk_high:
            labels.append(LABEL_RISK_HIGH)
        if spec_change:
            labels.append(LABEL_SPEC_CHANGE)
        if labels:
            self.client.add_labels(pull.number, *labels)
        if awaiting:
            reviewers = [r for r in self.settings.risk_reviewers if r and r != pull.author]
            self.client.request_reviewers(pull.number, reviewers)
        elif pull.draft:
            self.client.mark_ready(pull)
            pull = self.client.pull(pull.number)
        merge = ""
        if not awaiting and not scan.flagged:
            try:
                merge = self.queue.request_merge(
                    pull, enabled=self.settings.auto_merge, labels=(*pull.labels, *labels)
                )
            except GitHubError as exc:
                merge = f"auto-merge not enabled: {exc}"
        elif scan.flagged:
            merge = "not requested: the patch has findings flagged for review"
        return self._announce(
            outcome, report, pull, created=created, awaiting=awaiting, merge=merge, scan=scan
        )

    def _announce(
        self,
        outcome: Outcome,
        report: RunReport,
        pull: PullInfo,
        *,
        created: bool,
        awaiting: bool,
        merge: str,
        scan: ScanResult,
    ) -> PublishResult:
        assert outcome.issue is not None
        issue = outcome.issue
        if awaiting:
            kind = "awaiting_approval"
            pending = ", ".join(code(p, 60) for p in report.pending_approval)
            detail = (
                f"PR #{pull.number} is a draft labelled `risk:high`: the change to {pending} is "
                "verified and held. A person with write access, other than the one who started "
                "the run, must approve the PR's head commit; the run then resumes."
            )
            add: tuple[str, ...] = (LABEL_AWAITING,)
            drop: tuple[str, ...] = (LABEL_PR_OPEN, LABEL_FAILED)
        else:
            kind = (
                "resumed"
                if outcome.mode == "resume"
                else ("pr_opened" if created else "pr_updated")
            )
            flagged = (
                f" {len(scan.flagged)} finding(s) are flagged for review in the PR body."
                if scan.flagged
                else ""
            )
            detail = (
                f"PR #{pull.number} meets the Spec: every goal requirement passes and nothing "
                f"that passed before turned red.{flagged} Merge: {merge or 'left to people'}."
            )
            add = (LABEL_PR_OPEN,)
            drop = (LABEL_AWAITING, LABEL_FAILED)
        cid = self._comment(issue, kind, detail, link=pull.html_url, report=report)
        self._finish_labels(issue, add=add, drop=drop)
        return PublishResult(
            kind,
            issue=issue,
            pr_number=pull.number,
            pr_url=pull.html_url,
            created=created,
            comment_id=cid,
            merge=merge,
            scan=scan.to_json(),
            detail=detail,
        )


def publish(
    ctx: PublishContext, client: GitHubClient, settings: ActionSettings, queue: ChangeQueue
) -> PublishResult:
    """Publish the run in ``ctx.artifacts`` (see the module docstring).

    A rate limit that outlasts the retries is reported on the issue as ``rate-limited`` when
    the API still answers, and re-raised so the job fails visibly.

    Raises:
        GitHubError: the API failed after retries.
    """
    publisher = Publisher(ctx, client, settings, queue)
    try:
        return publisher.run()
    except GitHubRateLimited as exc:
        try:
            outcome = read_outcome(ctx.artifacts)
        except ChimeraError:
            raise exc from None
        if outcome.issue is not None:
            try:
                publisher._comment(
                    outcome.issue,
                    "rate_limited",
                    f"GitHub rate-limited Chimera while publishing ({code(str(exc), 200)}). "
                    "Re-run the workflow's publish job; it is idempotent (no duplicate PR).",
                )
            except GitHubError:
                log.warning("could not report the rate limit on #%s", outcome.issue)
        raise
