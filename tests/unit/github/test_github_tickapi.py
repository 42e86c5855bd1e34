"""TickClient on the GitHub fake: an issue filed at most once (a lost reply, a retried tick),
and the newest check run of a name on a ref."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from chimera.github.client.client import GitHubClient
from chimera.github.client.tickapi import TickClient
from chimera.testing.github_fake import FakeFault, FakeRepo, GitHubFake

MARK = "<!-- chimera:schedule nightly -->"


@pytest.fixture
def tick(bot: GitHubClient) -> TickClient:
    return TickClient(bot)


def test_an_issue_is_filed_once_across_a_lost_reply_and_a_retried_tick(
    fake: GitHubFake, repo: FakeRepo, tick: TickClient
) -> None:
    fake.inject(FakeFault(method="POST", path=r"/issues$", status=502, after_write=True))
    first = tick.create_issue(
        "Scheduled: nightly", f"Do it.\n{MARK}", ["chimera:schedule"], marker=MARK
    )
    assert fake.pending_faults == 0 and list(repo.issues) == [first]
    again = tick.create_issue(
        "Scheduled: nightly", f"Do it.\n{MARK}", ["chimera:schedule"], marker=MARK
    )
    assert again == first and len(repo.issues) == 1
    issue = repo.issues[first]
    assert issue["user"] == "chimera-bot" and issue["labels"] == ["chimera:schedule"]
    labelled = [(e["event"], e["actor"], e["label"]) for e in repo.issue_events]
    assert labelled == [("labeled", "chimera-bot", "chimera:schedule")]
    # A closed issue is not reused: the next run files a new one.
    issue["state"] = "closed"
    third = tick.create_issue(
        "Scheduled: nightly", f"Again.\n{MARK}", ["chimera:schedule"], marker=MARK
    )
    assert third != first and len(repo.issues) == 2


def test_a_body_without_its_marker_is_refused(tick: TickClient) -> None:
    with pytest.raises(ValueError, match="marker"):
        tick.create_issue("t", "no marker", ["chimera:schedule"], marker=MARK)


def test_labels_of_a_caller_without_push_access_are_dropped(
    repo: FakeRepo, make_client: Callable[..., GitHubClient]
) -> None:
    number = TickClient(make_client("mallory")).client._raw(
        "POST", "/repos/octo/app/issues", {"title": "t", "body": "b", "labels": ["chimera"]}
    )["number"]
    assert repo.issues[number]["labels"] == [] and repo.issue_events == []


def test_the_latest_check_run_of_a_name_on_a_branch(
    fake: GitHubFake, repo: FakeRepo, work: tuple[Path, Path]
) -> None:
    app = fake.add_app_token("chimera-app", repos=("octo/app",))
    gh = fake.pygithub(app).get_repo("octo/app")
    sha = repo.head_sha("main")
    assert sha is not None
    tick = TickClient(GitHubClient("octo/app", app, api_url=fake.api_url, throttle=False))
    assert tick.latest_check_run("main", "spec") is None
    gh.create_check_run(name="spec", head_sha=sha, status="completed", conclusion="success")
    gh.create_check_run(
        name="spec", head_sha=sha, status="completed", conclusion="failure",
        output={"title": "1 red", "summary": "red: keeps-add"},
    )  # fmt: skip
    gh.create_check_run(name="lint", head_sha=sha, status="in_progress")
    seen = tick.latest_check_run("main", "spec")
    assert seen is not None
    assert (seen.head_sha, seen.conclusion, seen.summary) == (sha, "failure", "red: keeps-add")
    running = tick.latest_check_run(sha, "lint")
    assert running is not None and running.conclusion is None
    assert tick.latest_check_run("no-such-branch", "spec") is None
