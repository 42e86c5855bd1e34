"""Git over smart HTTP against the GitHub fake: who pushed, and whether it starts workflows.

A workflow pushes with a token as the Basic-auth password; a GITHUB_TOKEN push starts no
workflow (not even ``pull_request`` ``synchronize`` on an open PR), an App's push does.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from chimera.testing.github_fake import (
    ACTIONS_LOGIN,
    FakeRepo,
    GitHubFake,
    TokenKind,
    make_bare_remote,
)

_ENV = os.environ | {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
_IDENT = ["-c", "user.name=Bot", "-c", "user.email=bot@example.invalid"]


@dataclass
class World:
    tmp: Path
    fake: GitHubFake
    repo: FakeRepo


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    remote, _work = make_bare_remote(tmp_path)
    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=remote)
        yield World(tmp_path, fake, repo)


def git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=_ENV, capture_output=True, text=True, timeout=30, check=False
    )


def clone_and_commit(world: World, name: str, token: str | None = None) -> Path:
    dest = world.tmp / name
    done = git("clone", "-q", world.fake.clone_url("octo/app", token), str(dest))
    assert done.returncode == 0, done.stderr
    (dest / f"{name}.txt").write_text(name + "\n")
    git("add", "-A", cwd=dest)
    assert git(*_IDENT, "commit", "-q", "-m", name, cwd=dest).returncode == 0
    return dest


def test_an_anonymous_clone_works_and_an_anonymous_push_is_refused(world: World) -> None:
    work = clone_and_commit(world, "anon")
    assert (work / "README.md").read_text() == "# demo\n"
    pushed = git("push", "-q", "origin", "HEAD:refs/heads/feature", cwd=work)
    assert pushed.returncode != 0
    assert world.repo.head_sha("feature") is None and world.fake.events == []


def test_a_github_token_push_is_recorded_and_starts_no_workflow(world: World) -> None:
    token = world.fake.add_workflow_token("octo/app")
    work = clone_and_commit(world, "wf", token)
    pushed = git("push", "-q", "origin", "HEAD:refs/heads/chimera/issue-1", cwd=work)
    assert pushed.returncode == 0, pushed.stderr
    sha = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    assert world.repo.head_sha("chimera/issue-1") == sha
    (push,) = world.fake.events
    assert (push.event, push.ref, push.sha, push.actor, push.kind) == (
        "push",
        "refs/heads/chimera/issue-1",
        sha,
        ACTIONS_LOGIN,
        TokenKind.WORKFLOW,
    )
    assert world.fake.triggered_events == []
    (write,) = world.fake.writes("octo/app")
    assert write.path.endswith("/git-receive-pack") and write.kind is TokenKind.WORKFLOW


def test_an_app_push_to_an_open_pull_request_starts_push_and_synchronize(world: World) -> None:
    app = world.fake.add_app_token("chimera-app", repos=("octo/app",))
    work = clone_and_commit(world, "one", app)
    assert git("push", "-q", "origin", "HEAD:refs/heads/topic", cwd=work).returncode == 0
    repo = world.fake.pygithub(app).get_repo("octo/app")
    repo.create_pull(base="main", head="topic", title="t", body="b")
    (work / "two.txt").write_text("2\n")
    git("add", "-A", cwd=work)
    git(*_IDENT, "commit", "-q", "-m", "two", cwd=work)
    # A tiny post buffer makes git send the pack chunked, as it does for large pushes.
    chunked = git(
        "-c", "http.postBuffer=64", "push", "-q", "origin", "HEAD:refs/heads/topic", cwd=work
    )
    assert chunked.returncode == 0, chunked.stderr
    sha = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    triggered = [(e.event, e.action, e.number, e.sha) for e in world.fake.triggered_events]
    assert triggered[-2:] == [("push", None, None, sha), ("pull_request", "synchronize", 1, sha)]
    assert [e.action for e in world.fake.triggered_events if e.event == "pull_request"] == [
        "opened",
        "synchronize",
    ]
    assert all(e.actor == "chimera-app[bot]" for e in world.fake.triggered_events)


def test_a_push_needs_contents_write(world: World) -> None:
    reader = world.fake.add_workflow_token("octo/app", permissions={"contents": "read"})
    work = clone_and_commit(world, "ro", reader)
    pushed = git("push", "-q", "origin", "HEAD:refs/heads/nope", cwd=work)
    assert pushed.returncode != 0 and "403" in pushed.stderr
    assert world.repo.head_sha("nope") is None
    world.fake.add_user("mallory")
    outsider = world.fake.add_token("mallory")
    work = clone_and_commit(world, "out", outsider)
    assert git("push", "-q", "origin", "HEAD:refs/heads/nope", cwd=work).returncode != 0
    assert world.fake.events == []
