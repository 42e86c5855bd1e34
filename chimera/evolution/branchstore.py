"""Learning proposals on the branch store: the adapter between publish and memory's git branch.

The Action's publish job keeps what it accepted from an agent job's ``learning.json``
(:func:`~chimera.evolution.action.publish_acceptance`) as :class:`~chimera.evolution.proposals.
Proposal` records — provisional and tainted — in ``proposals.jsonl`` on an orphan branch
(default ``chimera-learning``), one commit per run naming the run and the issue, so the next
runner and a person can read them.

The adapter needs two things of the branch store, as small protocols: a reader (``fetch()`` →
tip, ``read(commit, path)``) and a writer whose ``land(parent, files, message)`` commits
``files`` on ``parent`` and raises :class:`~chimera.errors.JournalConflict` when the branch
moved (then it re-reads and appends again). That is the branch store's writer interface (a git
push, or GitHub's signed ``createCommitOnBranch`` in the Action); for a ``GitBranch`` without
``land``, :class:`PlumbingLander` builds the commit with its ``git`` plumbing and ``push``.

Nothing on the branch is ever retrieved into a prompt: ``chimera playbook fetch`` copies the
proposals into the local ledger (still pending, still tainted) and a person accepts one with
``chimera playbook accept``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from chimera.errors import ChimeraError, JournalConflict
from chimera.evolution.proposals import Proposal

LEARNING_BRANCH = "chimera-learning"
PROPOSALS_NAME = "proposals.jsonl"


class BranchReader(Protocol):
    """What the adapter reads: the tip (fetched) and a file at a commit ('' when absent)."""

    def fetch(self) -> str | None: ...

    def read(self, commit: str, path: str, /) -> str: ...


@runtime_checkable
class Lander(Protocol):
    """The branch store's writer: one commit of ``files`` on ``parent``; its sha.

    Raises ``JournalConflict`` when the branch moved since ``parent``."""

    def land(self, parent: str | None, files: Mapping[str, str], message: str) -> str: ...


class PlumbingLander:
    """:class:`Lander` over a ``GitBranch`` that has ``git`` plumbing and ``push(commit) ->
    bool`` (``False``: rejected as non-fast-forward) but no ``land`` of its own. The tree holds
    only ``files`` (the learning branch holds nothing else)."""

    def __init__(self, branch: Any) -> None:
        self.branch = branch

    def land(self, parent: str | None, files: Mapping[str, str], message: str) -> str:
        entries = ""
        for path, text in sorted(files.items()):
            blob = str(self.branch.git("hash-object", "-w", "--stdin", stdin=text)).strip()
            entries += f"100644 blob {blob}\t{path}\n"
        tree = str(self.branch.git("mktree", stdin=entries)).strip()
        args = ["commit-tree", tree, "-m", message, *(["-p", parent] if parent else [])]
        commit = str(self.branch.git(*args, *(["-S"] if self.branch.sign else []))).strip()
        if not self.branch.push(commit):
            raise JournalConflict(f"the learning branch moved since {parent or 'empty'}")
        return commit


class ProposalSink(Protocol):
    """Where publish puts accepted proposals (the branch store, or a test's list)."""

    def store(self, proposals: Sequence[Proposal], *, run_id: str, issue: int | None) -> str | None:
        """Store ``proposals`` for ``run_id``; an id of what was written (``None``: nothing)."""
        ...


class BranchProposals:
    """:class:`ProposalSink` on the branch store (module docstring).

    Args:
        reader: fetches and reads the learning branch.
        writer: lands commits on it.
        attempts: lands tried before giving up.
    """

    def __init__(self, reader: BranchReader, writer: Lander, *, attempts: int = 5) -> None:
        self.reader = reader
        self.writer = writer
        self.attempts = attempts

    def proposals(self) -> list[Proposal]:
        """Every proposal on the branch's tip (``[]`` when the branch does not exist).

        Raises:
            ChimeraError: git fails.
        """
        tip = self.reader.fetch()
        if tip is None:
            return []
        out: list[Proposal] = []
        for line in self.reader.read(tip, PROPOSALS_NAME).splitlines():
            try:
                out.append(Proposal.from_json(json.loads(line)))
            except ValueError:
                continue  # written only by publish; a bad line is skipped, never trusted
        return out

    def store(self, proposals: Sequence[Proposal], *, run_id: str, issue: int | None) -> str | None:
        """One commit appending ``proposals`` (forced provisional and untrusted) to
        ``proposals.jsonl``; its sha, or ``None`` when there is nothing to store.

        Raises:
            ChimeraError: git fails, or the branch kept moving for ``attempts`` tries.
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
        tip = self.reader.fetch()
        for _ in range(max(1, self.attempts)):
            before = self.reader.read(tip, PROPOSALS_NAME) if tip else ""
            if before and not before.endswith("\n"):
                before += "\n"
            try:
                return self.writer.land(tip, {PROPOSALS_NAME: before + lines}, message)
            except JournalConflict:
                tip = self.reader.fetch()
        raise ChimeraError(
            f"learning branch: it moved {self.attempts} times while storing (other runs keep "
            "landing first); the proposals were not stored"
        )


def writer_for(branch: Any) -> Lander:
    """``branch`` itself when it lands commits, else :class:`PlumbingLander` over it."""
    return branch if isinstance(branch, Lander) else PlumbingLander(branch)


__all__ = [
    "LEARNING_BRANCH",
    "PROPOSALS_NAME",
    "BranchProposals",
    "BranchReader",
    "Lander",
    "PlumbingLander",
    "ProposalSink",
    "writer_for",
]
