"""The tick's state on GitHub: an orphan branch of JSONL op journals, one commit per run.

Each tick adds one file, ``runs/<run id>.jsonl`` (the operations of :mod:`.state`), in one
commit whose parent is the branch tip it read, and pushes it without force: if another tick
pushed first, git refuses the push (not a fast-forward) and :class:`JournalConflict` is raised
— the caller re-reads and plans again, so a job is never claimed twice.

Replay trusts a commit only through a :class:`TrustPolicy`: a good signature by an allowed
key (:class:`SignedBy`, git's own ``%G?`` verification), or a lookup that says the commit was
made by Chimera's App identity (:class:`VerifiedBy`; on GitHub, the API's ``verification`` of
a commit the App created). Anyone with push access can write any author name, so names and
e-mails prove nothing. An untrusted commit contributes nothing (listed in
:attr:`Replay.untrusted`); from a trusted commit only the files it *added* are read, so a
later commit cannot rewrite history by editing an earlier run's file. The default policy
trusts nothing: an empty state, where every job starts its clock again (fail closed).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from chimera.errors import JournalConflict, JournalError
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
_LOCAL_REF = "refs/chimera/journal"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_FILE = re.compile(r"^runs/[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.jsonl$")
_SEP = "\x1f"


@dataclass(frozen=True)
class CommitInfo:
    """One journal commit as git reports it.

    Attributes:
        signature: git's ``%G?``: ``G`` good and valid, ``N`` none, others bad or unknown.
        signer: the signing key's fingerprint (``%GF``), ``""`` when unsigned.
    """

    sha: str
    author_name: str
    author_email: str
    committer_email: str
    signature: str
    signer: str


class TrustPolicy(Protocol):
    """Whether a journal commit's operations may be replayed."""

    def trusted(self, commit: CommitInfo) -> bool: ...


class TrustNothing:
    """The default: no commit is trusted (replay yields an empty state)."""

    def trusted(self, commit: CommitInfo) -> bool:
        return False


@dataclass(frozen=True)
class SignedBy:
    """Trusts a good signature (``%G?`` is ``G``) by one of ``fingerprints`` (``None``: any key
    git itself accepts — its keyring, or the allowed-signers file for SSH signatures)."""

    fingerprints: frozenset[str] | None = None

    def trusted(self, commit: CommitInfo) -> bool:
        if commit.signature != "G":
            return False
        return self.fingerprints is None or commit.signer in self.fingerprints


@dataclass(frozen=True)
class VerifiedBy:
    """Trusts what ``lookup(sha)`` says (the GitHub adapter asks the API whether the App made
    the commit and GitHub verified it)."""

    lookup: Callable[[str], bool]

    def trusted(self, commit: CommitInfo) -> bool:
        return bool(self.lookup(commit.sha))


@dataclass(frozen=True)
class AnyOf:
    """Trusts a commit any of ``policies`` trusts."""

    policies: Sequence[TrustPolicy]

    def trusted(self, commit: CommitInfo) -> bool:
        return any(p.trusted(commit) for p in self.policies)


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
    ) -> None:
        self.repo = repo
        self.remote = remote
        self.branch = branch
        self.identity = identity
        self.signing_key = signing_key
        self.allowed_signers = allowed_signers

    # -- git --------------------------------------------------------------------------------

    def _git(
        self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> bytes:
        config = ["-c", "core.hooksPath=/dev/null", "-c", "gpg.format=ssh"]
        if self.allowed_signers is not None:
            config += ["-c", f"gpg.ssh.allowedSignersFile={self.allowed_signers}"]
        if self.signing_key is not None:
            config += ["-c", f"user.signingkey={self.signing_key}"]
        full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
        try:
            done = subprocess.run(
                ["git", *config, *args],
                cwd=self.repo,
                input=stdin,
                capture_output=True,
                env=full_env,
                timeout=120,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise JournalError(f"git {args[0]}: {exc}") from exc
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise JournalError(
                f"git {args[0]} failed (exit {done.returncode}): {tail[-1] if tail else ''}"
            )
        return done.stdout

    def fetch(self) -> str | None:
        """Fetch the branch; returns its tip, or ``None`` when the remote has no journal yet.

        Raises:
            JournalError: git failed (the remote is unreachable, ...).
        """
        heads = self._git("ls-remote", "--heads", self.remote, f"refs/heads/{self.branch}")
        if not heads.strip():
            return None
        self._git(
            "fetch", "--no-tags", "--quiet", self.remote, f"+refs/heads/{self.branch}:{_LOCAL_REF}"
        )
        return self._git("rev-parse", "--verify", f"{_LOCAL_REF}^{{commit}}").decode().strip()

    # -- reading ----------------------------------------------------------------------------

    def _commit(self, sha: str) -> CommitInfo:
        fmt = _SEP.join(("%an", "%ae", "%ce", "%G?", "%GF"))
        out = self._git("show", "-s", f"--format={fmt}", sha).decode("utf-8", "replace")
        name, email, committer, status, signer = (out.rstrip("\n").split(_SEP) + [""] * 5)[:5]
        return CommitInfo(sha, name, email, committer, status or "N", signer)

    def replay(self, trust: TrustPolicy | None = None, *, tip: str | None = None) -> Replay:
        """Replay the journal (call :meth:`fetch` first, or pass the ``tip`` it returned).

        Raises:
            JournalError: git failed.
        """
        policy = trust if trust is not None else TrustNothing()
        if tip is None:
            try:
                tip = self._git("rev-parse", "--verify", "-q", _LOCAL_REF).decode().strip()
            except JournalError:
                return Replay(tip=None)
        shas = self._git("rev-list", "--reverse", "--first-parent", tip).decode().split()
        ops: list[Op] = []
        trusted: list[str] = []
        untrusted: list[tuple[str, str]] = []
        problems: list[str] = []
        for sha in shas:
            info = self._commit(sha)
            if not policy.trusted(info):
                untrusted.append((sha, f"not trusted (signature {info.signature!r})"))
                continue
            trusted.append(sha)
            for path in self._added(sha):
                if not _FILE.match(path):
                    problems.append(f"{sha[:12]}: {path}: not a run journal (runs/<id>.jsonl)")
                    continue
                text = self._git("show", f"{sha}:{path}").decode("utf-8", "replace")
                found, bad = parse_ops(text, f"{sha[:12]}:{path}")
                ops.extend(found)
                problems.extend(bad)
        return Replay(tip, tuple(ops), fold(ops), tuple(trusted), tuple(untrusted), tuple(problems))

    def _added(self, sha: str) -> list[str]:
        out = self._git(
            "diff-tree",
            "--root",
            "-r",
            "--no-commit-id",
            "--diff-filter=A",
            "--name-only",
            "-z",
            "--first-parent",
            "-m",
            sha,
        )
        return sorted({p for p in out.decode("utf-8", "replace").split("\0") if p})

    # -- writing ----------------------------------------------------------------------------

    def append(self, run_id: str, ops: Iterable[Op], *, parent: str | None) -> str:
        """Commit ``runs/<run_id>.jsonl`` holding ``ops`` on top of ``parent`` and push it.

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
        blob = self._git("hash-object", "-w", "--stdin", stdin=dump_ops(ops).encode()).decode()
        with tempfile.TemporaryDirectory(prefix="chimera-journal-") as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            if parent is not None:
                self._git("read-tree", parent, env=index)
                listed = self._git("ls-tree", "--name-only", parent, path).strip()
                if listed:
                    raise JournalError(f"the journal already holds {path}")
            else:
                self._git("read-tree", "--empty", env=index)
            self._git(
                "update-index", "--add", "--cacheinfo", f"100644,{blob.strip()},{path}", env=index
            )
            tree = self._git("write-tree", env=index).decode().strip()
        name, email = self.identity
        who = {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
        }
        args = ["commit-tree", tree, "-m", f"chimera: schedules tick {run_id}"]
        if parent is not None:
            args += ["-p", parent]
        if self.signing_key is not None:
            args.append("-S")
        sha = self._git(*args, env=who).decode().strip()
        try:
            self._git("push", "--quiet", self.remote, f"{sha}:refs/heads/{self.branch}")
        except JournalError as exc:
            heads = self._git("ls-remote", "--heads", self.remote, f"refs/heads/{self.branch}")
            now = heads.decode().split()[0] if heads.strip() else None
            if now != parent:
                raise JournalConflict(
                    f"the journal branch {self.branch} moved since {parent or 'empty'}: "
                    "another tick wrote first"
                ) from exc
            raise
        self._git("update-ref", _LOCAL_REF, sha)
        return sha
