"""The branch store: op journals on an orphan git branch, one commit per run.

Memory (default branch ``chimera-memory``) and the scheduler's tick journal
(:mod:`chimera.scheduler.journal`) both keep their state here: JSONL op journals on an orphan
branch that holds nothing else — no workflow files, so a push starts nothing. Each run adds
**one commit** on top of the tip it read; the derived state (memory's SQLite cache, the
schedules' fold) is rebuilt by replaying the commits through a
:class:`~chimera.memory.trust.TrustPolicy`, never committed.

:class:`GitBranch` is the plumbing (``read-tree``/``update-index``/``write-tree``/
``commit-tree`` against a throw-away index), so no work tree is checked out and a project
checkout is untouched. A commit lands through a :class:`BranchWriter`: ``GitBranch`` itself
pushes with git (never forced); the Action uses GitHub's ``createCommitOnBranch``
(:mod:`chimera.github.trust.branchcommit`), which GitHub signs. Either raises
:class:`~chimera.errors.JournalConflict` when the branch moved since the parent was read; the
caller re-reads and tries again (:func:`publish` does for memory, so two runs finishing
together both land).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from chimera.errors import JournalConflict, JournalError
from chimera.localstate import make_dirs
from chimera.memory.items import PERSISTED_TIERS, JournalOp, Tier
from chimera.memory.trust import CommitInfo

DEFAULT_BRANCH = "chimera-memory"
JOURNALS = tuple(f"{t.value}.jsonl" for t in PERSISTED_TIERS)
_SEP = "\x00"
_END = "\x1e"


@dataclass(frozen=True)
class Identity:
    """Who commits: Chimera's App identity in the Action (``name[bot]``)."""

    name: str = "chimera[bot]"
    email: str = "chimera[bot]@users.noreply.github.com"


class BranchWriter(Protocol):
    """Lands one commit on the branch."""

    def land(self, parent: str | None, files: Mapping[str, str], message: str) -> str:
        """Commit ``files`` (path → full text; other files of ``parent`` kept) on top of
        ``parent`` (``None``: the orphan root) and move the branch to it.

        Returns:
            The new commit's sha (fetched into the local cache).

        Raises:
            JournalConflict: the branch moved since ``parent`` (re-read and try again).
            JournalError: anything else failed.
        """
        ...


class GitBranch:
    """One branch of ``remote``, through a local repository.

    Args:
        cache: a git repository (bare or a work tree; only refs and objects change), created
            bare when the folder is not one, e.g. ``.chimera/memory-branch.git``.
        remote: the remote's name, URL or path.
        branch: the branch name.
        identity: the committer and author.
        sign: sign commits (``commit-tree -S``; ``config``'s ``user.signingkey`` and
            ``gpg.format`` choose the key).
        config: ``git -c`` pairs for every command (signing and verification keys).
        env: extra environment for every git command (e.g. ``GIT_CONFIG_*`` credentials,
            which stay out of the process list and out of any config file).

    Raises:
        JournalError: git fails (the message names the command and the last line of stderr).
    """

    def __init__(
        self,
        cache: Path,
        remote: str,
        *,
        branch: str = DEFAULT_BRANCH,
        identity: Identity | None = None,
        sign: bool = False,
        config: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.cache = Path(cache)
        self.env = dict(env or {})
        self.remote = remote
        self.branch = branch
        self.identity = identity or Identity()
        self.sign = sign
        self.config = dict(config or {})
        self.local_ref = f"refs/chimera/tips/{branch}"
        if not ((self.cache / "HEAD").exists() or (self.cache / ".git").exists()):
            make_dirs(self.cache)
            self.git("init", "-q", "--bare")

    def git(
        self, *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None
    ) -> str:
        """Run git in the cache; its stdout.

        Raises:
            JournalError: git exits non-zero or cannot start.
        """
        flags = ["-c", "core.hooksPath=/dev/null"]
        for key, value in self.config.items():
            flags += ["-c", f"{key}={value}"]
        who = {
            "GIT_AUTHOR_NAME": self.identity.name,
            "GIT_AUTHOR_EMAIL": self.identity.email,
            "GIT_COMMITTER_NAME": self.identity.name,
            "GIT_COMMITTER_EMAIL": self.identity.email,
        }
        try:
            proc = subprocess.run(
                ["git", "-C", str(self.cache), *flags, *args],
                input=stdin,
                capture_output=True,
                text=True,
                env={**os.environ, **who, "GIT_TERMINAL_PROMPT": "0", **self.env, **(env or {})},
                timeout=120,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise JournalError(f"git {args[0]}: {exc}") from exc
        if proc.returncode != 0:
            tail = proc.stderr.strip().splitlines()
            raise JournalError(
                f"git {args[0]} {self.branch} failed (exit {proc.returncode}): "
                f"{tail[-1] if tail else ''}"
            )
        return proc.stdout

    # -- reading ----------------------------------------------------------------------------

    def remote_tip(self) -> str | None:
        """The branch's tip on the remote, without fetching (``None``: no such branch)."""
        out = self.git("ls-remote", "--heads", self.remote, f"refs/heads/{self.branch}")
        return out.split()[0] if out.strip() else None

    def fetch(self) -> str | None:
        """Fetch the branch into the cache; its tip, or ``None`` when the remote has none."""
        if self.remote_tip() is None:
            return None
        refspec = f"+refs/heads/{self.branch}:{self.local_ref}"
        self.git("fetch", "-q", "--no-tags", self.remote, refspec)
        return self.tip()

    def tip(self) -> str | None:
        """The tip last fetched or landed (``None``: none yet)."""
        try:
            return self.git("rev-parse", "--verify", "-q", f"{self.local_ref}^{{commit}}").strip()
        except JournalError:
            return None

    def history(self, tip: str) -> list[CommitInfo]:
        """The first-parent chain to ``tip``, oldest first, with each signature as git
        verifies it."""
        fields = ("%H", "%P", "%an", "%ae", "%ce", "%G?", "%GF", "%GS", "%B")
        fmt = "%x00".join(fields) + "%x1e"
        out = self.git("log", "--first-parent", "--reverse", f"--format={fmt}", tip)
        commits: list[CommitInfo] = []
        for record in out.split(_END):
            parts = record.lstrip("\n").split(_SEP)
            if len(parts) < len(fields):
                continue
            sha, parents, name, email, committer, status, signer, principal, message = parts
            commits.append(
                CommitInfo(
                    sha=sha,
                    author_name=name,
                    author_email=email,
                    committer_email=committer,
                    signature=status or "N",
                    signer=signer,
                    parent=(parents.split() or [""])[0],
                    principal=principal,
                    message=message.strip(),
                )
            )
        return commits

    def read(self, commit: str, path: str) -> str:
        """The file ``path`` at ``commit`` (``''`` when absent)."""
        try:
            return self.git("cat-file", "blob", f"{commit}:{path}")
        except JournalError:
            return ""

    def has(self, commit: str, path: str) -> bool:
        """Whether ``commit``'s tree holds ``path``."""
        return bool(self.git("ls-tree", "--name-only", commit, "--", path).strip())

    def added(self, sha: str) -> list[str]:
        """The paths commit ``sha`` added (against its first parent), sorted."""
        out = self.git(
            "diff-tree", "--root", "-r", "--no-commit-id", "--diff-filter=A", "--name-only",
            "-z", "--first-parent", "-m", sha,
        )  # fmt: skip
        return sorted({p for p in out.split("\0") if p})

    # -- writing ----------------------------------------------------------------------------

    def build(self, parent: str | None, files: Mapping[str, str], message: str) -> str:
        """A commit (not pushed) of ``parent``'s tree with ``files`` (path → text) written."""
        with tempfile.TemporaryDirectory(prefix="chimera-branch-") as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", *([parent] if parent else ["--empty"]), env=index)
            for path, text in sorted(files.items()):
                blob = self.git("hash-object", "-w", "--stdin", stdin=text).strip()
                entry = f"100644,{blob},{path}"
                self.git("update-index", "--add", "--cacheinfo", entry, env=index)
            tree = self.git("write-tree", env=index).strip()
        args = ["commit-tree", tree, "-m", message, *(["-p", parent] if parent else [])]
        return self.git(*args, *(["-S"] if self.sign else [])).strip()

    def push(self, commit: str, parent: str | None) -> None:
        """Push ``commit`` as the branch (never forced) and record it as the local tip.

        Raises:
            JournalConflict: the remote branch is no longer at ``parent``.
            JournalError: any other failure.
        """
        try:
            self.git("push", "-q", self.remote, f"{commit}:refs/heads/{self.branch}")
        except JournalError:
            if self.remote_tip() != parent:
                raise JournalConflict(
                    f"the branch {self.branch} moved since {parent or 'empty'}: "
                    "another run wrote first"
                ) from None
            raise
        self.git("update-ref", self.local_ref, commit)

    def land(self, parent: str | None, files: Mapping[str, str], message: str) -> str:
        """:class:`BranchWriter` by git push: :meth:`build`, then :meth:`push`."""
        commit = self.build(parent, files, message)
        self.push(commit, parent)
        return commit


def run_message(run_id: str, issue: int | None) -> str:
    """The commit message of one run's ops (the run and the issue, as trailers too)."""
    head = f"chimera memory: run {run_id}" + (f" (issue #{issue})" if issue else "")
    trailers = [f"Chimera-Run: {run_id}"] + ([f"Chimera-Issue: {issue}"] if issue else [])
    return head + "\n\n" + "\n".join(trailers) + "\n"


def journal_files(
    branch: GitBranch, parent: str | None, ops: Sequence[JournalOp]
) -> dict[str, str]:
    """The tier journals ``parent`` holds with ``ops`` appended (one JSON line each); only
    journals that change are returned."""
    new: dict[str, list[str]] = {}
    for op in ops:
        if op.tier is not Tier.WORKING:
            line = json.dumps(op.to_json(), ensure_ascii=False, sort_keys=True)
            new.setdefault(f"{op.tier.value}.jsonl", []).append(line + "\n")
    return {
        name: (branch.read(parent, name) if parent else "") + "".join(lines)
        for name, lines in new.items()
    }


def publish(
    branch: GitBranch,
    ops: Sequence[JournalOp],
    *,
    run_id: str,
    issue: int | None = None,
    known_tip: str | None = None,
    attempts: int = 5,
    writer: BranchWriter | None = None,
) -> str | None:
    """Commit memory ``ops`` as one commit on the branch, retrying when another run landed
    first.

    Args:
        branch: reads the journals (and, without ``writer``, pushes with git).
        known_tip: the tip this run replayed at its start (tried first); each conflict
            fetches the new tip and rebuilds the commit on it.
        writer: how the commit lands (default ``branch``; the Action passes the GitHub API's).

    Returns:
        The landed sha, or ``None`` when ``ops`` has nothing to persist (nothing committed).

    Raises:
        JournalError: git or the API fails, or another run kept landing first ``attempts``
            times (the ops stay in the run's journal).
    """
    persisted = [op for op in ops if op.tier is not Tier.WORKING]
    if not persisted:
        return None
    land = writer or branch
    tip = known_tip if known_tip is not None else branch.fetch()
    message = run_message(run_id, issue)
    for _ in range(max(1, attempts)):
        try:
            return land.land(tip, journal_files(branch, tip, persisted), message)
        except JournalConflict:
            tip = branch.fetch()
    raise JournalError(
        f"memory branch {branch.branch}: {attempts} tries lost to other runs landing first; "
        "the ops stay in the run's journal"
    )


__all__ = [
    "DEFAULT_BRANCH",
    "JOURNALS",
    "BranchWriter",
    "CommitInfo",
    "GitBranch",
    "Identity",
    "journal_files",
    "publish",
    "run_message",
]
