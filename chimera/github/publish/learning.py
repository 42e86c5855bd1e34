"""Publish's side of learning: what an agent job proposed, re-derived and stored as tainted.

The agent job's run folder may hold ``learning.json`` (skills and playbook bullets its
Reflector proposed: :mod:`chimera.evolution.reflection`). It is data from a job with an LLM
key and untrusted input. Publish applies :func:`~chimera.evolution.action.publish_acceptance`
to it with only what publish re-derived: verify's verdict, the file count of the patch *whose
hash verify judged* (any other patch keeps nothing), and the skills of the base commit
(a promoted one is never replaced). What is accepted goes to the branch store
(:class:`~chimera.evolution.branchstore.BranchProposals`) as provisional, tainted proposals,
committed through GitHub's ``createCommitOnBranch`` when publish holds Chimera's App token (so
GitHub signs it for the App, as memory's commits), else pushed with git.

The run folder's ``uses.json`` — which skills and playbook bullets the agent job *says* its
prompts held — is counted too, for every verdict (a failure is what demotes): publish keeps the
skill names and versions and bullet ids (shape-checked, capped) and sets the outcome from
verify's verdict, never the artifact's; the record (source ``action``) lands in ``uses.jsonl``
on the same branch (:func:`learn_uses`). Applied locally by ``chimera playbook fetch``, such
counts may demote or retire a skill, never promote it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from chimera.errors import ChimeraError, ConfigError, HandoffError
from chimera.evolution.action import publish_acceptance
from chimera.evolution.branchstore import (
    LEARNING_BRANCH,
    BranchProposals,
    ProposalSink,
)
from chimera.evolution.learned_context import USES_NAME
from chimera.evolution.proposals import Proposal
from chimera.evolution.reflection import LEARNING_FILE
from chimera.evolution.skills import LearnedSkill
from chimera.evolution.usage import UseRecord, claim_from_json
from chimera.github.trust.artifacts import RUN_DIR, read_artifact, read_patch
from chimera.github.trust.basecommit import sha256_text
from chimera.github.trust.carriers import run_label
from chimera.github.trust.chain import Decided, Verified

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.publish.publish import PublishResult


class RunPlace(Protocol):
    """Where the publish job runs: the workflow run's id and ``RUNNER_TEMP`` (``None`` when
    local). The job's :class:`~chimera.github.action.context.ActionContext` is one; taking only
    this keeps the jobs' context out of the modules the jobs are built from."""

    @property
    def workflow_run(self) -> str | None: ...

    @property
    def runner_temp(self) -> Path | None: ...


_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)
MAX_LEARNING_BYTES = 4 << 20


@dataclass(frozen=True)
class Learned:
    """What publish did with an artifact's proposals (``stored``: proposal ids; ``commit``:
    the branch commit, '' when nothing was stored; ``refused``: one line per refused item)."""

    stored: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    commit: str = ""

    def to_json(self) -> dict[str, object]:
        return {"stored": list(self.stored), "refused": list(self.refused), "commit": self.commit}


def learn_from_artifact(
    root: Path,
    artifacts: Path,
    verified: Verified,
    sink: ProposalSink,
    *,
    run_id: str,
    issue: int | None,
) -> Learned:
    """Accept what is acceptable of ``artifacts/run/learning.json`` and store it in ``sink``.

    Args:
        root: publish's checkout (the base commit's skills are read from git, not the tree).
        artifacts: the agent job's artifact folder (untrusted).
        verified: verify's outputs (verdict, base commit, the judged patch's hash).
        run_id, issue: the run as publish names it (never the artifact's claim).

    Raises:
        ChimeraError: the store failed (git).
    """
    try:
        raw = read_artifact(artifacts, f"{RUN_DIR}/{LEARNING_FILE}", limit=MAX_LEARNING_BYTES)
    except HandoffError as exc:  # a link, a special file, too large: never followed
        return Learned(refused=(f"{LEARNING_FILE}: {str(exc)[-160:]}",))
    if raw is None:
        return Learned()
    try:
        document = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        return Learned(refused=(f"{LEARNING_FILE}: not JSON ({type(exc).__name__})",))
    if not isinstance(document, dict):
        return Learned(refused=(f"{LEARNING_FILE}: not a JSON object",))
    patch = read_patch(artifacts)
    if sha256_text(patch) != verified.patch_sha256:
        return Learned(refused=("the patch is not the one verify judged; nothing learned",))
    files = len({m.group(2) for m in _FILE.finditer(patch)})
    document["run_id"] = run_id  # the artifact's claim about its run is replaced
    accepted = publish_acceptance(
        document,
        verdict=verified.verdict,
        files_changed=files,
        existing=base_skills(root, verified.base_sha),
    )
    proposals = [
        Proposal.make(run_id, "skill", "action", verified.verdict, skill=s.to_markdown())
        for s in accepted.skills
    ] + [
        Proposal.make(run_id, "bullet", "action", verified.verdict, section=sec, text=text)
        for sec, text in accepted.bullets
    ]
    commit = sink.store(proposals, run_id=run_id, issue=issue) or ""
    return Learned(tuple(p.id for p in proposals), accepted.refused, commit)


def claimed_use(artifacts: Path, verified: Verified, *, run_id: str) -> UseRecord | None:
    """The agent job's ``uses.json`` as a use record with verify's verdict and publish's run id
    (:func:`~chimera.evolution.usage.claim_from_json`; ``None``: no file, or nothing usable)."""
    try:
        # Never through a link: the agent job wrote this folder (the [trust] no-follow rule).
        raw = read_artifact(artifacts, f"{RUN_DIR}/{USES_NAME}", limit=MAX_LEARNING_BYTES)
        if raw is None:
            return None
        document = json.loads(raw.decode("utf-8"))
    except (HandoffError, ValueError):
        return None
    return claim_from_json(document, run_id=run_id, passed=verified.verdict == "passed")


def learn_uses(
    artifacts: Path, verified: Verified, sink: BranchProposals, *, run_id: str, issue: int | None
) -> dict[str, object]:
    """Store the agent job's claimed use (:func:`claimed_use`) on the branch; a JSON-ready
    report (``{}``: nothing claimed)."""
    record = claimed_use(artifacts, verified, run_id=run_id)
    if record is None:
        return {}
    commit = sink.store_uses([record], run_id=run_id, issue=issue) or ""
    return {
        "skills": [f"{n} v{v}" for n, v in record.skills],
        "bullets": list(record.bullets),
        "passed": record.passed,
        "commit": commit,
    }


def base_skills(root: Path, commit: str) -> dict[str, LearnedSkill]:
    """The skills committed at ``commit`` (``.chimera/skills/<name>/SKILL.md``), by name;
    an unreadable one is left out (it cannot be a promoted skill to protect)."""

    def git(*args: str) -> str:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
        return proc.stdout if proc.returncode == 0 else ""

    out: dict[str, LearnedSkill] = {}
    for name in git("ls-tree", "-r", "--name-only", commit, ".chimera/skills").splitlines():
        if not name.endswith("/SKILL.md"):
            continue
        try:
            skill = LearnedSkill.from_markdown(git("show", f"{commit}:{name}"), source=name)
        except ConfigError:
            continue
        out[skill.name] = skill
    return out


def branch_sink(
    root: Path, cache: Path, *, remote: str = "origin", client: GitHubClient | None = None
) -> BranchProposals:
    """The learning branch of ``root``'s ``remote`` through memory's ``GitBranch`` (its bare
    cache at ``cache``), written through ``createCommitOnBranch`` with ``client`` (GitHub
    signs each commit as the token's account: the App's for its installation token), else
    pushed with git.

    Raises:
        ChimeraError: ``remote`` has no URL, or git fails.
    """
    from chimera.github.trust.branchcommit import ApiWriter
    from chimera.memory.branch import GitBranch

    proc = subprocess.run(
        ["git", "-C", str(root), "remote", "get-url", remote],
        capture_output=True,
        text=True,
        check=False,
    )
    url = proc.stdout.strip()
    if proc.returncode != 0 or not url:
        raise ChimeraError(f"git remote {remote}: no URL to store learning proposals on")
    branch = GitBranch(cache, url, branch=LEARNING_BRANCH)
    return BranchProposals(branch, ApiWriter(client, branch) if client is not None else branch)


def publish_learning(
    root: Path,
    artifacts: Path,
    verified: Verified,
    *,
    cache: Path,
    run_id: str,
    issue: int,
    client: GitHubClient | None = None,
    proposals: bool = True,
) -> dict[str, object]:
    """:func:`learn_from_artifact` (when ``proposals``) and :func:`learn_uses` into the
    learning branch of ``root``'s ``origin`` (its git cache at ``cache``; ``client``: see
    :func:`branch_sink`), as a JSON-ready report (``{}``: the artifact proposes and claims
    nothing, and the branch is not touched). Learning never fails a publish: an error is the
    report's ``error``."""
    has_proposals = proposals and os.path.lexists(artifacts / RUN_DIR / LEARNING_FILE)
    has_uses = os.path.lexists(artifacts / RUN_DIR / USES_NAME)
    if not has_proposals and not has_uses:
        return {}
    proposed: dict[str, object] = {}
    used: dict[str, object] = {}
    try:
        sink = branch_sink(root, cache, client=client)
        if has_proposals:
            proposed = learn_from_artifact(
                root, artifacts, verified, sink, run_id=run_id, issue=issue
            ).to_json()
        if has_uses:
            used = learn_uses(artifacts, verified, sink, run_id=run_id, issue=issue)
    except ChimeraError as exc:
        return {**proposed, **({"uses": used} if used else {}), "error": str(exc)[:300]}
    return {**proposed, **({"uses": used} if used else {})}


def learn_after_publish(
    ctx: RunPlace,
    root: Path,
    artifacts: Path,
    decided: Decided,
    verified: Verified,
    result: PublishResult,
    *,
    client: GitHubClient | None = None,
) -> dict[str, object]:
    """The publish job's one call, after publishing: :func:`publish_learning` (signed by
    GitHub when ``client`` holds an App token) — proposals only when the verified change was
    pushed (a PR exists), the claimed use with verify's verdict always; its report is one
    ``learning`` event in its own audit log,
    ``$RUNNER_TEMP/chimera-publish/learning/audit.jsonl`` (publish's log keeps its order), and
    is returned."""
    temp = ctx.runner_temp or artifacts.parent
    run_id = run_label(decided.issue, ctx.workflow_run)
    report = publish_learning(
        root, artifacts, verified, cache=temp / "chimera-learning.git", run_id=run_id,
        issue=decided.issue, client=client, proposals=result.pr_number is not None,
    )  # fmt: skip
    if report:
        from chimera.github.publish.gate import PublishAudit

        PublishAudit(temp / "chimera-publish" / "learning", f"learning-{run_id}").record(
            "learning", **report
        )
    return report


__all__ = [
    "Learned",
    "base_skills",
    "branch_sink",
    "claimed_use",
    "learn_after_publish",
    "learn_from_artifact",
    "learn_uses",
    "publish_learning",
]
