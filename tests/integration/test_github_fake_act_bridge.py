"""What the GitHub fake serves for the act harness, driven by real clients.

* git smart HTTP at ``<origin>/<owner>/<repo>`` (the URL actions/checkout builds), with the
  token as git's ``AUTHORIZATION: basic`` extra header, as the checkout leaves it for a push;
* the App-token endpoints: the App's JWT (RS256, its key, its id) finds the installation and
  mints a token narrowed to what was asked; anything else is GitHub's 401 or 422;
* an attached artifact folder (act's layout) listed and downloaded through the REST API;
* each write's webhook payload, recorded when it happened, and a fault's ``before`` hook.
"""

from __future__ import annotations

import base64
import io
import subprocess
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import github
import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from chimera.testing.github_fake import (
    FakeFault,
    FakeRepo,
    GitHubFake,
    TokenKind,
    make_bare_remote,
)
from chimera.testing.github_fake.apps import FakeApp


@dataclass
class World:
    tmp: Path
    fake: GitHubFake
    repo: FakeRepo
    app: FakeApp
    key: rsa.RSAPrivateKey


def _keys() -> tuple[rsa.RSAPrivateKey, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return key, public.decode()


@pytest.fixture(scope="module")
def app_key() -> tuple[rsa.RSAPrivateKey, str]:
    return _keys()


@pytest.fixture
def world(tmp_path: Path, app_key: tuple[rsa.RSAPrivateKey, str]) -> Iterator[World]:
    remote, _work = make_bare_remote(tmp_path / "origin")
    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=remote)
        fake.add_user("alice")
        repo.collaborators["alice"] = "write"
        app = fake.add_app(
            "my-app",
            app_key[1],
            repos=("octo/app",),
            permissions={"contents": "write", "pull_requests": "write", "metadata": "read"},
        )
        yield World(tmp_path, fake, repo, app, app_key[0])


def app_jwt(world: World, *, key: rsa.RSAPrivateKey | None = None, iss: object = None) -> str:
    now = int(time.time())
    claims = {
        "iat": now - 30,
        "exp": now + 540,
        "iss": str(world.app.app_id) if iss is None else iss,
    }
    return jwt.encode(claims, key or world.key, algorithm="RS256")


def call(world: World, method: str, path: str, auth: str, **body: Any) -> requests.Response:
    payload: dict[str, Any] | None = body or None
    return requests.request(
        method, world.fake.api_url + path, headers={"authorization": auth}, json=payload,
        timeout=10,
    )  # fmt: skip


def test_an_apps_jwt_finds_the_installation_and_mints_a_narrowed_token(world: World) -> None:
    bearer = f"bearer {app_jwt(world)}"
    found = call(world, "GET", "/repos/octo/app/installation", bearer)
    assert found.status_code == 200
    assert (found.json()["id"], found.json()["app_slug"]) == (world.app.installation_id, "my-app")
    minted = call(
        world, "POST", f"/app/installations/{world.app.installation_id}/access_tokens", bearer,
        repositories=["app"], permissions={"contents": "write"},
    )  # fmt: skip
    assert minted.status_code == 201
    token = minted.json()["token"]
    who = world.fake.identities[token]
    assert (who.login, who.kind, who.repo) == ("my-app[bot]", TokenKind.APP, "octo/app")
    assert who.allows("contents") and not who.allows("pull-requests")
    # The token works as the App's, and is revoked by DELETE /installation/token.
    assert call(world, "GET", "/repos/octo/app", f"token {token}").status_code == 200
    assert call(world, "DELETE", "/installation/token", f"token {token}").status_code == 204
    assert token not in world.fake.identities


def test_anything_but_the_apps_own_jwt_is_refused(world: World) -> None:
    path = "/repos/octo/app/installation"
    person = world.fake.add_token("alice")
    other_key, _ = _keys()
    assert call(world, "GET", path, f"token {person}").status_code == 401
    assert call(world, "GET", path, f"bearer {app_jwt(world, key=other_key)}").status_code == 401
    assert call(world, "GET", path, f"bearer {app_jwt(world, iss='999')}").status_code == 401
    assert call(world, "GET", "/app", f"token {person}").status_code == 401
    assert call(world, "GET", "/app", f"bearer {app_jwt(world)}").json()["slug"] == "my-app"
    grab = call(
        world, "POST", f"/app/installations/{world.app.installation_id}/access_tokens",
        f"bearer {app_jwt(world)}", permissions={"administration": "write"},
    )  # fmt: skip
    assert grab.status_code == 422


def test_checkouts_url_and_extra_header_fetch_and_push(world: World) -> None:
    token = world.fake.add_workflow_token("octo/app")
    dest = world.tmp / "checkout"
    dest.mkdir()
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    origin = f"http://127.0.0.1:{world.fake.port}"

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=dest, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q")
    git("remote", "add", "origin", f"{origin}/octo/app")
    git("config", "--local", f"http.{origin}/.extraheader", f"AUTHORIZATION: basic {basic}")
    main = world.repo.head_sha("main")
    assert main is not None
    git("-c", "protocol.version=2", "fetch", "--depth=1", "origin", main)
    git("checkout", "-q", main)
    assert (dest / "README.md").read_text() == "# demo\n"
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x")
    git("push", "-q", "origin", "HEAD:refs/heads/chimera/issue-1")
    (push,) = world.fake.events
    assert (push.event, push.ref, push.kind, push.before) == (
        "push", "refs/heads/chimera/issue-1", TokenKind.WORKFLOW, "0" * 40,
    )  # fmt: skip
    assert push.payload is not None and push.payload["after"] == git("rev-parse", "HEAD")


def test_an_attached_artifact_folder_is_listed_and_served_through_rest(world: World) -> None:
    store = world.tmp / "artifacts"
    world.repo.artifact_store = store
    folder = store / "4001" / "chimera-run-attempt-1"
    folder.mkdir(parents=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("patch.diff", "diff --git a/x b/x\n")
    (folder / "chimera-run-attempt-1.zip").write_bytes(buf.getvalue())
    world.fake.add_workflow_run("octo/app", 4001, status="completed", conclusion="success")
    gh = world.fake.pygithub(world.fake.add_token("alice"))
    (art,) = gh.get_repo("octo/app").get_workflow_run(4001).get_artifacts()
    assert art.name == "chimera-run-attempt-1"
    zipped = call(world, "GET", f"/repos/octo/app/actions/artifacts/{art.id}/zip",
                  f"token {world.fake.add_token('alice')}")  # fmt: skip
    assert zipped.content == buf.getvalue()
    # A run's artifact names stay unique across both sources (GitHub's 409).
    with pytest.raises(Exception, match="Conflict"):
        world.fake.add_artifact("octo/app", 4001, "chimera-run-attempt-1", world.tmp)
    assert isinstance(gh, github.Github)


def test_each_write_keeps_its_webhook_payload_and_a_fault_can_act_before_a_reply(
    world: World,
) -> None:
    seen: list[int] = []
    world.fake.inject(
        FakeFault(method="POST", path=r"/labels$", status=None, before=lambda: seen.append(1))
    )
    world.fake.add_issue("octo/app", title="t", user="alice")
    gh = world.fake.pygithub(world.fake.add_token("alice")).get_repo("octo/app")
    issue = gh.get_issue(1)
    issue.add_to_labels("chimera")
    issue.create_comment("@chimera stop")
    labeled, commented = world.fake.events
    assert seen == [1]
    assert labeled.payload is not None and commented.payload is not None
    assert labeled.payload["label"]["name"] == "chimera"
    assert labeled.payload["issue"]["labels"][0]["name"] == "chimera"
    assert labeled.payload["sender"]["login"] == "alice" and labeled.payload["action"] == "labeled"
    assert commented.payload["comment"]["body"] == "@chimera stop"
    assert commented.payload["issue"]["number"] == 1
