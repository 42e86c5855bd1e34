"""``chimera action``: --dry-run offline, and the decide/drain modes against the fake."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chimera.cli import main
from chimera.testing.github_fake import FakeRepo, GitHubFake, push_branch


def event_file(tmp_path: Path, payload: dict[str, Any], name: str = "event.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(payload))
    return path


@pytest.fixture
def gh_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., Path]:
    """Set the Actions environment; returns the GITHUB_OUTPUT file."""

    def setup(event: str, path: Path, **extra: str) -> Path:
        out = tmp_path / f"output-{event}.txt"
        out.write_text("")
        env = {
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(path),
            "GITHUB_REPOSITORY": "octo/app",
            "GITHUB_OUTPUT": str(out),
            "GITHUB_RUN_ID": "55",
            "CHIMERA_BOT_LOGIN": "chimera-bot",
            "CHIMERA_GITHUB_THROTTLE": "0",
            "CHIMERA_GITHUB_BACKOFF": "0.01",
            **extra,
        }
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        return out

    return setup


def outputs(path: Path) -> dict[str, str]:
    lines = path.read_text().splitlines()
    result: dict[str, str] = {}
    i = 0
    while i < len(lines):
        key, _, delim = lines[i].partition("<<")
        result[key] = lines[i + 1] if lines[i + 1] != delim else ""
        i += 3 if lines[i + 1] != delim else 2
    return result


def labeled(
    webhook: Callable[[str], dict[str, Any]], sender: str, issue: int = 1, sender_type: str = "User"
) -> dict[str, Any]:
    payload = webhook("issues.labeled")
    payload["label"]["name"] = "chimera"
    payload["sender"]["login"] = sender
    payload["sender"]["type"] = sender_type
    payload["issue"]["number"] = issue
    payload["repository"]["full_name"] = "octo/app"
    return payload


def test_dry_run_is_offline_and_prints_one_json_object(
    tmp_path: Path,
    gh_env: Callable[..., Path],
    webhook: Callable[[str], dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gh_env(
        "issues",
        event_file(tmp_path, labeled(webhook, "alice")),
        GITHUB_API_URL="http://127.0.0.1:9",
    )  # nothing listens there: no request is made
    monkeypatch.delenv("CHIMERA_GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    assert main(["action", "--mode", "agent", "--dry-run"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    decision = json.loads(out[0])
    assert decision["action"] == "run" and decision["dry_run"] and decision["actor"] == "alice"
    assert {c["name"] for c in decision["checks"]} >= {"permission", "queue_slot"}


def test_bad_event_input_is_a_one_line_usage_error(
    tmp_path: Path, gh_env: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    gh_env("issues", bad)
    assert main(["action", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not JSON" in err[0]


def test_decide_admits_then_queues_and_explains_refusals(
    tmp_path: Path,
    gh_env: Callable[..., Path],
    fake: GitHubFake,
    repo: FakeRepo,
    webhook: Callable[[str], dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for n in range(3):
        fake.add_issue("octo/app", title=f"T{n}", body="b", user="alice", labels=("chimera",))
    token = fake.add_token("chimera-bot")
    fake.add_workflow_run("octo/app", 55)  # the run these jobs run in (it holds the slot)
    common = {
        "CHIMERA_GITHUB_TOKEN": token,
        "GITHUB_API_URL": fake.api_url,
        "CHIMERA_MAX_OPEN_PRS": "1",
        "CHIMERA_BASE_REF": "main",  # the example payload's repository says "master"
    }
    out = gh_env("issues", event_file(tmp_path, labeled(webhook, "alice", 1)), **common)
    assert main(["action", "--mode", "decide"]) == 0
    assert outputs(out)["proceed"] == "true" and outputs(out)["status"] == "running"
    out = gh_env("issues", event_file(tmp_path, labeled(webhook, "bob", 2), "e2.json"), **common)
    assert main(["action", "--mode", "decide"]) == 0
    assert outputs(out)["proceed"] == "false" and outputs(out)["status"] == "queued"
    assert "chimera:queued" in repo.issues[2]["labels"]
    # A read-only labeller: nothing happens but a comment that says why.
    out = gh_env(
        "issues", event_file(tmp_path, labeled(webhook, "mallory", 3), "e3.json"), **common
    )
    assert main(["action", "--mode", "decide"]) == 0
    assert outputs(out)["proceed"] == "false" and outputs(out)["status"] == "refused"
    (comment,) = repo.issue_comments(3)
    assert "'read' role" in comment["body"] and "Not started" in comment["body"]
    assert repo.issues[3]["labels"] == ["chimera"]
    capsys.readouterr()
    # Drain with the slot still taken starts nothing; after release it starts #2.
    drain_event = event_file(
        tmp_path, {"schedule": "*/15 * * * *", "repository": {"full_name": "octo/app"}}, "s.json"
    )
    gh_env("schedule", drain_event, **common)
    assert main(["action", "--mode", "drain"]) == 0
    assert repo.dispatches == []
    # Run 55 ends without an outcome: the drain's heal releases its claim, then starts #2.
    repo.workflow_runs[55].update(status="completed", conclusion="failure")
    assert main(["action", "--mode", "drain"]) == 0
    assert "chimera:running" not in repo.issues[1]["labels"]
    (sent,) = [d["inputs"] for d in repo.dispatches]
    assert re.fullmatch(r"[0-9a-f]{16}", sent.pop("claim"))  # the claim only its run takes
    assert sent == {"issue-number": "2", "labeller": "bob"}
    assert repo.dispatches[0]["workflow"] == "chimera.yml"


def _paused_pr(fake: GitHubFake, repo: FakeRepo, work: tuple[Path, Path]) -> int:
    from chimera.github.trust.summary import render_marker

    push_branch(work[1], "chimera/issue-1", {"m.sql": "create table t();\n"}, message="m")
    marker = render_marker(
        "pr",
        {
            "issue": 1,
            "status": "awaiting_approval",
            "run_id": "r",
            "started_by": "alice",
            "workflow_run": "1",
        },
    )
    from chimera.github.client.client import GitHubClient

    client = GitHubClient(
        "octo/app", fake.add_token("chimera-bot"), api_url=fake.api_url, throttle=False
    )
    pull, _ = client.create_pull(
        title="t", body=marker, head="chimera/issue-1", base="main", draft=True
    )
    return pull.number


def test_a_person_removing_the_label_cancels_paused_and_queued_work(
    tmp_path: Path,
    gh_env: Callable[..., Path],
    fake: GitHubFake,
    repo: FakeRepo,
    work: tuple[Path, Path],
    webhook: Callable[[str], dict[str, Any]],
) -> None:
    fake.add_issue(
        "octo/app", title="T", body="b", user="alice", labels=("chimera:awaiting-approval",)
    )
    number = _paused_pr(fake, repo, work)
    removed = webhook("issues.unlabeled")
    removed["label"]["name"] = "chimera"
    removed["sender"]["login"] = "alice"
    removed["repository"]["full_name"] = "octo/app"
    common = {"CHIMERA_GITHUB_TOKEN": fake.add_token("chimera-bot"), "GITHUB_API_URL": fake.api_url}
    gh_env("issues", event_file(tmp_path, removed), **common)
    assert main(["action", "--mode", "drain"]) == 0
    assert repo.issues[number]["state"] == "closed"
    assert repo.issues[1]["labels"] == []
    (comment,) = [c["body"] for c in repo.issue_comments(1)]
    assert "Cancelled" in comment and f"paused draft PR #{number}" in comment
    # Queued work is cancelled the same way, and said once.
    fake.add_issue("octo/app", title="T2", body="b", user="alice", labels=("chimera:queued",))
    removed["issue"]["number"] = 3
    gh_env("issues", event_file(tmp_path, removed, "e2.json"), **common)
    assert main(["action", "--mode", "drain"]) == 0
    assert repo.issues[3]["labels"] == []
    assert "its place in the queue" in repo.issue_comments(3)[0]["body"]


def test_closing_a_chimera_pr_without_merging_cancels_and_says_so(
    tmp_path: Path,
    gh_env: Callable[..., Path],
    fake: GitHubFake,
    repo: FakeRepo,
    work: tuple[Path, Path],
    webhook: Callable[[str], dict[str, Any]],
) -> None:
    fake.add_issue("octo/app", title="T", body="b", user="alice", labels=("chimera:pr-open",))
    number = _paused_pr(fake, repo, work)
    closed = webhook("pull_request.closed")
    closed["pull_request"]["head"]["ref"] = "chimera/issue-1"
    closed["pull_request"]["number"] = number
    closed["sender"]["login"] = "bob"
    closed["repository"]["full_name"] = "octo/app"
    gh_env(
        "pull_request",
        event_file(tmp_path, closed),
        CHIMERA_GITHUB_TOKEN=fake.add_token("chimera-bot"),
        GITHUB_API_URL=fake.api_url,
    )
    assert main(["action", "--mode", "drain"]) == 0
    (comment,) = [c["body"] for c in repo.issue_comments(1)]
    assert "closed without merging by `bob`" in comment and "Add the label again" in comment
    assert repo.issues[1]["labels"] == []


def test_check_mode_annotates_red_requirements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "s.yaml").write_text(
        "requirements:\n  - id: readme\n    contains: {path: README.md, pattern: 'pip install'}\n"
    )
    (tmp_path / "README.md").write_text("# nothing\n")
    monkeypatch.setenv("CHIMERA_SPEC_PATH", "specs/")
    assert main(["action", "--mode", "check", "--root", str(tmp_path)]) == 1
    assert "::error" in capsys.readouterr().out
    (tmp_path / "README.md").write_text("pip install it\n")
    assert main(["action", "--mode", "check", "--root", str(tmp_path)]) == 0


def test_the_action_set_up_lists_every_label() -> None:
    from chimera.github.queue.queue import LABEL_DEFINITIONS

    page = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "action.md"
    section = page.read_text(encoding="utf-8")
    for name, color, _ in LABEL_DEFINITIONS:
        assert f"gh label create {name} --color {color}" in section, name
