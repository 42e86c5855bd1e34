"""The publish step's records and shared state: where it publishes (:class:`PublishContext`),
what it did (:class:`PublishResult`), and :class:`PublishStep` — the step's inputs, the one
outcome comment, the closing labels and the failure path every part of the step ends in.

The flow is :class:`chimera.github.publish.publish.Publisher`, which hands its :class:`PublishStep`
to the guards re-checked before pushing (:mod:`chimera.github.publish.guards`) and to the PR step
(the PR, its Spec verdict and the announcement: :mod:`chimera.github.publish.pr`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.errors import ChimeraError, GitHubError, HandoffError
from chimera.github.client.client import GitHubClient
from chimera.github.conversation.documents import adopted_section, outcome_comment
from chimera.github.conversation.outcome import outcome_key, post_outcome_once
from chimera.github.conversation.render import Section
from chimera.github.gate.permissions import chimera_pull
from chimera.github.publish.gate import PublishAudit
from chimera.github.queue.queue import LABEL_AWAITING, LABEL_FAILED, LABEL_PR_OPEN, ChangeQueue
from chimera.github.trust.artifacts import Outcome, read_outcome, read_summary
from chimera.github.trust.carriers import PrMarker, check, derived_run_id
from chimera.github.trust.chain import Decided, Verified
from chimera.github.trust.gitops import PublishGit
from chimera.github.trust.report import RunReport, read_report
from chimera.github.trust.settings import ActionSettings
from chimera.github.trust.summary import artifact_link

__all__ = ["ACTIONS_PR_SETTING", "Display", "PublishContext", "PublishResult", "PublishStep"]

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
            :func:`chimera.github.publish.memory.memory_sections`).
        verified_results: verify's ``results`` output (JSON: requirement id → status), claims
            the Spec check cross-checks against the spec files (``""``: none were passed).
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
    verified_results: str = ""


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


@dataclass(frozen=True)
class Display:
    """The agent job's display data, each part parsed once at the door (any may be missing
    or refused: it is only shown).

    Attributes:
        outcome: ``outcome.json`` (:class:`~chimera.github.trust.artifacts.Outcome`).
        report: ``report.json`` (:class:`~chimera.github.trust.report.RunReport`).
        summary: ``summary.md`` (read without following a link).
        refused: one line per part refused (a forged field, a link), for publish's audit log.
    """

    outcome: Outcome | None = None
    report: RunReport | None = None
    summary: str = ""
    refused: tuple[str, ...] = ()


def _display(artifacts: Path) -> Display:
    refused: list[str] = []
    outcome: Outcome | None = None
    report: RunReport | None = None
    summary = ""
    try:
        outcome = read_outcome(artifacts)
    except ChimeraError as exc:
        refused.append(str(exc))
    try:
        report = read_report(artifacts)
    except ChimeraError as exc:
        refused.append(str(exc))
    try:
        summary = read_summary(artifacts)
    except ChimeraError as exc:
        refused.append(str(exc))
    return Display(outcome, report, summary, tuple(refused))


class PublishStep:
    """One publish step's inputs and the ways it ends (see :mod:`chimera.github.publish.publish`).

    Args:
        ctx: where publishing happens.
        client: the API client (the workflow's ``GITHUB_TOKEN``).
        settings: the Action's settings.
        queue: the change queue (the PR, merge requests, the slot).
        decided: decide's outputs.
        verified: verify's outputs (``None``: verify left none; only the failure paths run).
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
        self.ctx = ctx
        self.client = client
        self.settings = settings
        self.queue = queue
        self.decided = decided
        self._verified = verified
        self.git = PublishGit(ctx.root)
        self.run_link = artifact_link(ctx.server_url, ctx.repository, ctx.workflow_run)
        self.audit = PublishAudit(
            ctx.audit_dir, f"publish-{decided.issue}-{ctx.workflow_run or 'local'}"
        )
        self.display = _display(ctx.artifacts)
        self.outcome, self.report = self.display.outcome, self.display.report
        self.audit_summary = self.display.summary
        self._adopted: str | None = None

    @property
    def verified(self) -> Verified:
        """verify's outputs.

        Raises:
            ChimeraError: verify left none (only the "no verdict" path runs then).
        """
        if self._verified is None:
            raise ChimeraError("the verify job left no verdict")
        return self._verified

    @property
    def run_paused(self) -> bool:
        """The agent's run says it awaits approval. Never a reason to push: it only keeps a
        ``paused`` verdict from being published when the run did not pause (it stopped or
        failed, so an approval would have nothing to resume)."""
        return self.outcome is not None and self.outcome.status == "awaiting_approval"

    def run_id(self) -> str | None:
        """The run id the PR's marker names, derived here, never copied from the artifact:
        this workflow run's agent run (``gh-<issue>-<workflow run>``) for a new run or a
        re-run; for a resume, the run the PR's own marker (Chimera's, parsed with the run
        store's id rule) already named.

        Raises:
            GitHubError: the API failed after retries.
        """
        d = self.decided
        if d.mode == "resume":
            _pull, marker = chimera_pull(self.client, self.settings, d.issue)
            return marker.run_id if marker is not None else None
        try:
            return derived_run_id(d.issue, self.ctx.workflow_run)
        except HandoffError as exc:
            self.audit.record("run_id_refused", reason=str(exc))
            return None

    def marker_artifact(self) -> str | None:
        """The agent attempt's artifact name for the marker (the ``agent-artifact`` input,
        a job output of the agent job): ``None`` when it is not an artifact name."""
        try:
            return check("artifact", self.settings.run_artifact, "agent-artifact")
        except HandoffError as exc:
            self.audit.record("artifact_refused", reason=str(exc))
            return None

    def adopted_from(self) -> str:
        """The acceptance digest this re-run replaced (``""``: it replaced none), re-derived
        from the open PR's marker (Chimera's own) against decide's digest — never from an
        artifact. Read once, before this run rewrites the marker; when a re-run of this step
        finds the marker this workflow run already wrote, its ``adopted_from`` says it.

        Raises:
            GitHubError: the API failed after retries.
        """
        if self._adopted is None:
            d = self.decided
            before = ""
            if d.mode == "rerun":
                _pull, found = chimera_pull(self.client, self.settings, d.issue)
                marker = found or PrMarker()
                ours = self.ctx.workflow_run is not None and marker.workflow_run == str(
                    self.ctx.workflow_run
                )
                before = (marker.adopted_from if ours else marker.acceptance_sha256) or ""
            self._adopted = before if before != d.acceptance_sha256 else ""
        return self._adopted

    # -- comments and labels ---------------------------------------------------------------

    def comment(self, kind: str, detail: str, *, link: str | None = None) -> int:
        """Post (or edit) this workflow run's one outcome comment; returns its id.

        Raises:
            GitHubError: the API failed after retries.
        """
        # One outcome comment per workflow run: a re-run of the step finds it again and
        # edits it to the newest truth (chimera.github.conversation.outcome).
        issue = self.decided.issue
        try:
            adopted = adopted_section(self.adopted_from(), self.decided.acceptance_sha256)
        except GitHubError:
            adopted = None  # the failure being reported may be this very lookup

        def render(key: str) -> str:
            return outcome_comment(
                kind,
                issue=issue,
                key=key,
                detail=detail,
                link=link,
                report=self.report,
                run_link=self.run_link,
                sections=() if adopted is None else (adopted,),
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

    def finish_labels(self, *, add: tuple[str, ...], drop: tuple[str, ...]) -> None:
        """The closing labels: ``add``, minus ``drop`` and the trigger; the queue slot freed."""
        issue = self.decided.issue
        self.client.add_labels(issue, *add)
        for label in drop:
            if label not in add:
                self.client.remove_label(issue, label)
        # After a run the trigger label goes, so adding it again retries. Chimera's own
        # removal is an event from its identity, which never cancels anything.
        self.client.remove_label(issue, self.settings.label)
        # Only this run's claim: a run started since (after a stop) keeps its slot.
        self.queue.release(issue, key=outcome_key(self.ctx.workflow_run, issue))

    def fail(self, kind: str, detail: str) -> PublishResult:
        """End the step as ``kind`` (nothing published): the outcome comment, the labels."""
        self.audit.record("decision", outcome=kind, detail=detail)
        cid = self.comment(kind, detail)
        self.finish_labels(add=(LABEL_FAILED,), drop=(LABEL_PR_OPEN, LABEL_AWAITING))
        return PublishResult(
            kind,
            issue=self.decided.issue,
            comment_id=cid,
            detail=detail,
            audit_head=self.audit.head,
        )

    def title(self) -> str:
        """The issue's title on one line (cut to 120 characters; ``issue N`` when unread)."""
        try:
            info = self.client.issue(self.decided.issue)
        except GitHubError:
            return f"issue {self.decided.issue}"
        return " ".join(info.title.split())[:120] or f"issue {self.decided.issue}"
