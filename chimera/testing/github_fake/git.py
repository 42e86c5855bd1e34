"""Git over HTTP for the fake's repositories, and helpers that build a remote for a test.

:class:`GitBackend` serves ``<web_url>/<owner>/<name>.git`` with ``git http-backend`` (the
smart HTTP protocol), so a test can clone, fetch and push the way a workflow does, with a
token as the Basic-auth password (``fake.clone_url(full_name, token)``). A push needs a token
with write access (``contents: write`` when the token declares permissions); each updated
branch is recorded as a ``push`` event, and an open PR whose head moved as ``pull_request``
``synchronize``, both attributed to the token's identity.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

from chimera.testing.github_fake.routing import FakeRequest, FakeResponse, HttpError, Resource
from chimera.testing.github_fake.state import FakeRepo

_ZERO = "0" * 40
# <owner>/<name>, optionally .git, then one of the smart-HTTP endpoints, optionally under /web.
_GIT_PATH = re.compile(
    r"(?:/web)?/(?P<repo>[^/]+/[^/]+?)(?:\.git)?/(?P<rest>info/refs|git-upload-pack|git-receive-pack)"
)


def git_request(path: str) -> tuple[str, str] | None:
    """``(owner/name, endpoint)`` when ``path`` is a smart-HTTP request (``info/refs``,
    ``git-upload-pack``, ``git-receive-pack``), else ``None`` (a REST path)."""
    match = _GIT_PATH.fullmatch(path)
    return (match["repo"], match["rest"]) if match else None


class GitBackend(Resource):
    """Answers the smart-HTTP requests (:func:`git_request`); not routed like the REST
    handlers."""

    def serve(self, req: FakeRequest, body: bytes) -> FakeResponse:
        """Answer one git request; records the call and, for a push, its events."""
        try:
            resp = self._serve(req, body)
        except HttpError as exc:
            resp = FakeResponse(exc.status, exc.payload, _challenge(exc.status))
        self.fake.record(req, resp.status, body=None)
        return resp

    def _serve(self, req: FakeRequest, body: bytes) -> FakeResponse:
        target = git_request(req.path)
        if target is None:
            raise HttpError(404, "Repository not found.")
        head, rest = target
        with self.fake.lock:
            repo = self.fake.repos.get(head)
        if repo is None or repo.remote is None:
            raise HttpError(404, "Repository not found.")
        service = req.query.get("service") or rest.rsplit("/", 1)[-1]
        pushing = service == "git-receive-pack"
        if repo.private and req.identity is None:
            raise HttpError(401, "Authentication required")
        if pushing:
            with self.fake.lock:
                self.need(repo, req, "write", "contents")
        before = repo.branch_heads() if pushing and req.method == "POST" else None
        resp = self._backend(repo.remote, rest, req, body)
        if before is not None:
            self._pushed(repo, req, before, repo.branch_heads())
        return resp

    def _backend(self, remote: Path, rest: str, req: FakeRequest, body: bytes) -> FakeResponse:
        query = "&".join(f"{k}={v}" for k, v in req.query.items())
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(remote.parent),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": f"/{remote.name}/{rest}",
            "REQUEST_METHOD": req.method,
            "QUERY_STRING": query,
            "CONTENT_TYPE": req.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            # http-backend enables receive-pack only for an authenticated user.
            "REMOTE_USER": req.login or "",
            "HTTP_CONTENT_ENCODING": req.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": req.headers.get("Git-Protocol", ""),
        }
        proc = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
        )
        header_blob, _, payload = proc.stdout.partition(b"\r\n\r\n")
        if not _:
            header_blob, _, payload = proc.stdout.partition(b"\n\n")
        headers = dict(
            line.split(": ", 1) for line in header_blob.decode().splitlines() if ": " in line
        )
        status = int(headers.pop("Status", "200").split()[0])
        content_type = headers.pop("Content-Type", "application/octet-stream")
        return FakeResponse(status, headers=headers, raw=payload, content_type=content_type)

    def _pushed(
        self, repo: FakeRepo, req: FakeRequest, before: Mapping[str, str], after: Mapping[str, str]
    ) -> None:
        with self.fake.lock:
            for ref in sorted(set(before) | set(after)):
                sha = after.get(ref, _ZERO)
                if before.get(ref, _ZERO) == sha:
                    continue
                before_sha = before.get(ref, _ZERO)
                self.fake.emit(repo, req, "push", None, ref=ref, sha=sha, before=before_sha)
                branch = ref.removeprefix("refs/heads/")
                for pull in repo.own_open_pulls():
                    if pull["head"] == branch and sha != _ZERO:
                        self.fake.emit(
                            repo, req, "pull_request", "synchronize",
                            number=pull["number"], ref=branch, sha=sha,
                        )  # fmt: skip


def _challenge(status: int) -> dict[str, str]:
    # git sends credentials only after a 401 that names the Basic scheme.
    return {"WWW-Authenticate": 'Basic realm="GitHub"'} if status == 401 else {}


def make_bare_remote(
    folder: Path, files: Mapping[str, str] | None = None, *, branch: str = "main"
) -> tuple[Path, Path]:
    """A bare git repository (the remote of the fake) and a clone of it with one commit.

    Returns ``(remote, clone)``: ``folder/remote.git`` and ``folder/work``; ``files`` (path →
    text, default a README) form the first commit, pushed to ``branch``.
    """
    remote = folder / "remote.git"
    work = folder / "work"
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", branch, str(remote)], check=True, capture_output=True
    )
    subprocess.run(["git", "clone", "-q", str(remote), str(work)], check=True, capture_output=True)
    push_branch(work, branch, files or {"README.md": "# demo\n"}, message="base")
    return remote, work


def push_branch(
    work: Path,
    branch: str,
    files: Mapping[str, str],
    *,
    start: str | None = None,
    message: str = "change",
) -> None:
    """Check out ``branch`` in the clone ``work`` (from ``start``, default the current
    commit), commit ``files`` (path → text) on it and push it to ``origin``."""
    ident = ["-c", "user.name=Test", "-c", "user.email=test@example.invalid"]
    checkout = ["git", "checkout", "-q", "-B", branch, *([start] if start else [])]
    subprocess.run(checkout, cwd=work, check=True, capture_output=True)
    for rel, text in files.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=work, check=True)
    subprocess.run(["git", *ident, "commit", "-q", "-m", message], cwd=work, check=True)
    subprocess.run(
        ["git", "push", "-q", "origin", branch], cwd=work, check=True, capture_output=True
    )
