"""Chimera's own identities: a person's token says who it is; an App's comes from configuration.

Whoever Chimera's tokens act as is "Chimera itself": its labels, comments and reviews never
start, cancel or approve anything, and only its ``chimera:running`` labels and markers count
as queue state. A typed ``bot-login`` that is wrong breaks both ways — a placeholder left in
the example workflow makes Chimera's own label removal read as a person cancelling; a
maintainer's own login makes that maintainer's labels read as Chimera's — so each job that
connects checks what it can (:func:`token_identity`, :func:`check_identities`):

* a person's (or machine user's) token: ``GET /user`` answers with its login, which must be
  the configured ``bot-login`` and joins the identities;
* an installation token (an App's, or a workflow's ``GITHUB_TOKEN``): GitHub names neither
  (``GET /user`` is 403, ``GET /app`` wants the App's JWT), so the token is *unknown* — never
  an error — and the App's login is the configured ``bot-login`` (the example workflows fill
  it from ``actions/create-github-app-token``'s ``app-slug`` output as ``<slug>[bot]``),
  which must be an account, and a ``Bot`` one when it ends in ``[bot]``
  (``GET /users/{login}``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import quote

from chimera.errors import ConfigError, GitHubNotFound, GitHubPermissionDenied
from chimera.github.trust.settings import GITHUB_ACTIONS_BOT

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.trust.settings import ActionSettings

__all__ = [
    "EMPTY_FOR_QUEUE",
    "BotLoginMismatch",
    "IdentityCheck",
    "TokenIdentity",
    "check_identities",
]


class BotLoginMismatch(ConfigError):
    """The configured ``bot-login`` is not who Chimera's token acts as (or no account)."""


@dataclass(frozen=True)
class TokenIdentity:
    """Who a token acts as.

    Attributes:
        login: the account's login.
        kind: ``user`` (a person's or machine user's token: the only kind GitHub names).
    """

    login: str
    kind: str


@dataclass(frozen=True)
class IdentityCheck:
    """The settings with the token's identity added, and warnings for the job summary;
    ``token`` is ``None`` when GitHub would not name it (an installation token)."""

    settings: ActionSettings
    token: TokenIdentity | None
    warnings: tuple[str, ...] = ()


def token_identity(client: GitHubClient) -> TokenIdentity | None:
    """The person ``client``'s token acts as (``GET /user``, one call), or ``None`` when
    GitHub will not name it: an installation token — an App's or the workflow's
    ``GITHUB_TOKEN`` — gets 403 there, and ``GET /app`` answers only the App's JWT.

    Raises:
        GitHubError: the API failed after retries (not a refusal: that is ``None``).
    """
    try:
        login = client._call("GET /user", lambda: client._raw("GET", "/user").get("login"))
    except (GitHubPermissionDenied, GitHubNotFound):
        return None
    return TokenIdentity(str(login), "user") if login else None


def _account_type(client: GitHubClient, login: str) -> str | None:
    """``GET /users/{login}``'s ``type`` (``User``, ``Bot``, ``Organization``); ``None``: no
    such account."""
    try:
        data = client._call(
            f"GET /users/{login}", lambda: client._raw("GET", f"/users/{quote(login)}")
        )
    except GitHubNotFound:
        return None
    return str(data.get("type") or "") if isinstance(data, dict) else ""


EMPTY_FOR_QUEUE = (
    "bot-login is empty: this job holds only GITHUB_TOKEN, so it cannot tell the ChangeQueue "
    "slots Chimera's App claims (the drain) from anyone's and could admit a run too many; "
    "set bot-login to the App's <app-slug>[bot]"
)


def check_identities(
    client: GitHubClient, settings: ActionSettings, *, queue: bool = False
) -> IdentityCheck:
    """Ask GitHub who ``client``'s token is (:func:`token_identity`), add a person's login to
    ``settings.identities``, and check the configured ``bot-login`` (one call per login).

    ``queue``: the job admits runs through the ChangeQueue (decide), which needs to know the
    App's login to count its slots: an empty ``bot-login`` with an unnamed token is refused
    (the GITHUB_TOKEN-only tier, ``bot-login: github-actions[bot]``, has no App slots to
    count: :mod:`chimera.github.trust.tier`).

    Raises:
        BotLoginMismatch: a configured login is no GitHub account (a placeholder), a
            ``<slug>[bot]`` login is not a ``Bot`` account, the job holds a person's token
            and ``bot-login`` names someone else, or (``queue``) ``bot-login`` is empty and
            GitHub does not name the token.
        GitHubError: the API failed after retries.
    """
    configured = [i for i in settings.identities if i != GITHUB_ACTIONS_BOT]
    token = token_identity(client)
    if queue and token is None and not configured and not settings.no_app:
        raise BotLoginMismatch(EMPTY_FOR_QUEUE)
    warnings: list[str] = []
    # A person's token is Chimera itself, so bot-login must name that person.
    if token is not None and configured and token.login not in configured:
        raise BotLoginMismatch(
            f"bot-login {', '.join(configured)} is not who this job's token acts as "
            f"({token.login}); set bot-login to {token.login}"
        )
    for login in configured:
        if token is not None and login == token.login:
            continue
        kind = _account_type(client, login)
        if kind is None:
            raise BotLoginMismatch(
                f"bot-login {login} is no GitHub account (a placeholder left in the "
                "workflow?); set it to your App's <app-slug>[bot] login"
            )
        if login.endswith("[bot]") and kind != "Bot":
            raise BotLoginMismatch(f"bot-login {login} is a {kind or 'non-Bot'} account, no App")
    if token is None and not configured and not settings.no_app:
        warnings.append(
            "bot-login is empty and GitHub does not name an installation token: Chimera's "
            "own App events read as a person's (set bot-login to the App's <app-slug>[bot], "
            "e.g. `${{ steps.app.outputs.app-slug }}[bot]`)"
        )
    if token is not None:
        warnings.append(
            f"this job's token is {token.login}'s own: {token.login}'s labels, comments and "
            "reviews count as Chimera's and never start, cancel or approve anything (use a "
            "GitHub App's token)"
        )
    identities = settings.identities
    if token is not None and token.login not in identities:
        identities = (*identities, token.login)
    return IdentityCheck(replace(settings, identities=identities), token, tuple(warnings))
