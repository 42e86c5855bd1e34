"""``chimera doctor`` against the GitHub fake: a correct set-up passes, each planted mistake is
reported with its fix, what the token may not see is said, and errors are one line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.github.queue.queue import LABEL_DEFINITIONS
from chimera.testing.github_fake import FakeRepo, GitHubFake, make_bare_remote

SHA = "0123456789abcdef0123456789abcdef01234567"
CALLER = """\
name: Chimera
on:
  issues:
    types: [labeled]
  pull_request_review:
    types: [submitted]
permissions: {{}}
jobs:
  chimera:
    uses: chimera-dev/chimera/.github/workflows/chimera.yml@{ref}  # v0.2.0
    permissions:
      contents: write
      issues: write
      pull-requests: write
      actions: write
      checks: write
    secrets:
      app-id: ${{{{ secrets.CHIMERA_APP_ID }}}}
      app-private-key: ${{{{ secrets.CHIMERA_APP_PRIVATE_KEY }}}}
      llm-api-key: ${{{{ secrets.ANTHROPIC_API_KEY }}}}
"""
TIER = (
    "on: {issues: {types: [labeled]}}\n"
    "jobs:\n"
    "  chimera:\n"
    f"    uses: chimera-dev/chimera/.github/workflows/chimera.yml@{SHA}\n"
    "    secrets:\n"
    "      llm-api-key: ${{ secrets.ANTHROPIC_API_KEY }}\n"
)
APP_PERMISSIONS = {"contents": "write", "issues": "write", "pull_requests": "write",
                   "actions": "write", "metadata": "read"}  # fmt: skip
Arrange = Callable[..., tuple[GitHubFake, FakeRepo]]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Arrange]:
    """A repository set up correctly, then spoiled as a test asks; GITHUB_TOKEN is the
    owner's token."""
    servers: list[GitHubFake] = []

    def arrange(caller: str = CALLER.format(ref=SHA)) -> tuple[GitHubFake, FakeRepo]:
        remote, _ = make_bare_remote(
            tmp_path / f"r{len(servers)}",
            {".github/workflows/chimera.yml": caller, "README.md": "x\n",
             ".github/workflows/notes.txt": "not a workflow"},
        )  # fmt: skip
        fake = GitHubFake()
        fake.rejects_unknown_tokens = True  # GitHub's 401 "Bad credentials"
        fake.start()
        servers.append(fake)
        repo = fake.add_repo("octo/app", remote=remote)
        for name, color, description in LABEL_DEFINITIONS:
            repo.labels[name] = {"id": fake.new_id(), "name": name, "color": color,
                                 "description": description}  # fmt: skip
        repo.allow_actions_pull_requests = True
        for name in ("CHIMERA_APP_ID", "CHIMERA_APP_PRIVATE_KEY"):
            repo.secrets[name] = "2026-01-01T00:00:00Z"
        repo.org_secrets["ANTHROPIC_API_KEY"] = "2026-01-01T00:00:00Z"
        repo.protect("main", checks=("chimera / spec",))
        fake.add_app("my-chimera", "unused", repos=("octo/app",), permissions=APP_PERMISSIONS)
        monkeypatch.setenv("GITHUB_TOKEN", fake.add_token("octo"))
        monkeypatch.setenv("GITHUB_API_URL", fake.api_url)
        monkeypatch.setenv("CHIMERA_GITHUB_THROTTLE", "0")
        monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
        return fake, repo

    yield arrange
    for fake in servers:
        fake.stop()


def doctor(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, str]]:
    status = main(["doctor", "--repo", "octo/app", *extra])
    out = capsys.readouterr().out.splitlines()
    lines = {}
    for line in out[1:-1]:
        mark, _, rest = line.partition(" ")
        name, _, text = rest.partition(": ")
        lines[name] = f"{mark} {text}"
    return status, lines


def test_a_correct_set_up_passes(world: Arrange, capsys: pytest.CaptureFixture[str]) -> None:
    fake, _ = world()
    status, lines = doctor(capsys)
    assert status == 0, lines
    assert set(lines) == {"caller", "labels", "pr-setting", "secrets", "protection", "app"}
    assert all(line.startswith("✔") for line in lines.values()), lines
    assert "my-chimera" in lines["app"] and "chimera / spec" in lines["protection"]
    assert "ANTHROPIC_API_KEY" in lines["secrets"]  # an organization's secret counts
    assert not [c for c in fake.calls if c.method != "GET"]  # checking writes nothing
    assert not fake.internal_errors


@pytest.mark.parametrize(
    ("spoil", "check", "says", "fix"),
    [
        (lambda r: r.labels.pop("chimera"), "labels", "trigger label chimera is missing",
         "chimera doctor --fix"),
        (lambda r: setattr(r, "allow_actions_pull_requests", False), "pr-setting",
         "is off", "Allow GitHub Actions to create and approve pull requests"),
        (lambda r: r.protection.clear(), "protection", "no branch protection or ruleset",
         "require the status check"),
        (lambda r: r.protect("main", checks=("lint",)), "protection",
         "does not require the Spec check (required: lint)", "Settings → Branches"),
        (lambda r: r.secrets.pop("CHIMERA_APP_PRIVATE_KEY"), "secrets",
         "missing secret(s): CHIMERA_APP_PRIVATE_KEY", "gh secret set CHIMERA_APP_PRIVATE_KEY"),
    ],
)  # fmt: skip
def test_each_planted_mistake_is_reported_with_its_fix(
    world: Arrange,
    capsys: pytest.CaptureFixture[str],
    spoil: Callable[[FakeRepo], object],
    check: str,
    says: str,
    fix: str,
) -> None:
    _, repo = world()
    spoil(repo)
    status, lines = doctor(capsys)
    assert status == 1
    assert lines[check].startswith("✘") and says in lines[check] and fix in lines[check]
    assert [n for n, line in lines.items() if line.startswith("✘")] == [check]


@pytest.mark.parametrize(
    ("ref", "kind"), [("v0.2.0", "tag or branch"), ("main", "tag or branch"), (SHA[:12], "short")]
)
def test_an_unpinned_caller_fails(
    world: Arrange, capsys: pytest.CaptureFixture[str], ref: str, kind: str
) -> None:
    world(CALLER.format(ref=ref))
    status, lines = doctor(capsys)
    assert status == 1 and lines["caller"].startswith("✘")
    assert f"@{ref}" in lines["caller"] and kind in lines["caller"]
    assert "40-hex commit SHA" in lines["caller"]


def test_no_caller_fails_and_names_init(world: Arrange, capsys: pytest.CaptureFixture[str]) -> None:
    world("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: [{run: pytest}]\n")
    status, lines = doctor(capsys)
    assert status == 1 and lines["caller"].startswith("✘")
    assert "chimera init --github" in lines["caller"]


def test_fix_creates_the_labels_once(world: Arrange, capsys: pytest.CaptureFixture[str]) -> None:
    fake, repo = world()
    repo.labels.clear()
    status, lines = doctor(capsys, "--fix")
    assert status == 0 and lines["labels"].startswith("✔")
    for name, color, description in LABEL_DEFINITIONS:
        assert (repo.labels[name]["color"], repo.labels[name]["description"]) == (
            color,
            description,
        )
    writes = len(fake.writes("octo/app"))
    assert writes == len(LABEL_DEFINITIONS)
    assert doctor(capsys, "--fix")[0] == 0
    assert len(fake.writes("octo/app")) == writes  # idempotent: nothing written again


def test_json_is_one_object(world: Arrange, capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = world()
    repo.allow_actions_pull_requests = False
    assert main(["doctor", "--repo", "octo/app", "--json"]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    data = json.loads(line)
    assert data["ok"] is False and data["repository"] == "octo/app"
    by_name = {c["name"]: c for c in data["checks"]}
    assert by_name["pr-setting"]["status"] == "fail" and by_name["pr-setting"]["fix"]
    assert by_name["caller"]["status"] == "ok"


def test_what_a_writers_token_cannot_see_is_said_not_failed(
    world: Arrange, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, repo = world()
    repo.collaborators["alice"] = "write"
    monkeypatch.setenv("GITHUB_TOKEN", fake.add_token("alice"))
    status, lines = doctor(capsys)
    assert status == 0, lines
    for check in ("pr-setting", "protection", "app"):
        assert lines[check].startswith("?") and "could not check" in lines[check], check
    assert "admin" in lines["pr-setting"]


def test_an_installation_token_cannot_list_secrets_or_apps(
    world: Arrange, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, _ = world()
    token = fake.add_app_token("my-chimera", repos=("octo/app",),
                               permissions={"issues": "write", "contents": "read"})  # fmt: skip
    monkeypatch.setenv("GITHUB_TOKEN", token)
    status, lines = doctor(capsys)
    assert status == 0, lines
    assert lines["secrets"].startswith("?") and "CHIMERA_APP_ID" in lines["secrets"]
    assert lines["app"].startswith("?")


def test_the_app_missing_or_short_of_permissions_fails(
    world: Arrange, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, _ = world()
    fake.apps.clear()
    status, lines = doctor(capsys)
    assert status == 1 and lines["app"].startswith("✘") and "no GitHub App" in lines["app"]
    fake.add_app("my-chimera", "unused", repos=("octo/app",),
                 permissions={"contents": "read", "issues": "write"})  # fmt: skip
    status, lines = doctor(capsys)
    assert (
        status == 1
        and "lacks contents: write, pull_requests: write, actions: write" in lines["app"]
    )
    status, lines = doctor(capsys, "--app", "other-app")
    assert status == 1 and "the App other-app is installed" in lines["app"]


def test_the_github_token_tier_has_no_app_to_check(
    world: Arrange, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, _ = world(TIER)
    fake.apps.clear()
    status, lines = doctor(capsys)
    assert status == 0, lines
    assert lines["app"].startswith("?") and "GITHUB_TOKEN-only tier" in lines["app"]


def test_errors_are_one_line(
    world: Arrange, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    world()
    cases = [
        (["--repo", "octo/nothing"], "no repository octo/nothing"),
        (["--repo", "octo/app", "--token", "bad-token"], "token was refused"),
        (["--repo", "not a repo"], "expected OWNER/NAME"),
        (["--repo", "octo/app", "--api-url", "http://127.0.0.1:9"], "chimera doctor: GitHub"),
    ]
    for argv, says in cases:
        assert main(["doctor", *argv]) == 2, argv
        captured = capsys.readouterr()
        assert captured.out == "" and len(captured.err.splitlines()) == 1, captured.err
        assert says in captured.err and "Traceback" not in captured.err
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.delenv("GH_TOKEN", raising=False)
    assert main(["doctor", "--repo", "octo/app"]) == 2
    assert "no token" in capsys.readouterr().err


def test_fix_with_a_token_that_may_not_says_so(
    world: Arrange, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, repo = world()
    repo.labels.clear()
    fake.add_user("reader")
    repo.collaborators["reader"] = "read"
    monkeypatch.setenv("GITHUB_TOKEN", fake.add_token("reader"))
    status, lines = doctor(capsys, "--fix")
    assert status == 1 and lines["labels"].startswith("✘")
    assert "may not create the labels chimera, chimera:queued" in lines["labels"]
    assert not repo.labels


def test_an_organizations_app_is_found_by_its_owner(
    world: Arrange, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, repo = world()
    fake.users["octo"]["type"] = "Organization"
    fake.add_user("boss")
    repo.collaborators["boss"] = "admin"
    monkeypatch.setenv("GITHUB_TOKEN", fake.add_token("boss"))
    status, lines = doctor(capsys)
    assert status == 0 and lines["app"].startswith("✔"), lines
    assert fake.calls_to("GET", r"^/orgs/octo/installations$")
    repo.collaborators["boss"] = "write"  # no owner of the organization: GitHub's 403
    status, lines = doctor(capsys)
    assert lines["app"].startswith("?") and "an organization owner" in lines["app"]
