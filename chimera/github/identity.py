"""Chimera's own identities, read from its tokens rather than trusted from configuration.

Whoever Chimera's tokens act as is "Chimera itself": its labels, comments and reviews never
start, cancel or approve anything, and only its ``chimera:running`` labels and markers count
as queue state. A typed ``bot-login`` that is wrong breaks both ways — a placeholder left in
the example workflow makes Chimera's own label removal read as a person cancelling; a
maintainer's own login makes that maintainer's labels read as Chimera's — so each job that
connects asks the token who it is (:func:`token_identity`):

* a person's token: ``GET /user`` answers with its login;
* an installation token (``GET /user`` refuses it): ``GET /app`` names the App, whose bot is
  ``<slug>[bot]``; a workflow's ``GITHUB_TOKEN`` belongs to the ``github-actions`` App.

:func:`check_identities` then adds that login to the settings' identities and refuses a
configured ``bot-login`` that cannot be Chimera: one that is no account at all, or that
differs from the login of the App or person token the job holds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import quote

from chimera.errors import ConfigError, GitHubNotFound, GitHubPermissionDenied
from chimera.github.settings import GITHUB_ACTIONS_BOT

if TYPE_CHECKING:
    from chimera.github.client import GitHubClient
    from chimera.github.settings import ActionSettings

__all__ = ["BotLoginMismatch", "IdentityCheck", "TokenIdentity", "check_identities"]


class BotLoginMismatch(ConfigError):
    """The configured ``bot-login`` is not who Chimera's token acts as (or no account)."""


@dataclass(frozen=True)
class TokenIdentity:
    """Who a token acts as.

    Attributes:
        login: the login (``<slug>[bot]`` for an App, ``github-actions[bot]`` for the
            workflow's ``GITHUB_TOKEN``).
        kind: ``user`` (a person's or machine user's token), ``app`` or ``workflow``.
    """

    login: str
    kind: str


@dataclass(frozen=True)
class IdentityCheck:
    """The settings with the token's identity added, and warnings for the job summary."""

    settings: ActionSettings
    token: TokenIdentity | None
    warnings: tuple[str, ...] = ()


def token_identity(client: GitHubClient) -> TokenIdentity | None:
    """Who ``client``'s token acts as; ``None`` when GitHub tells neither ``/user`` nor
    ``/app`` (an old GitHub Enterprise Server).

    Raises:
        GitHubError: the API failed after retries.
    """
    try:
        login = client._call("GET /user", lambda: client._raw("GET", "/user").get("login"))
        return TokenIdentity(str(login), "user")
    except GitHubPermissionDenied:
        pass  # an installation token (an App's, or the workflow's GITHUB_TOKEN)
    try:
        slug = client._call("GET /app", lambda: client._raw("GET", "/app").get("slug"))
    except (GitHubPermissionDenied, GitHubNotFound):
        return None
    login = f"{slug}[bot]"
    return TokenIdentity(login, "workflow" if login == GITHUB_ACTIONS_BOT else "app")


def _exists(client: GitHubClient, login: str) -> bool:
    try:
        client._call(f"GET /users/{login}", lambda: client._raw("GET", f"/users/{quote(login)}"))
    except GitHubNotFound:
        return False
    return True


def check_identities(client: GitHubClient, settings: ActionSettings) -> IdentityCheck:
    """Ask ``client``'s token who it is, add it to ``settings.identities``, and check the
    configured ``bot-login`` against it.

    Raises:
        BotLoginMismatch: a configured login is no GitHub account (a placeholder), or the job
            holds an App's or a person's token that acts as someone else.
        GitHubError: the API failed after retries.
    """
    configured = [i for i in settings.identities if i != GITHUB_ACTIONS_BOT]
    token = token_identity(client)
    warnings: list[str] = []
    # An App's or a person's token is Chimera itself, so bot-login must name it.
    if (
        token is not None
        and token.kind != "workflow"
        and configured
        and token.login not in configured
    ):
        raise BotLoginMismatch(
            f"bot-login {', '.join(configured)} is not who this job's token acts as "
            f"({token.login}); set bot-login to {token.login}"
        )
    for login in configured:
        if token is not None and login == token.login:
            continue
        if not _exists(client, login):
            raise BotLoginMismatch(
                f"bot-login {login} is no GitHub account (a placeholder left in the "
                "workflow?); set it to your App's <app-slug>[bot] login"
            )
    if token is not None and token.kind == "user":
        warnings.append(
            f"this job's token is {token.login}'s own: {token.login}'s labels, comments and "
            "reviews count as Chimera's and never start, cancel or approve anything (use a "
            "GitHub App's token)"
        )
    identities = settings.identities
    if token is not None and token.login not in identities:
        identities = (*identities, token.login)
    return IdentityCheck(replace(settings, identities=identities), token, tuple(warnings))
