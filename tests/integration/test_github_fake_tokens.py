"""The GitHub fake's token identities, driven through the real PyGithub client.

What the trust chain rests on: a workflow's GITHUB_TOKEN, a GitHub App installation token and
a person's token are told apart; a GITHUB_TOKEN may open a pull request only while "Allow
GitHub Actions to create and approve pull requests" is on, and its writes start no workflow;
an App closing and reopening a pull request starts ``pull_request`` ``reopened``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import github
import pytest
from github.GithubException import GithubException

from chimera.errors import GitHubPermissionDenied
from chimera.github.client.client import GitHubClient, RetryPolicy
from chimera.testing.github_fake import (
    ACTIONS_LOGIN,
    FakeRepo,
    GitHubFake,
    TokenKind,
    make_bare_remote,
    push_branch,
)


@dataclass
class World:
    fake: GitHubFake
    repo: FakeRepo
    work: Path
    workflow: str  # the GITHUB_TOKEN
    app: str  # the App's installation token
    alice: str  # a person's token (write access)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    remote, work = make_bare_remote(tmp_path)
    push_branch(work, "chimera/issue-1", {"fix.txt": "fixed\n"}, message="fix")
    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=remote)
        fake.add_user("alice")
        repo.collaborators["alice"] = "write"
        yield World(
            fake,
            repo,
            work,
            workflow=fake.add_workflow_token("octo/app"),
            app=fake.add_app_token("chimera-app", repos=("octo/app",)),
            alice=fake.add_token("alice"),
        )


def gh(fake: GitHubFake, token: str) -> github.Github:
    return fake.pygithub(token)


def chimera_client(world: World, token: str) -> GitHubClient:
    retry = RetryPolicy(backoff_s=0.01, timeout_s=2)
    return GitHubClient("octo/app", token, api_url=world.fake.api_url, throttle=False, retry=retry)


def open_pull(fake: GitHubFake, token: str, *, draft: bool = False) -> int:
    repo = gh(fake, token).get_repo("octo/app")
    pull = repo.create_pull(base="main", head="chimera/issue-1", title="Fix", body="b", draft=draft)
    return int(pull.number)


def test_the_github_token_may_not_open_a_pull_request_while_the_setting_is_off(
    world: World,
) -> None:
    with pytest.raises(GithubException) as info:
        open_pull(world.fake, world.workflow)
    assert info.value.status == 403
    assert info.value.data["message"] == (
        "GitHub Actions is not permitted to create or approve pull requests."
    )
    assert world.repo.pulls() == [] and world.fake.events == []
    # The same call passes once the repository allows it; the PR is github-actions[bot]'s.
    world.repo.allow_actions_pull_requests = True
    number = open_pull(world.fake, world.workflow)
    assert gh(world.fake, world.alice).get_repo("octo/app").get_pull(number).user.login == (
        ACTIONS_LOGIN
    )


def test_chimeras_client_maps_the_refusal_to_a_one_line_permission_error(world: World) -> None:
    client = chimera_client(world, world.workflow)
    with pytest.raises(GitHubPermissionDenied) as info:
        client.create_pull(title="t", body="b", head="chimera/issue-1", base="main", draft=True)
    assert "not permitted to create or approve pull requests" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_github_token_pull_request_starts_no_workflow_an_app_one_does(world: World) -> None:
    world.repo.allow_actions_pull_requests = True
    open_pull(world.fake, world.workflow)
    (opened,) = world.fake.events
    assert (opened.event, opened.action, opened.actor, opened.kind) == (
        "pull_request",
        "opened",
        ACTIONS_LOGIN,
        TokenKind.WORKFLOW,
    )
    assert opened.sha == world.repo.head_sha("chimera/issue-1")
    assert world.fake.triggered_events == []
    # An App's (or a person's) pull request starts workflows.
    gh(world.fake, world.app).get_repo("octo/app").get_pull(1).edit(state="closed")
    push_branch(world.work, "chimera/issue-2", {"two.txt": "2\n"}, start="main")
    as_alice = gh(world.fake, world.alice).get_repo("octo/app")
    as_alice.create_pull(base="main", head="chimera/issue-2", title="Two", body="b")
    triggered = [(e.event, e.action, e.actor) for e in world.fake.triggered_events]
    assert triggered == [
        ("pull_request", "closed", "chimera-app[bot]"),
        ("pull_request", "opened", "alice"),
    ]


def test_an_app_closing_and_reopening_starts_reopened_on_the_same_head(world: World) -> None:
    world.repo.allow_actions_pull_requests = True
    number = open_pull(world.fake, world.workflow)
    head = world.repo.head_sha("chimera/issue-1")
    pull = gh(world.fake, world.app).get_repo("octo/app").get_pull(number)
    pull.edit(state="closed")
    pull.edit(state="open")
    assert pull.state == "open" and pull.head.sha == head
    reopened = world.fake.triggered_events[-1]
    assert (reopened.event, reopened.action, reopened.number, reopened.sha) == (
        "pull_request",
        "reopened",
        number,
        head,
    )
    assert reopened.kind is TokenKind.APP and reopened.triggers_workflows
    # The same close and reopen with the GITHUB_TOKEN is recorded but starts nothing.
    before = len(world.fake.triggered_events)
    mine = gh(world.fake, world.workflow).get_repo("octo/app").get_pull(number)
    mine.edit(state="closed")
    mine.edit(state="open")
    assert [e.action for e in world.fake.events[-2:]] == ["closed", "reopened"]
    assert len(world.fake.triggered_events) == before


def test_reopening_is_refused_once_the_head_branch_is_gone(world: World) -> None:
    number = open_pull(world.fake, world.alice)
    pull = gh(world.fake, world.app).get_repo("octo/app").get_pull(number)
    pull.edit(state="closed")
    git = ["git", "-C", str(world.work), "push", "-q", "origin", "--delete", "chimera/issue-1"]
    subprocess.run(git, check=True, capture_output=True)
    with pytest.raises(GithubException) as info:
        pull.edit(state="open")
    assert info.value.status == 422
    assert world.repo.issues[number]["state"] == "closed"


def test_every_write_names_its_login_and_token_kind(world: World) -> None:
    world.repo.allow_actions_pull_requests = True
    number = open_pull(world.fake, world.workflow)
    gh(world.fake, world.app).get_repo("octo/app").get_issue(number).add_to_labels("risk:high")
    gh(world.fake, world.alice).get_repo("octo/app").get_issue(number).create_comment("hi")
    gh(world.fake, world.alice).get_repo("octo/app").get_pull(number)  # a read: not listed
    writes = [(c.method, c.path, c.login, c.kind) for c in world.fake.writes("octo/app")]
    assert writes == [
        ("POST", "/repos/octo/app/pulls", ACTIONS_LOGIN, TokenKind.WORKFLOW),
        ("POST", f"/repos/octo/app/issues/{number}/labels", "chimera-app[bot]", TokenKind.APP),
        ("POST", f"/repos/octo/app/issues/{number}/comments", "alice", TokenKind.PERSONAL),
    ]


def test_a_github_token_is_bound_to_its_repository_and_its_permissions(world: World) -> None:
    world.fake.add_repo("octo/other")
    world.fake.add_issue("octo/other", title="x", user="alice")
    world.fake.add_issue("octo/app", title="y", user="alice")
    elsewhere = gh(world.fake, world.workflow).get_repo("octo/other").get_issue(1)
    with pytest.raises(GithubException) as info:
        elsewhere.create_comment("from another repository's workflow")
    assert info.value.status == 403
    read_only = world.fake.add_workflow_token("octo/app", permissions={"contents": "read"})
    issue = gh(world.fake, read_only).get_repo("octo/app").get_issue(1)
    with pytest.raises(GithubException) as denied:
        issue.create_comment("no issues: write")
    assert denied.value.status == 403
    commenter = world.fake.add_workflow_token("octo/app", permissions={"issues": "write"})
    gh(world.fake, commenter).get_repo("octo/app").get_issue(1).create_comment("allowed")
    assert [c["body"] for c in world.repo.issue_comments(1)] == ["allowed"]


def test_the_github_token_may_approve_only_while_the_setting_is_on(world: World) -> None:
    number = open_pull(world.fake, world.alice)
    pull = gh(world.fake, world.workflow).get_repo("octo/app").get_pull(number)
    with pytest.raises(GithubException) as info:
        pull.create_review(event="APPROVE")
    assert info.value.status == 422
    assert info.value.data["errors"] == [
        "GitHub Actions is not permitted to approve pull requests."
    ]
    pull.create_review(event="COMMENT", body="a comment is fine")
    world.repo.allow_actions_pull_requests = True
    pull.create_review(event="APPROVE")
    assert [r["state"] for r in world.repo.reviews[number]] == ["COMMENTED", "APPROVED"]


def test_reviews_name_the_commit_they_approved_and_a_push_makes_the_head_move_on(
    world: World,
) -> None:
    number = open_pull(world.fake, world.app)
    approved_head = world.repo.head_sha("chimera/issue-1")
    gh(world.fake, world.alice).get_repo("octo/app").get_pull(number).create_review(event="APPROVE")
    push_branch(world.work, "chimera/issue-1", {"fix.txt": "fixed again\n"}, message="more")
    pull = gh(world.fake, world.alice).get_repo("octo/app").get_pull(number)
    reviews = list(pull.get_reviews())
    assert [(r.user.login, r.state, r.commit_id) for r in reviews] == [
        ("alice", "APPROVED", approved_head)
    ]
    assert pull.head.sha != approved_head  # the approval is of an older commit now
    submitted = world.fake.triggered_events[-1]
    assert (submitted.event, submitted.action, submitted.sha) == (
        "pull_request_review",
        "submitted",
        approved_head,
    )


def test_draft_state_moves_through_graphql_and_is_recorded(world: World) -> None:
    number = open_pull(world.fake, world.app, draft=True)
    client = chimera_client(world, world.app)
    assert client.pull(number).draft
    client.mark_ready(client.pull(number))
    assert not client.pull(number).draft
    assert [(e.event, e.action) for e in world.fake.triggered_events] == [
        ("pull_request", "opened"),
        ("pull_request", "ready_for_review"),
    ]
