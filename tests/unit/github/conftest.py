"""Fixtures for the GitHub unit tests: a running fake with a bare remote, clients, payloads."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chimera.github.client.client import GitHubClient, RetryPolicy
from chimera.testing.github_fake import FakeRepo, GitHubFake, make_bare_remote

WEBHOOKS = Path(__file__).resolve().parents[2] / "data" / "github" / "webhooks"


@pytest.fixture
def webhook() -> Callable[[str], dict[str, Any]]:
    """Load a real @octokit/webhooks-examples payload (a fresh copy each call)."""

    def load(name: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((WEBHOOKS / f"{name}.json").read_text("utf-8"))
        return data

    return load


@pytest.fixture
def fake() -> Iterator[GitHubFake]:
    with GitHubFake() as server:
        yield server


@pytest.fixture
def work(tmp_path: Path) -> tuple[Path, Path]:
    return make_bare_remote(tmp_path)


@pytest.fixture
def repo(fake: GitHubFake, work: tuple[Path, Path]) -> FakeRepo:
    r = fake.add_repo("octo/app", remote=work[0])
    for login, role in (("chimera-bot", "write"), ("alice", "write"), ("bob", "maintain")):
        fake.add_user(login)
        r.collaborators[login] = role
    fake.add_user("mallory")  # read access only (a public repository)
    fake.add_user("helper[bot]", bot=True)
    r.collaborators["helper[bot]"] = "write"
    return r


@pytest.fixture
def make_client(fake: GitHubFake) -> Callable[..., GitHubClient]:
    def make(login: str, **retry: Any) -> GitHubClient:
        policy = RetryPolicy(**({"backoff_s": 0.01, "timeout_s": 2} | retry))
        return GitHubClient(
            "octo/app",
            fake.add_token(login),
            api_url=fake.api_url,
            retry=policy,
            throttle=False,
            sleep=lambda s: None,
        )

    return make


@pytest.fixture
def bot(repo: FakeRepo, make_client: Callable[..., GitHubClient]) -> GitHubClient:
    return make_client("chimera-bot")
