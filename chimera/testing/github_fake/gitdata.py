"""``createCommitOnBranch``: a commit GitHub makes (and signs) for the token, on a branch.

The commit is written into the repository's remote with git plumbing, as the token's
identity (an App's ``<slug>[bot]`` with its ``<id>+<slug>[bot]@users.noreply.github.com``
address, the committer ``GitHub``), and the branch moves only if it still points at
``expectedHeadOid`` (``git update-ref`` compares and swaps, so two writers racing cannot both
win). GitHub signs such commits with its own key; the fake records the signer in
:attr:`FakeRepo.verified_commits` instead of signing, and ``GET .../commits/{sha}`` reports
``verification: {verified: true, reason: "valid"}`` for it — and ``unsigned`` for a commit
that arrived by ``git push``.
"""

from __future__ import annotations

import base64
import binascii
import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.testing.github_fake.routing import FakeRequest, FakeResponse
from chimera.testing.github_fake.state import ROLE_RANK, FakeRepo

if TYPE_CHECKING:
    from chimera.testing.github_fake.graphql import GraphQL

__all__ = ["create_commit_on_branch", "verification"]

_SIGNATURE = "-----BEGIN PGP SIGNATURE-----\n(GitHub web-flow)\n-----END PGP SIGNATURE-----"


def _errors(message: str, kind: str | None = None) -> FakeResponse:
    error = {"message": message} | ({"type": kind} if kind else {})
    return FakeResponse(200, {"data": None, "errors": [error]})


def _git(
    remote: Path, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
) -> str:
    proc = subprocess.run(
        ["git", "--git-dir", str(remote), *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode("utf-8", "replace").strip())
    return proc.stdout.decode().strip()


def create_commit_on_branch(
    resource: GraphQL, req: FakeRequest, inp: Mapping[str, Any]
) -> FakeResponse:
    """Answer ``createCommitOnBranch`` (GitHub's error texts for a stale head, a missing
    branch, a missing repository and a token that may not write)."""
    target = inp.get("branch") or {}
    full_name = str(target.get("repositoryNameWithOwner", ""))
    branch = str(target.get("branchName", ""))
    repo = resource.fake.repos.get(full_name)
    if repo is None or repo.remote is None:
        missing = f"Could not resolve to a Repository with the name '{full_name}'."
        return _errors(missing, "NOT_FOUND")
    who = req.identity
    assert who is not None
    if ROLE_RANK[resource.role(repo, who.login)] < ROLE_RANK["write"] or not who.allows("contents"):
        return _errors("Resource not accessible by integration", "FORBIDDEN")
    if who.repo is not None and who.repo != full_name:
        return _errors("Resource not accessible by integration", "FORBIDDEN")
    expected = str(inp.get("expectedHeadOid", ""))
    head = repo.head_sha(branch)
    if head is None:
        return _errors(f'A ref named "refs/heads/{branch}" does not exist.', "NOT_FOUND")
    if head != expected:
        return _errors(
            f'Expected branch to point to "{expected}" but it did not. Pull and try again.',
            "STALE_DATA",
        )
    try:
        sha = _commit(resource, repo, who.login, head, inp)
    except (ValueError, binascii.Error) as exc:
        return _errors(f"Invalid input: {exc}", "UNPROCESSABLE")
    try:
        _git(repo.remote, "update-ref", f"refs/heads/{branch}", sha, head)
    except RuntimeError:
        return _errors(
            f'Expected branch to point to "{expected}" but it did not. Pull and try again.',
            "STALE_DATA",
        )
    with resource.fake.lock:
        repo.verified_commits[sha] = who.login
    resource.fake.emit(repo, req, "push", None, ref=f"refs/heads/{branch}", sha=sha)
    url = f"{resource.fake.web_url}/{full_name}/commit/{sha}"
    out = {"clientMutationId": None, "commit": {"oid": sha, "url": url}}
    return FakeResponse(200, {"data": {"createCommitOnBranch": out}})


def _commit(
    resource: GraphQL, repo: FakeRepo, login: str, head: str, inp: Mapping[str, Any]
) -> str:
    assert repo.remote is not None
    changes = inp.get("fileChanges") or {}
    message = inp.get("message") or {}
    headline = str(message.get("headline", "")).strip()
    if not headline:
        raise ValueError("message.headline is required")
    user = resource.json.user(login)
    email = f"{user['id']}+{login}@users.noreply.github.com"
    with tempfile.TemporaryDirectory(prefix="fake-gitdata-") as tmp:
        index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(repo.remote, "read-tree", head, env=index)
        for gone in changes.get("deletions") or []:
            _git(repo.remote, "update-index", "--force-remove", str(gone["path"]), env=index)
        for added in changes.get("additions") or []:
            blob = _git(
                repo.remote, "hash-object", "-w", "--stdin",
                stdin=base64.b64decode(str(added["contents"]), validate=True),
            )  # fmt: skip
            entry = f"100644,{blob},{added['path']}"
            _git(repo.remote, "update-index", "--add", "--cacheinfo", entry, env=index)
        tree = _git(repo.remote, "write-tree", env=index)
    text = headline + (f"\n\n{message['body']}" if message.get("body") else "")
    who = {
        "GIT_AUTHOR_NAME": login,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": "GitHub",
        "GIT_COMMITTER_EMAIL": "noreply@github.com",
    }
    return _git(repo.remote, "commit-tree", tree, "-p", head, "-m", text, env=who)


def verification(repo: FakeRepo, sha: str, when: str) -> dict[str, Any]:
    """The REST ``commit.verification`` of ``sha`` (committed at ``when``): valid for a commit
    GitHub verified (one it made through the API, signed with its own key), unsigned for
    anything pushed with git."""
    if sha in repo.verified_commits:
        return {
            "verified": True,
            "reason": "valid",
            "signature": _SIGNATURE,
            "payload": f"commit {sha}",
            "verified_at": when,
        }
    return {
        "verified": False,
        "reason": "unsigned",
        "payload": None,
        "signature": None,
        "verified_at": None,
    }
