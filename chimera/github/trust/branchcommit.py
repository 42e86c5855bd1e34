"""Branch-store commits GitHub signs, and the trust rule that recognises them.

:class:`ApiWriter` is a :class:`~chimera.memory.branch.BranchWriter` that lands a commit with
GraphQL ``createCommitOnBranch``: GitHub makes the commit itself, as the token's account, and
signs it with its own key, so a commit the Action makes with Chimera's App token reports
``verification: {verified: true, reason: "valid"}`` with the App as author — something a
``git push`` by any other ``contents: write`` token cannot produce. ``expectedHeadOid`` is the
parent the caller read; GitHub refuses the commit when the branch moved, which becomes
:class:`~chimera.errors.JournalConflict` (the caller re-reads and tries again, so two runs
finishing together both land). ``createCommitOnBranch`` cannot create a branch: the first
write pushes an empty orphan root with git (it carries no ops, so it needs no trust).

:func:`github_trust` is the matching :class:`~chimera.memory.trust.TrustPolicy`: a commit is
trusted when GitHub verified its signature and its author is Chimera's App (an App has no key
of its own to register, so a valid signature on its commit is GitHub's), or a person whose
role on the repository is at least ``write``. It is the one lookup every branch store uses —
memory, the schedules' journal and the learning proposals — and :func:`chimera_trust` builds
it from the Action's settings. A job that holds an API client writes through ``ApiWriter``
whatever the token — an App's installation token, the ``GITHUB_TOKEN`` or a person's — since
``createCommitOnBranch`` takes them all and nothing needs to ask GitHub whose token it is
(``GET /app`` wants the App's JWT): replay decides trust from the verified author alone.
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from chimera.errors import GitHubApiError, JournalConflict
from chimera.memory.trust import VerifiedBy

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.trust.settings import ActionSettings
    from chimera.memory.branch import GitBranch

__all__ = ["ApiWriter", "app_logins", "chimera_trust", "github_trust"]

_STALE = "Expected branch to point to"
_WRITERS = frozenset({"write", "maintain", "admin"})


class ApiWriter:
    """Lands branch-store commits through ``createCommitOnBranch`` (module docstring).

    Args:
        client: the publish side's client (its token's account is the commits' author).
        branch: the local cache of the branch (bootstraps the root; fetches what landed).
    """

    def __init__(self, client: GitHubClient, branch: GitBranch) -> None:
        self.client = client
        self.branch = branch

    def land(self, parent: str | None, files: Mapping[str, str], message: str) -> str:
        """Commit ``files`` on ``parent`` as GitHub (see
        :meth:`chimera.memory.branch.BranchWriter.land`).

        Raises:
            JournalConflict: the branch moved since ``parent``.
            JournalError: git failed (the bootstrap push, the fetch).
            GitHubApiError: the API refused the commit for another reason.
        """
        if parent is None:
            parent = self.branch.land(None, {}, "chimera: start the branch store\n")
        headline, _, body = message.strip().partition("\n")
        inp = {
            "branch": {
                "repositoryNameWithOwner": self.client.repository,
                "branchName": self.branch.branch,
            },
            "message": {"headline": headline, "body": body.strip()},
            "fileChanges": {
                "additions": [
                    {"path": path, "contents": base64.b64encode(text.encode()).decode()}
                    for path, text in sorted(files.items())
                ]
            },
            "expectedHeadOid": parent,
        }
        gh = self.client._gh

        def send() -> dict[str, Any]:
            _h, data = gh.requester.graphql_named_mutation(
                "createCommitOnBranch", inp, "commit { oid url }"
            )
            return dict(data)

        try:
            data = self.client._call("GraphQL createCommitOnBranch", send)
        except GitHubApiError as exc:
            if _STALE in str(exc):
                raise JournalConflict(
                    f"the branch {self.branch.branch} moved since {parent}: another run wrote first"
                ) from exc
            raise
        sha = str((data.get("commit") or {}).get("oid") or "")
        if not sha:
            raise GitHubApiError("GitHub GraphQL createCommitOnBranch: no commit in the answer")
        self.branch.fetch()
        return sha


def github_trust(
    client: GitHubClient,
    apps: Collection[str],
    *,
    people: bool = True,
    branch: str | None = None,
    max_pages: int = 50,
) -> VerifiedBy:
    """Trust commits GitHub verified as signed by one of ``apps`` (bot logins, e.g.
    ``chimera[bot]``; GitHub signed them) or, with ``people``, by an account with write
    access (each login's role is asked once).

    With ``branch``, the first lookup lists the branch's commits a hundred a page
    (``GET /repos/{repo}/commits?sha=BRANCH``, at most ``max_pages`` pages), so replaying N
    commits costs about N/100 calls; a commit not listed is looked up alone
    (``GET /repos/{repo}/commits/{sha}``). A lookup that fails trusts nothing for that
    commit."""
    bots = frozenset(apps)
    seen: dict[str, dict[str, Any]] = {}
    roles: dict[str, bool] = {}
    pending = [branch] if branch else []

    def lookup(sha: str) -> bool:
        while pending:
            seen.update(_listed(client, pending.pop(), max_pages))
        if sha not in seen:
            seen[sha] = _one(client, sha)
        return _verified(client, seen[sha], bots, people, roles)

    return VerifiedBy(lookup)


def app_logins(settings: ActionSettings) -> frozenset[str]:
    """Chimera's App logins among ``settings.identities`` (``<slug>[bot]``), never
    ``github-actions[bot]``: any workflow's ``GITHUB_TOKEN`` commits as that one."""
    from chimera.github.trust.settings import GITHUB_ACTIONS_BOT

    return frozenset(
        i for i in settings.identities if i.endswith("[bot]") and i != GITHUB_ACTIONS_BOT
    )


def chimera_trust(client: GitHubClient, settings: ActionSettings, branch: str) -> VerifiedBy:
    """:func:`github_trust` for Chimera's Apps (:func:`app_logins`) and write-access people,
    listing ``branch``'s commits a page at a time."""
    return github_trust(client, app_logins(settings), branch=branch)


def _listed(client: GitHubClient, branch: str, max_pages: int) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for page in range(1, max_pages + 1):
        path = f"/repos/{client.repository}/commits?sha={branch}&per_page=100&page={page}"

        def get(url: str = path) -> Any:
            return client._raw("GET", url)

        try:
            data = client._call(f"GET commits of {branch}", get)
        except GitHubApiError:
            break
        rows = [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []
        out.update({str(r["sha"]): r for r in rows if r.get("sha")})
        if len(rows) < 100:
            break
    return out


def _one(client: GitHubClient, sha: str) -> dict[str, Any]:
    path = f"/repos/{client.repository}/commits/{sha}"
    try:
        data = client._call(f"GET commit {sha[:12]}", lambda: client._raw("GET", path))
    except GitHubApiError:
        return {}
    return data if isinstance(data, dict) else {}


def _verified(
    client: GitHubClient,
    data: dict[str, Any],
    bots: frozenset[str],
    people: bool,
    roles: dict[str, bool],
) -> bool:
    check = (data.get("commit") or {}).get("verification") or {}
    if check.get("verified") is not True or check.get("reason") != "valid":
        return False
    author = str((data.get("author") or {}).get("login") or "")
    if author in bots:
        return True
    if not people or not author or author.endswith("[bot]"):
        return False
    if author not in roles:
        try:
            roles[author] = client.permission(author) in _WRITERS
        except GitHubApiError:
            roles[author] = False
    return roles[author]
