"""The tick's state on GitHub: an orphan branch of JSONL op journals, one commit per run.

Each tick adds one file, ``runs/<run id>.jsonl`` (the operations of :mod:`.state`), in one
commit whose parent is the branch tip it read, and lands it without force: if another tick
landed first, :class:`JournalConflict` is raised — the caller re-reads and plans again, so a
job is never claimed twice.

The branch plumbing, the writers and the trust policies are memory's branch store
(:mod:`chimera.memory.branch`, :mod:`chimera.memory.trust`); this module keeps the tick's
layout and its replay rules. Replay trusts a commit only through a :class:`TrustPolicy` (a
good signature by an allowed key, :class:`SignedBy`; or a lookup, :class:`VerifiedBy`, that
says GitHub signed it for Chimera's App). An untrusted commit contributes nothing (listed in
:attr:`Replay.untrusted`); from a trusted commit only the files it *added* are read, so a
later commit cannot rewrite history by editing an earlier run's file. The default policy
trusts nothing: an empty state, where every job starts its clock again (fail closed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from chimera.errors import JournalConflict, JournalError
from chimera.memory.branch import BranchWriter, GitBranch, Identity
from chimera.memory.trust import (
    AnyOf,
    CommitInfo,
    SignedBy,
    TrustNothing,
    TrustPolicy,
    VerifiedBy,
)
from chimera.scheduler.state import Op, ScheduleState, dump_ops, fold, parse_ops

__all__ = [
    "DEFAULT_BRANCH",
    "AnyOf",
    "CommitInfo",
    "GitJournal",
    "Replay",
    "SignedBy",
    "TrustNothing",
    "TrustPolicy",
    "VerifiedBy",
]

DEFAULT_BRANCH = "chimera/journal"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
_FILE = re.compile(r"^runs/[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.jsonl\Z")


@dataclass(frozen=True)
class Replay:
    """The journal as replayed: trusted operations in commit order, folded.

    Attributes:
        tip: the branch tip read (``None``: no journal yet); the parent of the next commit.
        untrusted: ``(sha, reason)`` of commits skipped.
        problems: lines of trusted files that are not operations, and files outside ``runs/``.
    """

    tip: str | None
    ops: tuple[Op, ...] = ()
    state: ScheduleState = field(default_factory=ScheduleState)
    trusted: tuple[str, ...] = ()
    untrusted: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()


class GitJournal:
    """The journal branch of the repository at ``repo``, through ``remote``.

    Args:
        repo: a git repository (a work tree or a bare one); only refs and objects change.
        remote: the remote the branch lives on (a name or a URL).
        branch: the orphan branch.
        identity: ``(name, email)`` the commits are made as.
        signing_key: sign commits with this SSH private key (``None``: unsigned).
        allowed_signers: git's ``gpg.ssh.allowedSignersFile`` for verifying SSH signatures.
        writer: how a commit lands (default: git push; the Action passes GitHub's
            ``createCommitOnBranch``, :class:`chimera.github.trust.branchcommit.ApiWriter`).
    """

    def __init__(
        self,
        repo: Path,
        *,
        remote: str = "origin",
        branch: str = DEFAULT_BRANCH,
        identity: tuple[str, str] = ("chimera[bot]", "chimera[bot]@users.noreply.github.com"),
        signing_key: Path | None = None,
        allowed_signers: Path | None = None,
        writer: BranchWriter | None = None,
    ) -> None:
        self.repo = repo
        self.remote = remote
        self.branch = branch
        self.identity = identity
        self.signing_key = signing_key
        self.allowed_signers = allowed_signers
        config = {"gpg.format": "ssh"}
        if allowed_signers is not None:
            config["gpg.ssh.allowedSignersFile"] = str(allowed_signers)
        if signing_key is not None:
            config["user.signingkey"] = str(signing_key)
        self.store = GitBranch(
            repo,
            remote,
            branch=branch,
            identity=Identity(*identity),
            sign=signing_key is not None,
            config=config,
        )
        self.writer: BranchWriter = writer or self.store

    def fetch(self) -> str | None:
        """Fetch the branch; returns its tip, or ``None`` when the remote has no journal yet.

        Raises:
            JournalError: git failed (the remote is unreachable, ...).
        """
        return self.store.fetch()

    def replay(self, trust: TrustPolicy | None = None, *, tip: str | None = None) -> Replay:
        """Replay the journal (call :meth:`fetch` first, or pass the ``tip`` it returned).

        Raises:
            JournalError: git failed.
        """
        policy = trust if trust is not None else TrustNothing()
        tip = tip if tip is not None else self.store.tip()
        if tip is None:
            return Replay(tip=None)
        ops: list[Op] = []
        trusted: list[str] = []
        untrusted: list[tuple[str, str]] = []
        problems: list[str] = []
        for info in self.store.history(tip):
            sha = info.sha
            if not policy.trusted(info):
                untrusted.append((sha, f"not trusted (signature {info.signature!r})"))
                continue
            trusted.append(sha)
            for path in self.store.added(sha):
                if not _FILE.match(path):
                    problems.append(f"{sha[:12]}: {path}: not a run journal (runs/<id>.jsonl)")
                    continue
                found, bad = parse_ops(self.store.read(sha, path), f"{sha[:12]}:{path}")
                ops.extend(found)
                problems.extend(bad)
        return Replay(tip, tuple(ops), fold(ops), tuple(trusted), tuple(untrusted), tuple(problems))

    def append(self, run_id: str, ops: Iterable[Op], *, parent: str | None) -> str:
        """Commit ``runs/<run_id>.jsonl`` holding ``ops`` on top of ``parent`` and land it.

        Args:
            run_id: names the run (letters, digits, ``.``, ``_``, ``-``).
            parent: the tip :meth:`fetch` returned (``None``: start the orphan branch).

        Returns:
            The new commit's sha.

        Raises:
            JournalConflict: the remote branch moved since ``parent`` (another tick won).
            JournalError: a bad run id, a run already journaled, or git failed.
        """
        if not _RUN_ID.match(run_id):
            raise JournalError(f"run id {run_id!r}: letters, digits, '.', '_' and '-' only")
        path = f"runs/{run_id}.jsonl"
        if parent is not None and self.store.has(parent, path):
            raise JournalError(f"the journal already holds {path}")
        try:
            return self.writer.land(
                parent, {path: dump_ops(ops)}, f"chimera: schedules tick {run_id}"
            )
        except JournalConflict as exc:
            raise JournalConflict(
                f"the journal branch {self.branch} moved since {parent or 'empty'}: "
                "another tick wrote first"
            ) from exc
