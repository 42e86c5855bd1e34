"""GitHubClient (PyGithub) against the stateful fake: error mapping, retries, no duplicates."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.errors import (
    GitHubApiError,
    GitHubError,
    GitHubNotFound,
    GitHubPermissionDenied,
    GitHubRateLimited,
)
from chimera.github.client.client import GitHubClient, RetryPolicy
from chimera.testing.github_fake import (
    FakeFault,
    FakeRepo,
    GitHubFake,
    make_bare_remote,
    push_branch,
)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[GitHubFake, FakeRepo]]:
    remote, work = make_bare_remote(tmp_path)
    push_branch(work, "chimera/issue-1", {"fix.txt": "fixed\n"}, message="fix")
    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=remote)
        fake.add_user("alice")
        repo.collaborators["alice"] = "write"
        repo.collaborators["chimera-bot"] = "write"
        fake.add_issue("octo/app", title="Fix", body="text", user="alice", labels=("chimera",))
        yield fake, repo


def client(fake: GitHubFake, login: str = "chimera-bot", **kw: object) -> GitHubClient:
    waits: list[float] = []
    policy = RetryPolicy(**({"backoff_s": 0.01, "timeout_s": 1, "max_wait_s": 5} | kw))  # type: ignore[arg-type]
    c = GitHubClient(
        "octo/app",
        fake.add_token(login),
        api_url=fake.api_url,
        retry=policy,
        throttle=False,
        sleep=waits.append,
    )
    return c


def test_http_500_is_retried_then_succeeds(env: tuple[GitHubFake, FakeRepo]) -> None:
    fake, _ = env
    c = client(fake)
    fake.inject(FakeFault(method="GET", path=r"/issues/1$", status=500, times=2))
    assert c.issue(1).title == "Fix"
    assert c.waits == [0.01, 0.02]  # exponential backoff
    assert fake.pending_faults == 0


def test_secondary_rate_limit_waits_for_retry_after(env: tuple[GitHubFake, FakeRepo]) -> None:
    fake, _ = env
    c = client(fake)
    fake.inject(
        FakeFault(
            method="GET", path=r"/issues/1$", status=403, retry_after=3, secondary_rate_limit=True
        ),
        FakeFault(method="GET", path=r"/issues/1$", status=429, retry_after=2),
    )
    assert c.issue(1).number == 1
    assert c.waits == [3.0, 2.0]


def test_rate_limit_longer_than_allowed_is_reported_not_waited(
    env: tuple[GitHubFake, FakeRepo],
) -> None:
    fake, _ = env
    c = client(fake)
    fake.inject(
        FakeFault(
            method="GET", path=r"/issues/1$", status=403, retry_after=600, secondary_rate_limit=True
        )
    )
    with pytest.raises(GitHubRateLimited) as info:
        c.issue(1)
    assert info.value.retry_after == 600 and "600s" in str(info.value)
    assert isinstance(info.value.__cause__, Exception)  # raised from the PyGithub exception
    assert c.waits == []


def test_timeouts_are_retried_and_then_mapped(env: tuple[GitHubFake, FakeRepo]) -> None:
    fake, _ = env
    c = client(fake, attempts=2)
    fake.inject(FakeFault(method="GET", path=r"/issues/1$", status=None, delay=1.5))
    assert c.issue(1).number == 1  # the first try timed out, the retry answered
    fake.inject(FakeFault(method="GET", path=r"/issues/1$", status=None, delay=1.5, times=2))
    with pytest.raises(GitHubApiError) as info:
        c.issue(1)
    assert info.value.status is None and "timed out" in str(info.value)


def test_errors_are_mapped_onto_the_chimera_tree(env: tuple[GitHubFake, FakeRepo]) -> None:
    fake, _ = env
    c = client(fake)
    with pytest.raises(GitHubNotFound) as nf:
        c.issue(99)
    assert nf.value.status == 404 and "issue #99" in str(nf.value)
    reader = client(fake, login="mallory")
    with pytest.raises(GitHubPermissionDenied) as denied:
        reader.add_labels(1, "x")
    assert denied.value.status == 403
    fake.inject(FakeFault(method="GET", path=r"/issues/1$", status=500, times=4))
    with pytest.raises(GitHubApiError) as exhausted:
        c.issue(1)
    assert exhausted.value.status == 500 and len(c.waits) == 3
    assert all(isinstance(e, GitHubError) for e in (nf.value, denied.value, exhausted.value))


def test_lost_reply_on_create_pull_never_duplicates(env: tuple[GitHubFake, FakeRepo]) -> None:
    fake, repo = env
    c = client(fake)
    # The PR is created, but the reply is lost (a 500 after the write).
    fake.inject(FakeFault(method="POST", path=r"/pulls$", status=500, after_write=True))
    pull, created = c.create_pull(
        title="t", body="b", head="chimera/issue-1", base="main", draft=False
    )
    assert created and len(repo.open_pulls()) == 1
    assert len(fake.calls_to("POST", r"/pulls$")) == 1  # found, not re-sent
    # A re-run asks again: the existing PR is returned, nothing is created.
    again, created_again = c.create_pull(
        title="t2", body="b", head="chimera/issue-1", base="main", draft=False
    )
    assert (again.number, created_again) == (pull.number, False)
    assert len(repo.open_pulls()) == 1


def test_422_already_exists_resolves_to_the_existing_pull(
    env: tuple[GitHubFake, FakeRepo],
) -> None:
    fake, repo = env
    c = client(fake)
    pull, _ = c.create_pull(title="t", body="b", head="chimera/issue-1", base="main", draft=False)
    # A second POST (another runner that missed the pre-check) meets GitHub's 422.
    with pytest.raises(GitHubApiError) as info:
        c._call(
            "raw create",
            lambda: c._repo.create_pull(base="main", head="chimera/issue-1", title="x", body="y"),
        )
    assert info.value.status == 422 and "already exists" in str(info.value)
    assert len(repo.open_pulls()) == 1 and repo.open_pulls()[0]["number"] == pull.number


def test_comment_with_marker_is_posted_once_even_after_a_lost_reply(
    env: tuple[GitHubFake, FakeRepo],
) -> None:
    fake, repo = env
    c = client(fake)
    fake.inject(FakeFault(method="POST", path=r"/comments$", status=502, after_write=True))
    first = c.comment(1, "done <!-- k1 -->", marker="<!-- k1 -->")
    second = c.comment(1, "done <!-- k1 -->", marker="<!-- k1 -->")
    assert first == second
    assert len(repo.issue_comments(1)) == 1


def test_dispatch_is_not_blindly_resent_after_a_500(env: tuple[GitHubFake, FakeRepo]) -> None:
    fake, repo = env
    c = client(fake)
    fake.inject(FakeFault(method="POST", path=r"/dispatches$", status=500, after_write=True))
    with pytest.raises(GitHubApiError):
        c.dispatch_workflow("chimera-fix.yml", "main", {"issue-number": "1", "labeller": "alice"})
    assert len(repo.dispatches) == 1  # reported, not sent twice
    fake.inject(FakeFault(method="POST", path=r"/dispatches$", status=429, retry_after=1))
    c.dispatch_workflow("chimera-fix.yml", "main", {"issue-number": "2", "labeller": "alice"})
    assert [d["inputs"]["issue-number"] for d in repo.dispatches] == ["1", "2"]


def test_artifact_download_round_trip_and_path_escape(
    env: tuple[GitHubFake, FakeRepo], tmp_path: Path
) -> None:
    fake, repo = env
    c = client(fake)
    src = tmp_path / "src"
    (src / "run").mkdir(parents=True)
    (src / "run" / "state.json").write_text('{"run_id": "r1"}')
    fake.add_artifact("octo/app", 42, "chimera-run", src)
    out = c.download_artifact(42, "chimera-run", tmp_path / "dl")
    assert (out / "run" / "state.json").read_text() == '{"run_id": "r1"}'
    with pytest.raises(GitHubNotFound):
        c.download_artifact(42, "other", tmp_path / "dl2")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../escape.txt", "x")
    repo.artifacts[43] = [
        {"id": 9999, "name": "evil", "data": buf.getvalue(), "created_at": "2026-01-01T00:00:00Z"}
    ]
    with pytest.raises(GitHubError, match="outside its folder"):
        c.download_artifact(43, "evil", tmp_path / "dl3")
    assert not (tmp_path / "escape.txt").exists()


def test_graphql_auto_merge_merge_queue_and_ready(env: tuple[GitHubFake, FakeRepo]) -> None:
    fake, repo = env
    c = client(fake)
    pull, _ = c.create_pull(title="t", body="b", head="chimera/issue-1", base="main", draft=True)
    c.mark_ready(pull)
    pull = c.pull(pull.number)
    assert not pull.draft
    c.enable_auto_merge(pull)
    assert c.pull(pull.number).auto_merge
    assert not c.requires_merge_queue("main") and not c.in_merge_queue(pull)
    repo.rules["main"] = [{"type": "merge_queue", "parameters": {}}]
    assert c.requires_merge_queue("main")
    c.enqueue(pull)
    assert c.in_merge_queue(pull)
    assert repo.merge_attempts == []
    assert c.whoami() == "chimera-bot"
    app = client(fake, login="chimera-app[bot]")
    assert app.whoami() is None  # installation tokens cannot read /user
