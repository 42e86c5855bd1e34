"""Deterministic replay of the branch store's journals into a SQLite store, with trust.

Any token with ``contents: write`` can push to the memory branch, so a commit's author line
proves nothing. Replay honours trusted, persona and promotion ops only from commits its
:class:`~chimera.memory.trust.TrustPolicy` accepts: on GitHub, commits GitHub signed for
Chimera's App (``createCommitOnBranch``) or verified-signed commits by write-access people
(:func:`chimera.github.trust.branchcommit.github_trust`); locally, good signatures by allowed keys
(:func:`verified_signers`). From any other commit:

* an ADD replays as a **tainted** item (taint source ``commit:<sha12>``); a persona ADD
  becomes a tainted *semantic* item, so it is shown as data and never as an instruction;
* an UPDATE, DELETE or RESTORE applies only to an item that is already tainted;
* a PROMOTE is refused.

Lines are read as appended by each commit (the journal at the commit minus the journal at its
first parent); a journal that was rewritten rather than appended contributes nothing from that
commit, and the report says so. The same branch always replays to the same store.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace

from chimera.errors import UsageError
from chimera.memory.branch import JOURNALS, CommitInfo, GitBranch
from chimera.memory.items import TAINTED, JournalOp, OpKind, Tier
from chimera.memory.store import MemoryStore
from chimera.memory.trust import SignedAs, TrustPolicy


def verified_signers(signers: Collection[str]) -> SignedAs:
    """Trust commits whose signature git verified as good (``%G?`` = ``G``) and whose signer
    (``%GS``: the allowed-signers principal, or the key's user id) is in ``signers``."""
    return SignedAs(frozenset(signers))


@dataclass
class ReplayReport:
    """What replay did.

    Attributes:
        tip: the replayed tip ('' when the branch does not exist).
        commits: commits read; trusted_commits: those the trust function accepted.
        applied: ops that changed the store; downgraded: ops applied as tainted.
        refused: ``(commit sha, op, reason)`` for ops not applied.
    """

    tip: str = ""
    commits: int = 0
    trusted_commits: int = 0
    applied: int = 0
    downgraded: int = 0
    refused: list[tuple[str, str, str]] = field(default_factory=list)


def admit(
    op: JournalOp, commit: CommitInfo, trusted: bool, store: MemoryStore
) -> tuple[JournalOp | None, str]:
    """The op as replay applies it (``None`` with a reason when refused)."""
    if trusted:
        return op, ""
    mark = f"commit:{commit.sha[:12]}"
    if op.op is OpKind.ADD:
        tier = Tier.SEMANTIC if op.tier is Tier.PERSONA else op.tier
        sources = tuple(dict.fromkeys((*op.taint_sources, mark)))
        return replace(op, tier=tier, provenance=TAINTED, taint_sources=sources), ""
    if op.op is OpKind.PROMOTE:
        return None, "promotion from an unverified commit"
    target = store.get(op.id)
    if target is None or not target.tainted:
        return None, f"{op.op.value} of a trusted item from an unverified commit"
    sources = tuple(dict.fromkeys((*op.taint_sources, mark)))
    return replace(op, provenance=TAINTED, taint_sources=sources), ""


def _appended(branch: GitBranch, commit: CommitInfo, name: str) -> tuple[list[str], bool]:
    now = branch.read(commit.sha, name)
    before = branch.read(commit.parent, name) if commit.parent else ""
    if not now.startswith(before):
        return [], False
    return [line for line in now[len(before) :].splitlines() if line.strip()], True


def replay_into(
    branch: GitBranch, store: MemoryStore, trust: TrustPolicy, *, tip: str | None = None
) -> ReplayReport:
    """Fetch the branch (unless ``tip`` is given) and apply every journalled op, oldest commit
    first, into ``store`` — which should be empty: the SQLite cache is derived, so rebuild it
    rather than replaying twice.

    Raises:
        JournalError: git fails. ChimeraError: the store cannot be written.
    """
    head = tip if tip is not None else branch.fetch()
    report = ReplayReport(tip=head or "")
    if not head:
        return report
    for commit in branch.history(head):
        report.commits += 1
        trusted = trust.trusted(commit)
        report.trusted_commits += trusted
        # One transaction per commit; ops are admitted one by one inside it, so an op sees
        # what the ops before it in the same commit did.
        changed = store.apply_many(_admitted(branch, commit, trusted, store, report))
        report.applied += changed
        report.downgraded += 0 if trusted else changed
    return report


def _admitted(
    branch: GitBranch, commit: CommitInfo, trusted: bool, store: MemoryStore, report: ReplayReport
) -> Iterator[JournalOp]:
    for name in JOURNALS:
        lines, appended = _appended(branch, commit, name)
        if not appended:
            report.refused.append((commit.sha, name, "journal rewritten, not appended"))
            continue
        for line in lines:
            try:
                op = JournalOp.from_json(json.loads(line))
            except (ValueError, UsageError) as exc:
                report.refused.append((commit.sha, line[:80], f"not an op: {exc}"))
                continue
            admitted, reason = admit(op, commit, trusted, store)
            if admitted is None:
                report.refused.append((commit.sha, f"{op.op.value} {op.id}", reason))
                continue
            yield admitted


__all__ = ["ReplayReport", "admit", "replay_into", "verified_signers"]
