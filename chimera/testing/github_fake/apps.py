"""GitHub Apps: the endpoints ``actions/create-github-app-token`` calls with the App's JWT.

An App is arranged with :meth:`GitHubFake.add_app` (its slug, its public key, the repositories
it is installed on and the permissions the installation grants). Then, as on GitHub:

* ``GET /repos/{owner}/{repo}/installation`` and ``GET /users/{login}/installation`` (or
  ``/orgs/{org}/installation``) find the installation, for a request signed with the App's JWT;
* ``POST /app/installations/{id}/access_tokens`` mints an installation token (acting as
  ``<slug>[bot]``, whose writes start workflows), narrowed to the ``repositories`` and
  ``permissions`` asked for; asking for more than the installation grants is GitHub's 422;
* ``DELETE /installation/token`` revokes the token it is called with;
* ``GET /app`` answers the App's JWT (every other credential gets 401);
* with a person's token, ``GET /user/installations`` lists the installations whose account
  is that person or that reach a repository the person administers, ``GET
  /user/installations/{id}/repositories`` their repositories, and ``GET
  /orgs/{org}/installations`` an organization's (for an admin of one of its repositories;
  arrange an organization with ``fake.users[org]["type"] = "Organization"``); an installation
  token or the ``GITHUB_TOKEN`` gets 403 there.

The JWT is checked as GitHub does: RS256, signed by the App's key, ``iss`` the App id, not
expired and issued at most a minute ahead. PyJWT (a PyGithub dependency) verifies it, imported
when a JWT arrives.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from chimera.testing.github_fake.routing import (
    FakeRequest,
    FakeResponse,
    HttpError,
    Resource,
    route,
)
from chimera.testing.github_fake.state import Identity, TokenKind, node_id

__all__ = ["Apps", "AppsMixin", "FakeApp"]

_JWT_ERROR = "A JSON web token could not be decoded"
_LEVEL = {"read": 1, "write": 2, "admin": 3}


@dataclass
class FakeApp:
    """One GitHub App and its one installation.

    Attributes:
        slug: the App's slug; its tokens act as ``<slug>[bot]``.
        app_id: the id its JWT names as ``iss``.
        public_key: the PEM public key its JWT must verify against.
        owner: the account the App is installed on.
        repos: the repositories (``owner/name``) of the installation.
        permissions: what the installation grants (``contents: write`` ...).
        installation_id: the installation's id.
        tokens: the installation tokens minted so far (revoked ones included).
    """

    slug: str
    app_id: int
    public_key: str
    owner: str
    repos: tuple[str, ...]
    permissions: dict[str, str]
    installation_id: int
    tokens: list[str] = field(default_factory=list)

    @property
    def login(self) -> str:
        return f"{self.slug}[bot]"


class AppsMixin:
    """The App helpers of :class:`~chimera.testing.github_fake.GitHubFake`."""

    apps: dict[str, FakeApp]
    identities: dict[str, Identity]
    _lock: threading.RLock
    _ids: itertools.count[int]
    add_user: Callable[..., dict[str, Any]]  # GitHubFake's

    def add_app(
        self,
        slug: str,
        public_key: str,
        *,
        repos: tuple[str, ...],
        permissions: Mapping[str, str],
        owner: str | None = None,
    ) -> FakeApp:
        """Register the GitHub App ``slug`` (its JWT must verify against ``public_key``, a PEM),
        installed on ``repos`` (``owner/name``; owner: the first one's) with ``permissions``
        (REST scope names: ``contents``, ``pull_requests`` ... → ``read``/``write``); its
        installation tokens come from the App-token endpoints (:class:`Apps`)."""
        with self._lock:
            app = FakeApp(
                slug=slug,
                app_id=next(self._ids),
                public_key=public_key,
                owner=owner or repos[0].split("/", 1)[0],
                repos=tuple(repos),
                permissions=dict(permissions),
                installation_id=next(self._ids),
            )
            self.apps[str(app.app_id)] = app
        self.add_user(app.login, bot=True)
        return app

    def revoke_token(self, token: str) -> None:
        """Forget ``token``: later requests with it are anonymous (GitHub answers 401)."""
        with self._lock:
            self.identities.pop(token, None)


class Apps(Resource):
    def _app(self, req: FakeRequest) -> FakeApp:
        """The App whose JWT signs ``req`` (401 for anything else)."""
        scheme, _, token = req.header("Authorization").strip().partition(" ")
        if scheme.lower() != "bearer" or token.count(".") != 2:
            raise HttpError(401, _JWT_ERROR)
        import jwt  # lazily: PyJWT comes with PyGithub, the fake stays light to import

        try:
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError as exc:
            raise HttpError(401, _JWT_ERROR) from exc
        app = self.fake.apps.get(str(claims.get("iss", "")))
        if app is None:
            raise HttpError(401, "Integration not found")
        try:
            jwt.decode(
                token,
                app.public_key,
                algorithms=["RS256"],
                options={"require": ["iat", "exp", "iss"]},
                leeway=60,
            )
        except jwt.PyJWTError as exc:
            raise HttpError(401, f"'Expiration time' claim ('exp') or signature: {exc}") from exc
        return app

    def _installation(self, app: FakeApp) -> dict[str, Any]:
        return {
            "id": app.installation_id,
            "app_id": app.app_id,
            "app_slug": app.slug,
            "account": self.json.user(app.owner),
            "target_id": self.fake.users.get(app.owner, {}).get("id", 0),
            "target_type": self.fake.users.get(app.owner, {}).get("type", "User"),
            "repository_selection": "selected",
            "repositories_url": f"{self.fake.api_url}/installation/repositories",
            "single_file_name": None,
            "suspended_by": None,
            "suspended_at": None,
            "permissions": dict(app.permissions),
            "events": [],
            "access_tokens_url": (
                f"{self.fake.api_url}/app/installations/{app.installation_id}/access_tokens"
            ),
            "html_url": f"{self.fake.web_url}/settings/installations/{app.installation_id}",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        }

    @route("GET", "/app")
    def get_app(self, req: FakeRequest) -> FakeResponse:
        app = self._app(req)
        return FakeResponse(
            200,
            {
                "id": app.app_id,
                "slug": app.slug,
                "node_id": node_id("A", app.app_id),
                "name": app.slug,
                "owner": self.json.user(app.owner),
                "permissions": dict(app.permissions),
                "events": [],
                "html_url": f"{self.fake.web_url}/apps/{app.slug}",
            },
        )

    @route("GET", "{repo}/installation")
    def repo_installation(self, req: FakeRequest) -> FakeResponse:
        app = self._app(req)
        full_name = f"{req.params['owner']}/{req.params['name']}"
        if full_name not in app.repos:
            raise HttpError(404, "Not Found")
        return FakeResponse(200, self._installation(app))

    @route("GET", "/users/{who}/installation")
    def user_installation(self, req: FakeRequest) -> FakeResponse:
        app = self._app(req)
        if req.params["who"] != app.owner:
            raise HttpError(404, "Not Found")
        return FakeResponse(200, self._installation(app))

    @route("GET", "/orgs/{who}/installation")
    def org_installation(self, req: FakeRequest) -> FakeResponse:
        return self.user_installation(req)

    @route("GET", "/user/installations")
    def my_installations(self, req: FakeRequest) -> FakeResponse:
        found = [self._installation(app) for app in self._visible(req)]
        return FakeResponse(200, {"total_count": len(found), "installations": found})

    @route("GET", "/user/installations/{iid:int}/repositories")
    def my_installation_repos(self, req: FakeRequest) -> FakeResponse:
        login = self._person(req)
        for app in self._visible(req):
            if app.installation_id == req.number("iid"):
                repos = [
                    self.json.repo(self.fake.repos[r])
                    for r in app.repos
                    if r in self.fake.repos and self._admin_or_owner(login, r, app)
                ]
                return FakeResponse(
                    200,
                    {
                        "total_count": len(repos),
                        "repository_selection": "selected",
                        "repositories": repos,
                    },
                )
        raise HttpError(404, "Not Found")

    @route("GET", "/orgs/{org}/installations")
    def org_installations(self, req: FakeRequest) -> FakeResponse:
        login = self._person(req)
        org = req.params["org"]
        if self.fake.users.get(org, {}).get("type") != "Organization":
            raise HttpError(404, "Not Found")
        owned = [r for r in self.fake.repos.values() if r.owner == org]
        if not any(r.collaborators.get(login) == "admin" for r in owned):
            raise HttpError(403, "You must be an organization owner to list its installations")
        found = [self._installation(a) for a in self.fake.apps.values() if a.owner == org]
        return FakeResponse(200, {"total_count": len(found), "installations": found})

    def _person(self, req: FakeRequest) -> str:
        who = req.identity
        if who is None:
            raise HttpError(401, "Requires authentication")
        if who.kind is not TokenKind.PERSONAL:
            raise HttpError(403, "Resource not accessible by integration")
        return who.login

    def _admin_or_owner(self, login: str, full_name: str, app: FakeApp) -> bool:
        repo = self.fake.repos.get(full_name)
        return app.owner == login or (repo is not None and repo.collaborators.get(login) == "admin")

    def _visible(self, req: FakeRequest) -> list[FakeApp]:
        login = self._person(req)
        return [
            app
            for app in self.fake.apps.values()
            if any(self._admin_or_owner(login, r, app) for r in app.repos)
        ]

    @route("POST", "/app/installations/{iid:int}/access_tokens")
    def create_token(self, req: FakeRequest) -> FakeResponse:
        app = self._app(req)
        if req.number("iid") != app.installation_id:
            raise HttpError(404, "Not Found")
        names = req.data.get("repositories")
        repos = app.repos
        if names is not None:
            wanted = tuple(f"{app.owner}/{n}" if "/" not in str(n) else str(n) for n in names)
            missing = [r for r in wanted if r not in app.repos]
            if missing:
                raise HttpError(
                    422,
                    f"There is at least one repository that does not exist or "
                    f"is not accessible to the parent installation: {missing}",
                )
            repos = wanted
        asked = req.data.get("permissions")
        permissions = dict(app.permissions)
        if asked is not None:
            if not isinstance(asked, dict):
                raise HttpError(422, "Invalid request. permissions must be an object.")
            for scope, level in asked.items():
                granted = app.permissions.get(scope)
                if granted is None or _LEVEL.get(str(level), 9) > _LEVEL.get(granted, 0):
                    raise HttpError(
                        422,
                        f"The permissions requested are not granted to this installation: "
                        f"{scope}={level}",
                    )
            permissions = {str(k): str(v) for k, v in asked.items()}
        # The REST scopes are snake_case (pull_requests); the fake's identities, like a
        # workflow's permissions: block, name them with dashes (pull-requests).
        scopes = {k.replace("_", "-"): v for k, v in permissions.items()}
        only = repos[0] if len(repos) == 1 else None
        token = self.fake.add_app_token(app.slug, repos=repos, permissions=scopes, repo=only)
        app.tokens.append(token)
        expires = datetime.now(UTC) + timedelta(hours=1)
        return FakeResponse(
            201,
            {
                "token": token,
                "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "permissions": permissions,
                "repository_selection": "selected",
                "repositories": [self.json.repo(self.fake.repos[r]) for r in repos
                                 if r in self.fake.repos],
            },
        )  # fmt: skip

    @route("DELETE", "/installation/token")
    def revoke_token(self, req: FakeRequest) -> FakeResponse:
        who = req.identity
        if who is None or who.kind is not TokenKind.APP:
            raise HttpError(401, "Bad credentials")
        token = req.header("Authorization").strip().partition(" ")[2].strip()
        self.fake.revoke_token(token)
        return FakeResponse(204)
