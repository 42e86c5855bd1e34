"""Check runs and commit statuses in the GitHub fake, through the real PyGithub client.

The Spec verdict goes on a PR head as a check run when an App or the GITHUB_TOKEN writes it,
or as a commit status for a personal token, which GitHub refuses check runs (403).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import github
import pytest
from github.GithubException import GithubException

from chimera.testing.github_fake import FakeRepo, GitHubFake, TokenKind, make_bare_remote


@dataclass
class World:
    fake: GitHubFake
    repo: FakeRepo
    sha: str
    workflow: str
    app: str
    alice: str


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    remote, _work = make_bare_remote(tmp_path)
    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=remote)
        fake.add_user("alice")
        repo.collaborators["alice"] = "admin"
        sha = repo.head_sha("main")
        assert sha is not None
        yield World(
            fake,
            repo,
            sha,
            workflow=fake.add_workflow_token("octo/app"),
            app=fake.add_app_token("chimera-app", repos=("octo/app",)),
            alice=fake.add_token("alice"),
        )


def repo_as(fake: GitHubFake, token: str) -> github.Repository.Repository:
    return fake.pygithub(token).get_repo("octo/app")


def test_a_personal_token_cannot_create_a_check_run(world: World) -> None:
    with pytest.raises(GithubException) as info:
        repo_as(world.fake, world.alice).create_check_run("chimera/spec", world.sha)
    assert info.value.status == 403
    assert info.value.data["message"] == "You must authenticate via a GitHub App."
    assert world.repo.check_runs == {}


def test_an_app_check_run_is_created_completed_and_listed_for_the_ref(world: World) -> None:
    repo = repo_as(world.fake, world.app)
    run = repo.create_check_run("chimera/spec", world.sha, status="in_progress")
    assert (run.status, run.app.slug) == ("in_progress", "chimera-app")
    assert run.conclusion is None
    run.edit(conclusion="success", output={"title": "Spec", "summary": "3 of 3 met"})
    assert (run.status, run.conclusion) == ("completed", "success")
    listed = list(repo.get_commit(world.sha).get_check_runs(check_name="chimera/spec"))
    assert [(r.id, r.conclusion, r.output.summary) for r in listed] == [
        (run.id, "success", "3 of 3 met")
    ]
    # Listing by branch name resolves to the same commit.
    assert [r.id for r in repo.get_commit("main").get_check_runs()] == [run.id]
    assert [(e.event, e.action, e.kind) for e in world.fake.triggered_events] == [
        ("check_run", "created", TokenKind.APP),
        ("check_run", "completed", TokenKind.APP),
    ]


def test_the_github_token_check_run_belongs_to_github_actions_and_no_other_app(
    world: World,
) -> None:
    mine = repo_as(world.fake, world.workflow).create_check_run(
        "chimera/spec", world.sha, conclusion="failure"
    )
    assert (mine.app.slug, mine.app.id, mine.status) == ("github-actions", 15368, "completed")
    theirs = repo_as(world.fake, world.app).get_check_run(mine.id)
    with pytest.raises(GithubException) as info:
        theirs.edit(conclusion="success")  # an App cannot overwrite the GITHUB_TOKEN's verdict
    assert info.value.status == 403 and "can only be modified by the GitHub App" in str(
        info.value.data["message"]
    )
    assert world.repo.check_runs[mine.id]["conclusion"] == "failure"
    assert world.fake.triggered_events == []  # a GITHUB_TOKEN check run starts nothing


def test_filter_latest_keeps_the_newest_run_of_each_name(world: World) -> None:
    repo = repo_as(world.fake, world.app)
    repo.create_check_run("chimera/spec", world.sha, conclusion="failure")
    newer = repo.create_check_run("chimera/spec", world.sha, conclusion="success")
    other = repo.create_check_run("lint", world.sha, status="queued")
    commit = repo.get_commit(world.sha)
    assert sorted(r.id for r in commit.get_check_runs()) == sorted([newer.id, other.id])
    assert len(list(commit.get_check_runs(filter="all"))) == 3
    assert [r.id for r in commit.get_check_runs(status="queued")] == [other.id]


def test_check_runs_and_statuses_refuse_an_unknown_commit(world: World) -> None:
    repo = repo_as(world.fake, world.app)
    with pytest.raises(GithubException) as info:
        repo.create_check_run("chimera/spec", "f" * 40)
    assert info.value.status == 422
    with pytest.raises(GithubException) as status:
        repo_as(world.fake, world.alice).get_commit("f" * 40).create_status("success")
    assert status.value.status == 422


def test_a_personal_token_writes_a_commit_status_and_the_combined_state_follows(
    world: World,
) -> None:
    commit = repo_as(world.fake, world.alice).get_commit(world.sha)
    commit.create_status("pending", context="chimera/spec", description="verifying")
    assert commit.get_combined_status().state == "pending"
    made = commit.create_status("success", context="chimera/spec", target_url="http://x/1")
    assert (made.state, made.context, made.creator.login) == ("success", "chimera/spec", "alice")
    combined = commit.get_combined_status()
    assert (combined.state, combined.total_count) == ("success", 1)
    commit.create_status("error", context="ci")
    assert commit.get_combined_status().state == "failure"
    assert [s.state for s in commit.get_statuses()] == ["error", "success", "pending"]
    with pytest.raises(GithubException) as info:
        commit.create_status("done")
    assert info.value.status == 422


def test_a_status_needs_write_access_and_the_statuses_permission(world: World) -> None:
    world.fake.add_user("mallory")
    reader = world.fake.add_token("mallory")
    with pytest.raises(GithubException) as info:
        repo_as(world.fake, reader).get_commit(world.sha).create_status("success")
    assert info.value.status == 403
    no_statuses = world.fake.add_workflow_token("octo/app", permissions={"checks": "write"})
    with pytest.raises(GithubException) as denied:
        repo_as(world.fake, no_statuses).get_commit(world.sha).create_status("success")
    assert denied.value.status == 403
    repo_as(world.fake, no_statuses).create_check_run("chimera/spec", world.sha)
    assert world.repo.statuses == [] and len(world.repo.check_runs) == 1
