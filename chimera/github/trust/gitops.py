"""git for the Action's jobs: publish's commits as Chimera (no prompts, one-line errors), and
:func:`require_commit`, which the jobs without credentials use instead of fetching, and
:func:`commit_patch`, the change between two such commits (verify and refresh judge it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from chimera.errors import ChimeraError
from chimera.runner import stderr_line

__all__ = ["COMMIT_EMAIL", "COMMIT_NAME", "PublishGit", "commit_patch", "require_commit"]

COMMIT_NAME = "Chimera"
COMMIT_EMAIL = "chimera@users.noreply.github.com"


def require_commit(root: Path, sha: str, what: str = "commit") -> str:
    """``sha`` as the full SHA of a commit already in the checkout ``root``.

    Nothing is fetched: the agent, verify and refresh jobs run (or ran) model-written code in
    their checkout, so a fetch there would reach out with whatever that code left behind, and
    a silent fetch would hide a workflow that checked out too little. The shipped workflows
    check out with ``fetch-depth: 0``, which holds every commit these jobs name.

    Args:
        what: how the one-line error names the commit (``"the PR's head"``).

    Raises:
        ChimeraError: no commit is named, or it is not in the checkout (one line naming it
            and the workflow fix).
    """
    if not sha:
        raise ChimeraError(f"{what}: no commit is named")
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", f"{sha}^{{commit}}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise ChimeraError(
            f"{what} {sha[:12]} is not in the checkout; check out with fetch-depth: 0 "
            "(actions/checkout), Chimera fetches nothing here"
        )
    return proc.stdout.strip()


def commit_patch(root: Path, base: str, head: str) -> str:
    """The change from commit ``base`` to commit ``head`` as ``git diff --binary`` text.
    Both must be in the checkout (``fetch-depth: 0``): nothing is fetched.

    Raises:
        ChimeraError: either commit is not in the checkout (one line naming it), or git failed.
    """
    require_commit(root, base, "the base commit")
    require_commit(root, head, "the PR's head")
    proc = subprocess.run(
        ["git", "diff", "--binary", "--no-color", "--no-ext-diff", base, head, "--"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise ChimeraError(f"git diff {base[:12]}..{head[:12]} failed: {' '.join(tail)}")
    return proc.stdout.decode("utf-8", "surrogateescape")


class PublishGit:
    """git in publish's checkout (commits as Chimera; never prompts for credentials)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = dict(
            os.environ,
            GIT_AUTHOR_NAME=COMMIT_NAME,
            GIT_AUTHOR_EMAIL=COMMIT_EMAIL,
            GIT_COMMITTER_NAME=COMMIT_NAME,
            GIT_COMMITTER_EMAIL=COMMIT_EMAIL,
            GIT_TERMINAL_PROMPT="0",
        )

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["git", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            env=self.env,
            check=False,
        )
        if check and proc.returncode != 0:
            why = stderr_line(proc.stderr or proc.stdout, exit_code=proc.returncode)
            raise ChimeraError(f"git {args[0]} failed: {why}")
        return proc

    def has_commit(self, sha: str) -> bool:
        return self.run("cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0

    def ensure_commit(self, remote: str, sha: str) -> None:
        if self.has_commit(sha):
            return
        self.run("fetch", "--quiet", remote, sha, check=False)
        if not self.has_commit(sha):
            self.run("fetch", "--quiet", remote)
        if not self.has_commit(sha):
            raise ChimeraError(f"the base commit {sha[:12]} is not in {remote}")

    def remote_sha(self, remote: str, branch: str) -> str:
        out = self.run("ls-remote", remote, f"refs/heads/{branch}").stdout.strip()
        return out.split()[0] if out else ""

    def same_change(self, remote: str, branch: str, current: str, head: str) -> bool:
        """Whether ``current`` (the branch tip) holds exactly ``head``'s tree on the same
        parent: a re-run of the step has nothing new to push."""
        if not self.has_commit(current):
            self.run("fetch", "--quiet", remote, f"refs/heads/{branch}", check=False)
        if not self.has_commit(current):
            return False
        trees = [self.run("rev-parse", f"{sha}^{{tree}}").stdout.strip() for sha in (current, head)]
        parents = [self.run("rev-parse", f"{sha}^").stdout.strip() for sha in (current, head)]
        return trees[0] == trees[1] and parents[0] == parents[1]

    def on_top(self, remote: str, commit: str, parent: str, message: str) -> str:
        """A new commit with ``commit``'s tree and ``parent`` as its only parent (fetched
        from ``remote`` when missing), checked out in its place; returns its SHA, or
        ``parent`` itself when the trees are equal (an empty commit says nothing).

        Raises:
            ChimeraError: ``parent`` cannot be found, or git failed.
        """
        self.ensure_commit(remote, parent)
        tree = self.run("rev-parse", f"{commit}^{{tree}}").stdout.strip()
        if tree == self.run("rev-parse", f"{parent}^{{tree}}").stdout.strip():
            self.run("reset", "--quiet", "--soft", parent)
            return parent
        sha = self.run("commit-tree", tree, "-p", parent, "-m", message).stdout.strip()
        self.run("reset", "--quiet", "--soft", sha)
        return sha
