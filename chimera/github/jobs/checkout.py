"""The agent job's git steps on the checkout: check out a commit it already holds, name the
basis of a re-run. Nothing is ever fetched: the job runs model code, so what it works on is
what the workflow checked out (``fetch-depth: 0``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from chimera.errors import ChimeraError
from chimera.github.trust.gitops import require_commit
from chimera.runner import stderr_line

__all__ = ["basis_commit", "checkout_commit", "git"]


def git(root: Path, *args: str) -> str:
    """``git args`` in ``root``; its stripped standard output.

    Raises:
        ChimeraError: git exits non-zero (one line: the command and git's message).
    """
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ChimeraError(
            f"git {args[0]} failed: {stderr_line(proc.stderr, exit_code=proc.returncode)}"
        )
    return proc.stdout.strip()


def checkout_commit(root: Path, rev: str, what: str) -> str:
    """Check out commit ``rev`` detached; returns its SHA. It must be in the checkout already
    (the workflow's ``fetch-depth: 0``): nothing is fetched into a job that runs model code.

    Raises:
        ChimeraError: ``rev`` is not in the checkout (one line: :func:`require_commit`).
    """
    sha = require_commit(root, rev, what)
    if git(root, "rev-parse", "HEAD") != sha:
        git(root, "checkout", "--quiet", "--force", "--detach", sha)
    return sha


def basis_commit(root: Path, commit: str) -> str:
    """``commit`` as a full SHA present in the checkout (never fetched).

    Raises:
        ChimeraError: no commit is named, or it is not in the checkout.
    """
    if not commit:
        raise ChimeraError("a re-run needs decide's base commit (the PR marker names none)")
    return require_commit(root, commit, "the re-run's base commit")
