"""Chimera's labels: created with their colours on first use, idempotently, and named in one
line when the token may not (against the GitHub fake)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chimera.cli import main
from chimera.github.client.client import GitHubClient, RetryPolicy
from chimera.github.queue.labels import chimera_labels, ensure_labels
from chimera.github.queue.queue import LABEL_DEFINITIONS
from chimera.testing.github_fake import FakeRepo, GitHubFake


def _client(fake: GitHubFake, token: str) -> GitHubClient:
    policy = RetryPolicy(backoff_s=0.01, timeout_s=2)
    return GitHubClient("octo/app", token, api_url=fake.api_url, retry=policy, throttle=False)


def test_the_missing_labels_are_created_once_with_colours(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    repo.labels["chimera:running"] = {"id": 1, "name": "chimera:running", "color": "000000",
                                      "description": "mine"}  # fmt: skip
    labels = chimera_labels("fix-me")[1:]
    first = ensure_labels(bot, labels)
    assert first.existed == ("chimera:running",) and not first.denied and not first.note
    assert set(first.created) == {name for name, _, _ in LABEL_DEFINITIONS[1:]} - {
        "chimera:running"
    }
    for name, color, description in LABEL_DEFINITIONS[1:]:
        if name != "chimera:running":
            assert (repo.labels[name]["color"], repo.labels[name]["description"]) == (
                color,
                description,
            )
    # A person's own colour is kept, and a second pass writes nothing.
    assert repo.labels["chimera:running"]["color"] == "000000"
    writes = len(fake.writes("octo/app"))
    again = ensure_labels(bot, labels)
    assert not again.created and len(again.existed) == len(labels)
    assert len(fake.writes("octo/app")) == writes


def test_a_label_made_meanwhile_is_no_error(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    labels = chimera_labels()[1:2]
    # Another job creates the label between the listing and the write: GitHub's 422.
    assert bot.create_label(labels[0].name, labels[0].color, labels[0].description)
    assert not bot.create_label(labels[0].name, labels[0].color, labels[0].description)


def test_a_token_that_may_not_create_labels_is_named_in_one_line(
    fake: GitHubFake, repo: FakeRepo
) -> None:
    token = fake.add_workflow_token("octo/app", permissions={"issues": "read", "contents": "read"})
    ensured = ensure_labels(_client(fake, token), chimera_labels()[1:])
    assert not ensured.created and len(ensured.denied) == len(LABEL_DEFINITIONS) - 1
    assert "\n" not in ensured.note and "chimera:queued" in ensured.note
    assert "issues: write" in ensured.note
    # One refusal was enough: the others were not tried.
    assert len(fake.calls_to("POST", r"/repos/octo/app/labels$")) == 1
    assert not repo.labels


def test_decide_creates_the_other_labels_on_first_use(
    tmp_path: Path,
    fake: GitHubFake,
    repo: FakeRepo,
    webhook: Callable[[str], dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.add_issue("octo/app", title="T", body="b", user="alice", labels=("chimera",))
    fake.add_workflow_run("octo/app", 55)
    payload = webhook("issues.labeled")
    payload["label"]["name"] = "chimera"
    payload["sender"] |= {"login": "alice", "type": "User"}
    payload["issue"]["number"] = 1
    payload["repository"]["full_name"] = "octo/app"
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    summary = tmp_path / "summary.md"
    env = {
        "GITHUB_EVENT_NAME": "issues",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "octo/app",
        "GITHUB_OUTPUT": str(tmp_path / "out.txt"),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_RUN_ID": "55",
        "GITHUB_API_URL": fake.api_url,
        "CHIMERA_BOT_LOGIN": "chimera-bot",
        "CHIMERA_GITHUB_TOKEN": fake.add_token("chimera-bot"),
        "CHIMERA_GITHUB_THROTTLE": "0",
        "CHIMERA_GITHUB_BACKOFF": "0.01",
        "CHIMERA_BASE_REF": "main",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(["action", "--mode", "decide"]) == 0
    for name, color, _ in LABEL_DEFINITIONS[1:]:
        assert repo.labels[name]["color"] == color, name
    # The running label the queue added is the coloured one, not GitHub's grey default.
    assert "chimera:running" in repo.issues[1]["labels"]
    assert "may not create the labels" not in summary.read_text()
