"""Commits and file contents, read from the repository's remote
(``GET /repos/{o}/{r}/commits/{ref}``, the list ``GET /repos/{o}/{r}/commits?sha=REF``, newest
first, paginated, and ``GET /repos/{o}/{r}/contents/{path}?ref=``)."""

from __future__ import annotations

import base64
import subprocess
from typing import Any

from chimera.testing.github_fake.gitdata import verification
from chimera.testing.github_fake.routing import (
    FakeRequest,
    FakeResponse,
    HttpError,
    Resource,
    route,
)
from chimera.testing.github_fake.state import FakeRepo, node_id

# One field a line: the commit, its tree, parents, author and committer, then the message.
_FORMAT = "%H%n%T%n%P%n%an%n%ae%n%aI%n%cn%n%ce%n%cI%n%B"


class Commits(Resource):
    @route("GET", "{repo}/commits/{ref:path}")
    def get_commit(self, req: FakeRequest) -> FakeResponse:
        """A ``commit`` of a SHA or a branch; 404 without a remote, 422 for an unknown ref."""
        repo = self.repo(req)
        if repo.remote is None:
            raise HttpError(404, "Not Found")
        fields = _show(repo, req.params["ref"])
        if fields is None:
            raise HttpError(422, f"No commit found for SHA: {req.params['ref']}")
        return FakeResponse(200, self._json(repo, fields))

    @route("GET", "{repo}/contents/{path:path}")
    def get_contents(self, req: FakeRequest) -> FakeResponse:
        """A file's content (base64) at ``?ref=`` (default: the default branch), or a folder's
        listing (its entries without content, as GitHub lists them); 404 for a missing path
        or ref."""
        repo = self.repo(req)
        if repo.remote is None:
            raise HttpError(404, "Not Found")
        ref = req.query.get("ref") or repo.default_branch
        rev = repo.head_sha(ref) or ref
        path = req.params["path"].strip("/")
        git = ["git", "--git-dir", str(repo.remote)]
        kind = subprocess.run(
            [*git, "cat-file", "-t", f"{rev}:{path}"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if kind == "tree":
            return FakeResponse(200, self._listing(repo, rev, path, ref))
        if kind != "blob":
            raise HttpError(404, "Not Found")
        blob = subprocess.run([*git, "show", f"{rev}:{path}"], capture_output=True, check=True)
        sha = subprocess.run(
            [*git, "rev-parse", f"{rev}:{path}"], capture_output=True, text=True, check=True
        ).stdout.strip()
        entry = self._entry(repo, "file", path, sha, len(blob.stdout), ref)
        return FakeResponse(
            200, entry | {"encoding": "base64", "content": base64.encodebytes(blob.stdout).decode()}
        )

    def _listing(self, repo: FakeRepo, rev: str, path: str, ref: str) -> list[dict[str, Any]]:
        proc = subprocess.run(
            ["git", "--git-dir", str(repo.remote), "ls-tree", "-l", "-z", f"{rev}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        )
        kinds = {"blob": "file", "tree": "dir", "commit": "submodule"}
        out = []
        for record in filter(None, proc.stdout.split("\0")):
            meta, _, name = record.partition("\t")
            mode, kind, sha, size = meta.split()
            shown = "symlink" if mode == "120000" else kinds.get(kind, "file")
            full = f"{path}/{name}" if path else name
            out.append(self._entry(repo, shown, full, sha, int(size) if size != "-" else 0, ref))
        return out

    def _entry(
        self, repo: FakeRepo, kind: str, path: str, sha: str, size: int, ref: str
    ) -> dict[str, Any]:
        """One ``content-*`` object's common fields (GitHub's ``_links`` and URLs)."""
        api = f"{self.fake.api_url}/repos/{repo.full_name}"
        html = f"{self.fake.web_url}/{repo.full_name}/blob/{ref}/{path}"
        git_url = f"{api}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
        url = f"{api}/contents/{path}?ref={ref}"
        raw = f"{self.fake.web_url}/{repo.full_name}/raw/{ref}/{path}"
        return {
            "type": kind,
            "size": size,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "url": url,
            "git_url": git_url,
            "html_url": html,
            "download_url": raw if kind == "file" else None,
            "_links": {"self": url, "git": git_url, "html": html},
        }

    @route("GET", "{repo}/commits")
    def list_commits(self, req: FakeRequest) -> FakeResponse:
        """The commits reachable from ``sha`` (a branch or a SHA; default the default branch),
        newest first; 404 without a remote or for an unknown ref (as GitHub answers)."""
        repo = self.repo(req)
        if repo.remote is None:
            raise HttpError(404, "Not Found")
        ref = req.query.get("sha") or repo.default_branch
        proc = subprocess.run(
            ["git", "--git-dir", str(repo.remote), "rev-list", repo.head_sha(ref) or ref, "--"],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise HttpError(404, "Not Found")
        shas = proc.stdout.split()
        per_page = int(req.query.get("per_page", "30"))
        page = int(req.query.get("page", "1"))
        # Only the requested page is rendered (each commit is one git call).
        shown = set(shas[(page - 1) * per_page : page * per_page])
        items = [self._json(repo, _show(repo, s) or []) if s in shown else {} for s in shas]
        return self.paginate(req, items)

    def _json(self, repo: FakeRepo, fields: list[str]) -> dict[str, Any]:
        sha, tree, parents, an, ae, ad, cn, ce, cd, *message = fields
        api = f"{self.fake.api_url}/repos/{repo.full_name}"
        web = f"{self.fake.web_url}/{repo.full_name}"
        return {
            "sha": sha,
            "node_id": node_id("C", int(sha[:8], 16)),
            "url": f"{api}/commits/{sha}",
            "html_url": f"{web}/commit/{sha}",
            "comments_url": f"{api}/commits/{sha}/comments",
            "commit": {
                "url": f"{api}/git/commits/{sha}",
                "author": {"name": an, "email": ae, "date": ad},
                "committer": {"name": cn, "email": ce, "date": cd},
                "message": "\n".join(message).strip(),
                "comment_count": 0,
                "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"},
                "verification": verification(repo, sha, cd),
            },
            # A git identity maps to no account here (GitHub answers null then too), except
            # the token's own account for a commit GitHub made for it through the API.
            "author": self.json.user(signer)
            if (signer := repo.verified_commits.get(sha))
            else None,
            "committer": None,
            "parents": [
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{web}/commit/{p}"}
                for p in parents.split()
            ],
            "files": [],
        }


def _show(repo: FakeRepo, ref: str) -> list[str] | None:
    assert repo.remote is not None
    sha = repo.head_sha(ref) or ref
    git = ["git", "--git-dir", str(repo.remote), "show", "-s", f"--format={_FORMAT}"]
    proc = subprocess.run(
        [*git, f"{sha}^{{commit}}", "--"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.splitlines() if proc.returncode == 0 else None
