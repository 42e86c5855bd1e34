"""The publish step after the push: open or update the PR (draft when held, flagged or
advisory), request reviewers or auto-merge, show the Spec verdict on the head commit (a check
run with one line per requirement, annotated at its YAML line), and announce the outcome on
the issue with its closing labels."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

from chimera.errors import ChimeraError, GitHubError, GitHubPermissionDenied
from chimera.github.client.client import PullInfo
from chimera.github.conversation.checkrun import (
    RequirementLine,
    claimed_lines,
    post_spec_check,
    spec_rows,
)
from chimera.github.conversation.documents import pr_body
from chimera.github.gate.permissions import chimera_pull
from chimera.github.publish.base import PublishResult, PublishStep
from chimera.github.publish.gate import GateResult
from chimera.github.queue.queue import (
    LABEL_AWAITING,
    LABEL_FAILED,
    LABEL_PR_OPEN,
    LABEL_RISK_HIGH,
    LABEL_SPEC_CHANGE,
)
from chimera.github.trust.carriers import PrMarker
from chimera.github.trust.chain import acceptance_requirements
from chimera.github.trust.summary import code

__all__ = ["PullRequestStep"]

log = logging.getLogger("chimera.github.publish.publish")


class PullRequestStep:
    """The PR, its Spec verdict and the outcome of
    :class:`~chimera.github.publish.publish.Publisher`.

    Args:
        step: the publish step's inputs, outcome comment and labels.
    """

    def __init__(self, step: PublishStep) -> None:
        self.step = step

    def pull_request(self, g: GateResult, *, head: str, held_unmet: bool) -> PublishResult:
        """Open or update the PR for the pushed ``head``, show the Spec verdict on it and
        announce the outcome on the issue.

        Raises:
            GitHubError: the API failed after retries (``GitHubPermissionDenied``: the
                repository does not let Actions open pull requests).
        """
        step = self.step
        d = step.decided
        awaiting = g.risk_high or held_unmet
        # An approval resumes the run when verify found it paused; a held change whose goal
        # is met resumes only a run that says it awaits approval (else the approval starts
        # CI): either way a person approves first, and nothing here pushes anything.
        paused = held_unmet or (awaiting and step.run_paused)
        draft = awaiting or bool(g.scan.flagged) or g.advisory
        # Every field derived here or taken from decide (never from the agent's artifact),
        # and written through the same grammar every reader parses it with.
        marker = PrMarker(
            issue=d.issue,
            run_id=step.run_id(),
            workflow_run=step.ctx.workflow_run or None,
            artifact=step.marker_artifact(),
            status="awaiting_approval" if awaiting else "ready",
            paused=paused,
            started_by=d.started_by or None,
            risk="high" if awaiting else "low",
            spec_change=g.spec_change,
            base=d.base_sha,
            acceptance_sha256=d.acceptance_sha256,
            head=head,
            adopted_from=step.adopted_from() or None,
        ).to_marker()
        body = pr_body(
            issue=d.issue,
            report=step.report,
            awaiting=awaiting,
            marker=marker,
            repository=step.ctx.repository,
            server_url=step.ctx.server_url,
            workflow_run=step.ctx.workflow_run,
            audit_summary=step.audit_summary,
            findings=[f.__dict__ for f in g.scan.flagged],
            risk_reasons=g.risk_reasons,
            verification=self._verification(g, held_unmet),
            spec_met=not held_unmet,
            advisory=g.advisory,
            sections=step.ctx.sections,
        )
        title = f"Chimera: {step.title()} (#{d.issue})"
        base_ref = d.base_ref or step.ctx.default_branch
        _earlier_pull, earlier = chimera_pull(step.client, step.settings, d.issue)
        pull, created = step.queue.open_or_update(
            d.issue, title=title, body=body, base=base_ref, draft=draft
        )
        if not created and earlier is not None and step.ctx.workflow_run:
            # A re-run of this step finds the PR this run opened: it still "opened" it.
            created = earlier.workflow_run == step.ctx.workflow_run and d.mode == "run"
        labels = [LABEL_RISK_HIGH] if awaiting else []
        if g.spec_change:
            labels.append(LABEL_SPEC_CHANGE)
        if labels:
            step.client.add_labels(pull.number, *labels)
        if awaiting:
            reviewers = [r for r in step.settings.risk_reviewers if r and r != pull.author]
            step.client.request_reviewers(pull.number, reviewers)
        elif pull.draft and not draft:
            step.client.mark_ready(pull)
            pull = step.client.pull(pull.number)
        merge = self._merge(pull, g, draft=draft, labels=labels)
        shown_on = self._spec_verdict(head, g, held_unmet)
        step.audit.record(
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
        v = self.step.verified
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
            return self.step.queue.request_merge(
                pull, enabled=self.step.settings.auto_merge, labels=(*pull.labels, *labels)
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
        lines, reasons = self._requirement_lines(head)
        if reasons:
            # verify's per-requirement claims do not match the Spec: the check fails, and
            # nothing it claimed can make it pass.
            passed = False
            title = "Spec check refused verify's results: " + reasons[0]
        try:
            post_spec_check(
                self.step.client, head, lines, title=title, passed=passed, preamble=summary
            )
            shown = "check_run"
        except GitHubPermissionDenied:
            # A personal token may not write check runs: the verdict goes to a commit status.
            shown = self._verdict_status(head, passed=passed, title=title, summary=summary)
        except GitHubError as exc:
            log.warning("could not show the Spec verdict on %s: %s", head[:12], exc)
            shown = f"not shown: {exc}"
        self.step.audit.record("spec_check", shown=shown, rows=len(lines), refused=reasons)
        return shown

    def _verdict_status(self, head: str, *, passed: bool, title: str, summary: str) -> str:
        try:
            return self.step.client.spec_verdict(head, passed=passed, title=title, summary=summary)
        except GitHubError as exc:
            log.warning("could not show the Spec verdict on %s: %s", head[:12], exc)
            return f"not shown: {exc}"

    def _requirement_lines(self, head: str) -> tuple[list[RequirementLine], list[str]]:
        """One line per requirement for the check on ``head``: ids and YAML lines re-derived
        from the spec files of the base commit (and of ``head``, which publish built from the
        re-hashed patch, for where they sit now); verify's ``results`` are claims checked
        against them (:func:`~chimera.github.conversation.checkrun.claimed_lines`)."""
        d = self.step.decided
        spec = self.step.settings.spec_path
        try:
            with tempfile.TemporaryDirectory(prefix="chimera-publish-check-") as tmp:
                base = spec_rows(self.step.ctx.root, d.base_sha, spec, Path(tmp))
                landed = spec_rows(self.step.ctx.root, head, spec, Path(tmp))
            wanted = [str(r.get("id")) for r in acceptance_requirements(d.acceptance)]
        except ChimeraError as exc:
            why = f"the Spec's requirements could not be re-derived: {exc}"
            return [RequirementLine("chimera-verify", "error", "specs", 1, why)], [why]
        # Verify judges the base commit's requirements plus the goal's: those it must report.
        required = [*base, *wanted]
        fallback = next(iter(landed.values()), next(iter(base.values()), (spec or "specs", 1)))
        return claimed_lines(
            base | landed, required, self.step.ctx.verified_results, fallback=(fallback[0], 1)
        )

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
                if self.step.decided.mode == "resume"
                else ("pr_opened" if created else "pr_updated")
            )
            flagged = (
                f" {len(g.scan.flagged)} finding(s) are flagged for review in the PR body, so "
                "it is a draft."
                if g.scan.flagged
                else ""
            )
            ci = (
                # The GITHUB_TOKEN-only tier: no App token can start CI (chimera.github.trust.tier).
                "CI does not start by itself (no GitHub App): after approving its head commit, "
                "close and reopen it to run CI"
                if self.step.settings.no_app
                else "CI starts after a person with write access approves its head commit"
            )
            detail = (
                f"PR #{pull.number} meets the Spec: the verify job rebuilt the goal from the base "
                "commit, every goal requirement passes and nothing that passed before turned "
                f"red.{flagged} {ci}. Merge: {merge or 'left to people'}."
            )
            add = (LABEL_PR_OPEN,)
            drop = (LABEL_AWAITING, LABEL_FAILED)
        head = self.step.audit.head
        if head:
            detail += f" Publish audit log head: `{head}` (the publish job's artifact)."
        cid = self.step.comment(kind, detail, link=pull.html_url)
        self.step.finish_labels(add=add, drop=drop)
        return PublishResult(
            kind,
            issue=self.step.decided.issue,
            pr_number=pull.number,
            pr_url=pull.html_url,
            created=created,
            comment_id=cid,
            merge=merge,
            scan=g.scan.to_json(),
            detail=detail,
            audit_head=self.step.audit.head,
        )
