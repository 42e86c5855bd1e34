"""Who Chimera's tokens act as, asked of the GitHub fake through the real client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chimera.errors import GitHubPermissionDenied
from chimera.github.client.client import GitHubClient, RetryPolicy
from chimera.github.trust.identity import BotLoginMismatch, check_identities, token_identity
from chimera.github.trust.settings import ActionSettings
from chimera.testing.github_fake import GitHubFake


@pytest.fixture
def fake() -> Iterator[GitHubFake]:
    with GitHubFake() as fake:
        fake.add_repo("octo/app")
        fake.add_user("alice")
        yield fake


def _client(fake: GitHubFake, token: str) -> GitHubClient:
    return GitHubClient(
        "octo/app", token, api_url=fake.api_url, retry=RetryPolicy(attempts=1), throttle=False
    )


def test_github_names_a_persons_token_and_no_installation_token(fake: GitHubFake) -> None:
    kinds = {
        "workflow": fake.add_workflow_token("octo/app"),
        "app": fake.add_app_token("chimera-app", repos=("octo/app",)),
        "user": fake.add_token("alice"),
    }
    found = {kind: token_identity(_client(fake, tok)) for kind, tok in kinds.items()}
    assert {k: v and (v.login, v.kind) for k, v in found.items()} == {
        "workflow": None,
        "app": None,
        "user": ("alice", "user"),
    }
    # What GitHub answers an installation token: the reasons the two are unknown.
    app = _client(fake, kinds["app"])
    with pytest.raises(GitHubPermissionDenied, match="could not be decoded"):
        app._call("GET /app", lambda: app._raw("GET", "/app"))
    with pytest.raises(GitHubPermissionDenied, match="not accessible by integration"):
        app._call("GET /user", lambda: app._raw("GET", "/user"))
    assert [c.status for c in fake.calls_to("GET", "^/app$")] == [401]  # token_identity: none


def test_an_app_token_takes_its_login_from_bot_login_which_must_be_a_bot(
    fake: GitHubFake,
) -> None:
    app = _client(fake, fake.add_app_token("chimera-app", repos=("octo/app",)))
    configured = ActionSettings(identities=("chimera-app[bot]", "github-actions[bot]"))
    checked = check_identities(app, configured)
    assert checked.token is None and checked.warnings == ()
    assert checked.settings.identities == configured.identities
    # Nothing configured: unknown, not an error, and the summary says what to set.
    bare = check_identities(app, ActionSettings())
    assert bare.settings.identities == ("github-actions[bot]",)
    assert "app-slug" in bare.warnings[0]
    workflow = _client(fake, fake.add_workflow_token("octo/app"))
    placeholder = ActionSettings(identities=("my-chimera-app[bot]", "github-actions[bot]"))
    with pytest.raises(BotLoginMismatch, match=r"no GitHub account"):
        check_identities(workflow, placeholder)
    fake.users["fake[bot]"] = fake.users["alice"] | {"login": "fake[bot]"}  # a User, not a Bot
    with pytest.raises(BotLoginMismatch, match=r"fake\[bot\] is a User account, no App"):
        check_identities(app, ActionSettings(identities=("fake[bot]",)))


def test_a_persons_token_joins_the_identities_and_must_be_bot_login(fake: GitHubFake) -> None:
    alice = _client(fake, fake.add_token("alice"))
    own = check_identities(alice, ActionSettings())
    assert "alice" in own.settings.identities and "alice's labels" in own.warnings[0]
    wrong = ActionSettings(identities=("chimera-app[bot]", "github-actions[bot]"))
    with pytest.raises(BotLoginMismatch, match=r"not who this job's token acts as \(alice\)"):
        check_identities(alice, wrong)
