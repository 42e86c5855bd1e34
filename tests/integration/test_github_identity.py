"""Who Chimera's tokens act as, asked of the GitHub fake through the real client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chimera.github.client import GitHubClient, RetryPolicy
from chimera.github.identity import BotLoginMismatch, check_identities, token_identity
from chimera.github.settings import ActionSettings
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


def test_each_kind_of_token_says_who_it_is(fake: GitHubFake) -> None:
    kinds = {
        "workflow": fake.add_workflow_token("octo/app"),
        "app": fake.add_app_token("chimera-app", repos=("octo/app",)),
        "user": fake.add_token("alice"),
    }
    found = {kind: token_identity(_client(fake, tok)) for kind, tok in kinds.items()}
    assert {k: (v.login, v.kind) for k, v in found.items() if v is not None} == {
        "workflow": ("github-actions[bot]", "workflow"),
        "app": ("chimera-app[bot]", "app"),
        "user": ("alice", "user"),
    }


def test_the_tokens_login_joins_the_identities_and_a_wrong_bot_login_is_refused(
    fake: GitHubFake,
) -> None:
    app = _client(fake, fake.add_app_token("chimera-app", repos=("octo/app",)))
    checked = check_identities(app, ActionSettings())
    assert "chimera-app[bot]" in checked.settings.identities and checked.warnings == ()
    wrong = ActionSettings(identities=("other-app[bot]", "github-actions[bot]"))
    with pytest.raises(BotLoginMismatch, match=r"not who this job's token acts as"):
        check_identities(app, wrong)
    workflow = _client(fake, fake.add_workflow_token("octo/app"))
    placeholder = ActionSettings(identities=("my-chimera-app[bot]", "github-actions[bot]"))
    with pytest.raises(BotLoginMismatch, match=r"no GitHub account"):
        check_identities(workflow, placeholder)
    # A machine user's (or a maintainer's) own token: accepted, with the warning.
    own = check_identities(_client(fake, fake.add_token("alice")), ActionSettings())
    assert "alice" in own.settings.identities and "alice's labels" in own.warnings[0]
