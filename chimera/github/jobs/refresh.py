"""The Spec check kept fresh on a Chimera PR: when someone pushes to its branch, the Spec check
run is posted again for the new head — judged through the sandboxed verify path only.

Three jobs, split like decide → verify → publish (the ``refresh``, ``refresh-verify`` and
``spec-check`` jobs of the reusable workflow, ``.github/workflows/chimera.yml``):

* :func:`refresh_job` (``pull-requests: read``, ``issues: read``; no secrets) — from the
  ``pull_request_target`` ``synchronize`` event of a Chimera branch: the PR's marker names its
  base commit and the digest of the acceptance its run started with; the issue's ``chimera``
  blocks are used only while their digest still matches that record (an edit to the issue
  after the run started refuses the refresh rather than judging the PR against another goal,
  which an issue author without write access could otherwise relax); the outputs are decide's
  (:class:`~chimera.github.trust.chain.Decided`, mode ``refresh``, ``head-sha`` the pushed head).
* the verify job (``contents: read``; no secrets; the strict sandbox) in mode ``refresh``
  judges the diff from the base to the pushed head
  (:func:`~chimera.github.trust.gitops.commit_patch`) instead of an agent's artifact; besides its
  four outputs it hands on ``results`` (requirement id → status after the change), which is
  data.
* :func:`spec_check_job` (``checks: write``, ``contents: read``; no secrets, no project code)
  re-derives before it posts: the diff's hash from its own checkout, the Spec digest from the
  base commit's blobs, the requirement ids and their YAML lines from the spec files of the base
  and the head (parsed, never run). Verify's ``results`` are claims checked the way publish
  checks them (:func:`~chimera.github.conversation.checkrun.claimed_lines`): an id the Spec does not
  declare, a missing one or an unknown status fails the check with the reason; a mismatch of
  the re-derived hashes posts a failing check that says so, never verify's claims.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import ChimeraError
from chimera.github.action.context import ActionContext, JobResult
from chimera.github.conversation.checkrun import (
    RequirementLine,
    claimed_lines,
    post_spec_check,
    spec_rows,
)
from chimera.github.gate.permissions import chimera_pull
from chimera.github.trust.basecommit import sha256_text, spec_digest
from chimera.github.trust.chain import Decided, Verified, acceptance_output, acceptance_requirements
from chimera.github.trust.gitops import commit_patch

if TYPE_CHECKING:
    from chimera.github.trust.settings import ActionSettings

__all__ = [
    "ACCEPTANCE_CHANGED",
    "CHECK_NAME",
    "RefreshResult",
    "SpecCheckResult",
    "refresh_job",
    "spec_check_job",
]

CHECK_NAME = "Chimera Spec"
ACCEPTANCE_CHANGED = "the issue's acceptance changed since the run started; re-run to adopt it"


@dataclass(frozen=True)
class RefreshResult:
    """The refresh gate: ``proceed`` when a Chimera PR's head is to be judged."""

    proceed: bool
    reason: str
    decided: Decided | None = None
    #: A refusal a maintainer must see (no check run is posted on the head), not a skip.
    refused: bool = False

    def to_job(self) -> JobResult:
        outputs = {"proceed": "true" if self.proceed else "false", "status": self.reason}
        if self.decided is not None:
            outputs |= self.decided.to_outputs()
        summary = f"**Chimera Spec not refreshed**: {self.reason}\n" if self.refused else ""
        record = {"proceed": self.proceed, "reason": self.reason}
        return JobResult(outputs=outputs, record=record, summary=summary)


def refresh_job(ctx: ActionContext, settings: ActionSettings) -> RefreshResult:
    """Decide whether a push to a PR branch refreshes the Spec check (module docstring).

    Raises:
        UsageError: no repository or no token.
        GitHubError: the API failed after retries.
    """
    payload = ctx.payload
    pull_data = payload.get("pull_request") if isinstance(payload, dict) else None
    if ctx.event_name not in ("pull_request_target", "pull_request") or not isinstance(
        pull_data, dict
    ):
        return RefreshResult(False, f"not a pull request event ({ctx.event_name})")
    head = pull_data.get("head") or {}
    issue = settings.issue_of_branch(str(head.get("ref") or ""))
    if issue is None:
        return RefreshResult(False, "not a Chimera branch")
    client = ctx.connect()
    pull, marker = chimera_pull(client, settings, issue)
    if pull is None or marker is None or pull.number != pull_data.get("number"):
        return RefreshResult(False, f"no open Chimera PR for #{issue} with Chimera's marker")
    base = marker.base or ""
    if not base:
        return RefreshResult(False, f"PR #{pull.number}'s marker names no base commit")
    acceptance, digest = acceptance_output(client.issue(issue).body)
    # The goal is the one the run started with (the marker's digest, written by Chimera's own
    # publish), never whatever the issue says now: the issue's text is used only while it
    # still hashes to that record. No record (an older marker) proves nothing either.
    if marker.acceptance_sha256 != digest:
        return RefreshResult(False, ACCEPTANCE_CHANGED, refused=True)
    decided = Decided(
        issue=issue,
        mode="refresh",
        base_sha=base,
        acceptance=tuple(json.loads(acceptance)),
        acceptance_sha256=digest,
        pull=pull.number,
        # The head GitHub reports now (a later push's own event judges its own head).
        head_sha=pull.head_sha,
        base_ref=pull.base_ref,
        started_by=marker.started_by or "",
    )
    return RefreshResult(True, "refresh", decided)


@dataclass(frozen=True)
class SpecCheckResult:
    """What the privileged side posted: the check run, its conclusion, and why."""

    check_run: int
    conclusion: str
    reasons: tuple[str, ...] = ()

    def to_job(self) -> JobResult:
        return JobResult(
            outputs={"check-run": str(self.check_run), "status": self.conclusion},
            record={
                "check_run": self.check_run,
                "conclusion": self.conclusion,
                "reasons": list(self.reasons),
            },
        )


def spec_check_job(
    ctx: ActionContext,
    settings: ActionSettings,
    root: Path,
    decided: Decided,
    verified: Verified,
    results: str,
) -> SpecCheckResult:
    """Re-derive what verify judged, then post the Spec check run on ``decided.head_sha``.

    Args:
        root: a checkout holding both commits (``fetch-depth: 0``; nothing is fetched).
        results: verify's ``results`` output (JSON: requirement id → status); untrusted data.

    Raises:
        UsageError: no repository or no token; ``decided`` names no head.
        GitHubError: the API failed after retries.
    """
    from chimera.errors import UsageError

    head = decided.head_sha
    if not head:
        raise UsageError("the Spec check needs decide's head-sha (the pushed head)")
    reasons: list[str] = []
    rows: dict[str, tuple[str, int]] = {}
    wanted: list[str] = []
    try:
        patch = commit_patch(root, decided.base_sha, head)
        if sha256_text(patch) != verified.patch_sha256:
            reasons.append("verify judged another change than base..head")
        digest = spec_digest(root, decided.base_sha, settings.spec_path, decided.acceptance_sha256)
        if digest != verified.spec_digest:
            reasons.append("verify judged another Spec or goal than the base commit's")
        if verified.base_sha != decided.base_sha:
            reasons.append("verify judged from another base commit")
        with tempfile.TemporaryDirectory(prefix="chimera-spec-check-") as tmp:
            rows = spec_rows(root, head, settings.spec_path, Path(tmp))
            rows = spec_rows(root, decided.base_sha, settings.spec_path, Path(tmp)) | rows
        wanted = [str(r.get("id")) for r in acceptance_requirements(decided.acceptance)]
    except ChimeraError as exc:
        reasons.append(str(exc))
    lines, refused = _lines(rows, wanted, results, verified, reasons)
    reasons += refused
    verdict = verified.verdict if not reasons else "error"
    title = f"Spec {verdict} on {head[:12]}" + (" (verify's outputs refused)" if reasons else "")
    run_id = post_spec_check(ctx.connect(), head, lines, title=title, name=CHECK_NAME)
    passed = verdict == "passed" and all(r.status in ("passed", "skipped") for r in lines)
    return SpecCheckResult(run_id, "success" if passed else "failure", tuple(reasons))


def _lines(
    rows: dict[str, tuple[str, int]],
    wanted: list[str],
    results: str,
    verified: Verified,
    reasons: list[str],
) -> tuple[list[RequirementLine], list[str]]:
    """The check's lines and the reasons verify's claims were refused (publish's rules)."""
    first = next(iter(rows.values()), ("specs", 1))
    if reasons:
        # Nothing verify said is shown when its outputs do not match this head.
        return [RequirementLine("chimera-verify", "error", first[0], 1, "; ".join(reasons))], []
    # Verify must report every derived id and the goal's own (as publish requires).
    lines, refused = claimed_lines(rows, [*rows, *wanted], results, fallback=(first[0], 1))
    if verified.verdict != "passed":
        # The goal's own rules (red on the base, nothing green turned red) failed.
        lines.append(
            RequirementLine(
                "chimera-goal",
                "failed",
                first[0],
                1,
                f"the goal check's verdict: {verified.verdict}",
            )
        )
    return lines, refused
