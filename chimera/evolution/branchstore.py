"""Learning proposals on the branch store: the adapter between publish and memory's git branch.

The Action's publish job keeps what it accepted from an agent job's ``learning.json``
(:func:`~chimera.evolution.action.publish_acceptance`) as :class:`~chimera.evolution.proposals.
Proposal` records — provisional and tainted — in ``proposals.jsonl`` on an orphan branch
(default ``chimera-learning``), one commit per run naming the run and the issue, so the next
runner and a person can read them. Only the memory package's public :class:`~chimera.memory.
branch.GitBranch` surface is used (``fetch``, ``read``, ``git`` plumbing, ``push``; its
identity and signing settings), so this module is the one place to change when the branch
store's API moves. A push rejected as non-fast-forward refetches and appends again.

Nothing on the branch is ever retrieved into a prompt: ``chimera playbook fetch`` copies the
proposals into the local ledger (still pending, still tainted) and a person accepts one with
``chimera playbook accept``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from chimera.errors import ChimeraError
from chimera.evolution.proposals import Proposal

LEARNING_BRANCH = "chimera-learning"
PROPOSALS_NAME = "proposals.jsonl"


class BranchLike(Protocol):
    """What the adapter needs of memory's ``GitBranch``."""

    sign: bool

    def fetch(self) -> str | None: ...

    def read(self, commit: str, name: str) -> str: ...

    def git(self, *args: str, stdin: str | None = None, check: bool = True) -> str: ...

    def push(self, commit: str) -> bool: ...


class ProposalSink(Protocol):
    """Where publish puts accepted proposals (the branch store, or a test's list)."""

    def store(self, proposals: Sequence[Proposal], *, run_id: str, issue: int | None) -> str | None:
        """Store ``proposals`` for ``run_id``; an id of what was written (``None``: nothing)."""
        ...


class BranchProposals:
    """:class:`ProposalSink` over a memory ``GitBranch`` (module docstring).

    Args:
        branch: a ``GitBranch`` whose ``branch`` is the learning branch.
        attempts: pushes tried before giving up.
    """

    def __init__(self, branch: BranchLike, *, attempts: int = 5) -> None:
        self.branch = branch
        self.attempts = attempts

    def proposals(self) -> list[Proposal]:
        """Every proposal on the branch's tip (``[]`` when the branch does not exist).

        Raises:
            ChimeraError: git fails.
        """
        tip = self.branch.fetch()
        if tip is None:
            return []
        out: list[Proposal] = []
        for line in self.branch.read(tip, PROPOSALS_NAME).splitlines():
            try:
                out.append(Proposal.from_json(json.loads(line)))
            except ValueError:
                continue  # written only by publish; a bad line is skipped, never trusted
        return out

    def store(self, proposals: Sequence[Proposal], *, run_id: str, issue: int | None) -> str | None:
        """One commit appending ``proposals`` (forced provisional and untrusted) to
        ``proposals.jsonl``; the pushed sha, or ``None`` when there is nothing to store.

        Raises:
            ChimeraError: git fails, or the push was still rejected after ``attempts`` tries.
        """
        if not proposals:
            return None
        lines = "".join(
            json.dumps(p.to_json() | {"state": "provisional", "trusted": False}, sort_keys=True)
            + "\n"
            for p in proposals
        )
        where = f" (issue #{issue})" if issue else ""
        trailers = f"Chimera-Run: {run_id}" + (f"\nChimera-Issue: {issue}" if issue else "")
        message = f"chimera learning: proposals of run {run_id}{where}\n\n{trailers}\n"
        tip = self.branch.fetch()
        for _ in range(max(1, self.attempts)):
            before = self.branch.read(tip, PROPOSALS_NAME) if tip else ""
            if before and not before.endswith("\n"):
                before += "\n"
            blob = self.branch.git("hash-object", "-w", "--stdin", stdin=before + lines).strip()
            tree = self.branch.git("mktree", stdin=f"100644 blob {blob}\t{PROPOSALS_NAME}\n")
            args = ["commit-tree", tree.strip(), "-m", message]
            if tip:
                args += ["-p", tip]
            if self.branch.sign:
                args.append("-S")
            commit = self.branch.git(*args).strip()
            if self.branch.push(commit):
                return commit
            tip = self.branch.fetch()
        raise ChimeraError(
            f"learning branch: the push was rejected {self.attempts} times (other runs keep "
            "landing first); the proposals were not stored"
        )


__all__ = ["LEARNING_BRANCH", "PROPOSALS_NAME", "BranchLike", "BranchProposals", "ProposalSink"]
