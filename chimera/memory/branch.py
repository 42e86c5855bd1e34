"""The branch store: memory that outlives a runner, on GitHub itself.

An orphan branch (default ``chimera-memory``) holds one append-only JSONL **op journal** per
tier (``episodic.jsonl``, ``semantic.jsonl``, ``persona.jsonl``) and nothing else — no workflow
files, so a push starts nothing. Each run that changed memory adds **one commit** naming the
run and the issue. The local SQLite store is a cache derived by replaying the journals
(:mod:`chimera.memory.replay`); it is never committed.

Commits are built with git plumbing (``hash-object``, ``mktree``, ``commit-tree``) in a bare
cache repository, so no work tree is checked out and the project's own checkout is untouched.
A push rejected as non-fast-forward (another run landed first) fetches the new tip, appends the
same ops to its journals and pushes again, so two runs finishing together both land.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from chimera.errors import ChimeraError
from chimera.memory.items import PERSISTED_TIERS, JournalOp, Tier

DEFAULT_BRANCH = "chimera-memory"
JOURNALS = tuple(f"{t.value}.jsonl" for t in PERSISTED_TIERS)
_TIP_REF = "refs/chimera-memory/tip"
_REJECTED = ("non-fast-forward", "fetch first", "[rejected]", "stale info", "failed to lock")


@dataclass(frozen=True)
class Identity:
    """Who commits: Chimera's App identity in the Action (``name[bot]``)."""

    name: str = "chimera[bot]"
    email: str = "chimera[bot]@users.noreply.github.com"


@dataclass(frozen=True)
class CommitInfo:
    """One commit of the branch as replay sees it.

    Attributes:
        sha, parent: the commit and its first parent ('' for the root).
        author, email: the author's name and e-mail (claims, not proof).
        signature: git's ``%G?`` (``G`` good and valid, ``N`` none, ``B`` bad, ...).
        signer: git's ``%GS`` (the signer, e.g. the principal from the allowed-signers file).
        message: the commit message.
    """

    sha: str
    parent: str
    author: str
    email: str
    signature: str
    signer: str
    message: str


class GitBranch:
    """Plumbing over a bare cache repository that tracks one branch of ``remote``.

    Args:
        cache: the bare repository folder (created on first use), e.g.
            ``.chimera/memory-branch.git``.
        remote: the remote's URL or path.
        branch: the branch name.
        identity: the committer and author.
        sign: sign commits (``commit-tree -S``; the cache's ``user.signingkey`` and
            ``gpg.format`` decide the key).
        config: extra ``git config`` pairs for the cache (signing and verification keys).

    Raises:
        ChimeraError: git fails (the message names the command and its stderr).
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
    ) -> None:
        self.cache = Path(cache)
        self.remote = remote
        self.branch = branch
        self.identity = identity or Identity()
        self.sign = sign
        if not (self.cache / "HEAD").exists():
            self.cache.mkdir(parents=True, exist_ok=True)
            self.git("init", "-q", "--bare")
        for key, value in (config or {}).items():
            self.git("config", key, value)

    def git(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": self.identity.name,
            "GIT_AUTHOR_EMAIL": self.identity.email,
            "GIT_COMMITTER_NAME": self.identity.name,
            "GIT_COMMITTER_EMAIL": self.identity.email,
            "GIT_TERMINAL_PROMPT": "0",
        }
        proc = subprocess.run(
            ["git", "--git-dir", str(self.cache), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if check and proc.returncode != 0:
            raise ChimeraError(f"git {args[0]} failed: {proc.stderr.strip()[-400:]}")
        if not check and proc.returncode != 0:
            raise _GitFailed(proc.stderr + proc.stdout)
        return proc.stdout

    # -- reading ----------------------------------------------------------------------------

    def fetch(self) -> str | None:
        """Fetch the branch; its tip sha, or ``None`` when the remote has no such branch."""
        try:
            self.git(
                "fetch", "-q", "--no-tags", self.remote, f"+refs/heads/{self.branch}:{_TIP_REF}",
                check=False,
            )  # fmt: skip
        except _GitFailed as exc:
            if "couldn't find remote ref" in exc.stderr or "no such ref" in exc.stderr.lower():
                return None
            raise ChimeraError(f"git fetch {self.branch} failed: {exc.stderr.strip()}") from exc
        return self.git("rev-parse", _TIP_REF).strip()

    def read(self, commit: str, name: str) -> str:
        """The file ``name`` at ``commit`` ('' when absent)."""
        try:
            return self.git("cat-file", "blob", f"{commit}:{name}", check=False)
        except _GitFailed:
            return ""

    def history(self, tip: str) -> list[CommitInfo]:
        """The first-parent chain to ``tip``, oldest first."""
        fmt = "%H%x00%P%x00%an%x00%ae%x00%G?%x00%GS%x00%B%x1e"
        out = self.git("log", "--first-parent", "--reverse", f"--format={fmt}", tip)
        commits: list[CommitInfo] = []
        for record in out.split("\x1e"):
            fields = record.strip("\n").split("\x00")
            if len(fields) < 7:
                continue
            parents = fields[1].split()
            commits.append(
                CommitInfo(
                    sha=fields[0],
                    parent=parents[0] if parents else "",
                    author=fields[2],
                    email=fields[3],
                    signature=fields[4],
                    signer=fields[5],
                    message=fields[6].strip(),
                )
            )
        return commits

    # -- writing ----------------------------------------------------------------------------

    def commit(self, parent: str | None, ops: Sequence[JournalOp], message: str) -> str:
        """A commit whose journals are ``parent``'s plus ``ops`` appended (one line each)."""
        new: dict[str, list[str]] = {name: [] for name in JOURNALS}
        for op in ops:
            if op.tier is Tier.WORKING:
                continue
            line = json.dumps(op.to_json(), ensure_ascii=False, sort_keys=True)
            new[f"{op.tier.value}.jsonl"].append(line + "\n")
        entries: list[str] = []
        for name in JOURNALS:
            text = (self.read(parent, name) if parent else "") + "".join(new[name])
            if not text:
                continue
            blob = self.git("hash-object", "-w", "--stdin", stdin=text).strip()
            entries.append(f"100644 blob {blob}\t{name}\n")
        tree = self.git("mktree", stdin="".join(entries)).strip()
        args = ["commit-tree", tree, "-m", message]
        if parent:
            args += ["-p", parent]
        if self.sign:
            args.append("-S")
        return self.git(*args).strip()

    def push(self, commit: str) -> bool:
        """Push ``commit`` as the branch; ``False`` when rejected as non-fast-forward.

        Raises:
            ChimeraError: any other failure.
        """
        try:
            self.git(
                "push", "-q", "--porcelain", self.remote, f"{commit}:refs/heads/{self.branch}",
                check=False,
            )  # fmt: skip
        except _GitFailed as exc:
            if any(marker in exc.stderr for marker in _REJECTED):
                return False
            raise ChimeraError(f"git push {self.branch} failed: {exc.stderr.strip()}") from exc
        return True


class _GitFailed(Exception):
    def __init__(self, stderr: str) -> None:
        super().__init__(stderr)
        self.stderr = stderr


def run_message(run_id: str, issue: int | None) -> str:
    """The commit message of one run's ops (the run and the issue, as trailers too)."""
    head = f"chimera memory: run {run_id}" + (f" (issue #{issue})" if issue else "")
    trailers = [f"Chimera-Run: {run_id}"] + ([f"Chimera-Issue: {issue}"] if issue else [])
    return head + "\n\n" + "\n".join(trailers) + "\n"


def publish(
    branch: GitBranch,
    ops: Sequence[JournalOp],
    *,
    run_id: str,
    issue: int | None = None,
    known_tip: str | None = None,
    attempts: int = 5,
) -> str | None:
    """Commit ``ops`` as one commit on the branch and push it, retrying on non-fast-forward.

    ``known_tip``: the tip this run replayed at its start (tried first, as a run holds it);
    each rejection fetches the new tip and rebuilds the commit on it. Returns the pushed sha,
    or ``None`` when ``ops`` is empty (nothing is committed).

    Raises:
        ChimeraError: git fails, or the push was still rejected after ``attempts`` tries.
    """
    persisted = [op for op in ops if op.tier is not Tier.WORKING]
    if not persisted:
        return None
    tip = known_tip if known_tip is not None else branch.fetch()
    message = run_message(run_id, issue)
    for _ in range(max(1, attempts)):
        commit = branch.commit(tip, persisted, message)
        if branch.push(commit):
            return commit
        tip = branch.fetch()
    raise ChimeraError(
        f"memory branch {branch.branch}: the push was rejected {attempts} times "
        "(other runs keep landing first); the ops stay in the run's journal"
    )


__all__ = [
    "DEFAULT_BRANCH",
    "JOURNALS",
    "CommitInfo",
    "GitBranch",
    "Identity",
    "publish",
    "run_message",
]
