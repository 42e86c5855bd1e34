"""Learning proposals on the branch store: the adapter between publish and memory's git branch.

The Action's publish job keeps what it accepted from an agent job's ``learning.json``
(:func:`~chimera.evolution.action.publish_acceptance`) as :class:`~chimera.evolution.proposals.
Proposal` records — provisional and tainted — in ``proposals.jsonl`` on an orphan branch
(default ``chimera-learning``), one commit per run naming the run and the issue, so the next
runner and a person can read them.

The adapter needs two things of the branch store, as small protocols: a reader (``fetch()`` →
tip, ``read(commit, path)``, ``history(tip)``) and a writer whose ``land(parent, files,
message)`` commits ``files`` on ``parent`` and raises :class:`~chimera.errors.JournalConflict`
when the branch moved (then it re-reads and appends again). That is memory's
:class:`~chimera.memory.branch.BranchWriter`: ``GitBranch`` itself (a git push), or GitHub's
``createCommitOnBranch`` in the Action when publish holds an App token, which GitHub signs.

Any ``contents: write`` token can push to the branch, so :meth:`BranchProposals.proposals`
takes a :class:`~chimera.memory.trust.TrustPolicy` (in the Action, the same GitHub lookup as
memory's): only the lines a trusted commit *added* are read, so a forged commit can neither
add a proposal nor, by rewriting the file, take one back.

Nothing on the branch is ever retrieved into a prompt: ``chimera playbook fetch`` copies the
proposals into the local ledger (still pending, still tainted) and a person accepts one with
``chimera playbook accept``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from chimera.errors import ChimeraError, JournalConflict
from chimera.evolution.proposals import Proposal
from chimera.evolution.usage import UseRecord
from chimera.memory.trust import CommitInfo, TrustPolicy

LEARNING_BRANCH = "chimera-learning"
PROPOSALS_NAME = "proposals.jsonl"
USES_NAME = "uses.jsonl"
"""On the branch: one line per Action run — the skills and bullets its agent job *said* its
prompts held, with verify's verdict (:class:`~chimera.evolution.usage.UseRecord`, source
``action``): counts that may demote or retire, never promote."""


class BranchReader(Protocol):
    """What the adapter reads: the tip (fetched), a file at a commit ('' when absent), and the
    first-parent history to a tip, oldest first (as memory's ``GitBranch`` gives them)."""

    def fetch(self) -> str | None: ...

    def read(self, commit: str, path: str, /) -> str: ...

    def history(self, tip: str, /) -> list[CommitInfo]: ...


class Lander(Protocol):
    """The branch store's writer: one commit of ``files`` on ``parent``; its sha.

    Raises ``JournalConflict`` when the branch moved since ``parent``."""

    def land(self, parent: str | None, files: Mapping[str, str], message: str) -> str: ...


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

    def proposals(self, trust: TrustPolicy | None = None) -> list[Proposal]:
        """The proposals on the branch (``[]`` when it does not exist), each provisional and
        untrusted whatever its line claims.

        Args:
            trust: read only the lines commits it trusts added, in commit order (``None``:
                every line of the tip's file, for a local remote no one else can push to).

        Raises:
            ChimeraError: git fails.
        """
        tip = self.reader.fetch()
        if tip is None:
            return []
        if trust is None:
            lines = self.reader.read(tip, PROPOSALS_NAME).splitlines()
        else:
            lines = self._trusted_lines(tip, trust)
        out: list[Proposal] = []
        for line in lines:
            try:
                out.append(Proposal.from_json(json.loads(line)))
            except ValueError:
                continue  # written only by publish; a bad line is skipped, never trusted
        return out

    def uses(self, trust: TrustPolicy | None = None) -> list[UseRecord]:
        """The use records on the branch (``[]`` when it does not exist), forced to source
        ``action`` whatever a line claims; read like :meth:`proposals`.

        Raises:
            ChimeraError: git fails.
        """
        tip = self.reader.fetch()
        if tip is None:
            return []
        if trust is None:
            lines = self.reader.read(tip, USES_NAME).splitlines()
        else:
            lines = self._lines_added_by(tip, trust, USES_NAME)
        out: list[UseRecord] = []
        for line in lines:
            try:
                out.append(replace(UseRecord.from_json(json.loads(line)), source="action"))
            except (ValueError, KeyError, TypeError):
                continue  # written only by publish; a bad line is skipped, never trusted
        return out

    def store_uses(
        self, records: Sequence[UseRecord], *, run_id: str, issue: int | None
    ) -> str | None:
        """One commit appending ``records`` (forced to source ``action``) to ``uses.jsonl``;
        its sha, or ``None`` when there is nothing to store.

        Raises:
            ChimeraError: git fails, or the branch kept moving for ``attempts`` tries.
        """
        lines = [json.dumps(replace(r, source="action").to_json(), sort_keys=True) for r in records]
        return self._append(USES_NAME, lines, run_id=run_id, issue=issue, what="uses")

    def _trusted_lines(self, tip: str, trust: TrustPolicy) -> list[str]:
        return self._lines_added_by(tip, trust, PROPOSALS_NAME)

    def _lines_added_by(self, tip: str, trust: TrustPolicy, name: str) -> list[str]:
        """The lines of ``name`` that commits ``trust`` trusts added, in commit order."""
        kept: list[str] = []
        seen: set[str] = set()
        for commit in self.reader.history(tip):
            if not trust.trusted(commit):
                continue
            before = self.reader.read(commit.parent, name) if commit.parent else ""
            after = self.reader.read(commit.sha, name).splitlines()
            added = Counter(after)
            added.subtract(Counter(before.splitlines()))
            for line in after:
                if added[line] > 0 and line not in seen:
                    seen.add(line)
                    kept.append(line)
        return kept

    def store(self, proposals: Sequence[Proposal], *, run_id: str, issue: int | None) -> str | None:
        """One commit appending ``proposals`` (forced provisional and untrusted) to
        ``proposals.jsonl``; its sha, or ``None`` when there is nothing to store.

        Raises:
            ChimeraError: git fails, or the branch kept moving for ``attempts`` tries.
        """
        lines = [
            json.dumps(p.to_json() | {"state": "provisional", "trusted": False}, sort_keys=True)
            for p in proposals
        ]
        return self._append(PROPOSALS_NAME, lines, run_id=run_id, issue=issue, what="proposals")

    def _append(
        self, name: str, lines: Sequence[str], *, run_id: str, issue: int | None, what: str
    ) -> str | None:
        if not lines:
            return None
        text = "".join(line + "\n" for line in lines)
        where = f" (issue #{issue})" if issue else ""
        trailers = f"Chimera-Run: {run_id}" + (f"\nChimera-Issue: {issue}" if issue else "")
        message = f"chimera learning: {what} of run {run_id}{where}\n\n{trailers}\n"
        tip = self.reader.fetch()
        for _ in range(max(1, self.attempts)):
            before = self.reader.read(tip, name) if tip else ""
            if before and not before.endswith("\n"):
                before += "\n"
            try:
                return self.writer.land(tip, {name: before + text}, message)
            except JournalConflict:
                tip = self.reader.fetch()
        raise ChimeraError(
            f"learning branch: it moved {self.attempts} times while storing (other runs keep "
            f"landing first); the {what} were not stored"
        )


__all__ = [
    "LEARNING_BRANCH",
    "PROPOSALS_NAME",
    "USES_NAME",
    "BranchProposals",
    "BranchReader",
    "Lander",
    "ProposalSink",
]
