"""The GitHub tick adapter: a real journal branch (local bare remote, signed commits), a
recording GitHub double that keeps issues and comments, and an injected clock."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chimera.errors import UsageError
from chimera.github.action.context import ActionContext, GitHubAccess
from chimera.github.client.client import IssueInfo
from chimera.github.client.tickapi import CheckRunSeen
from chimera.github.jobs.tick import LABEL, run_tick, tick_job
from chimera.github.trust.schedule_journal import scheduled_run
from chimera.github.trust.settings import ActionSettings
from chimera.scheduler.clock import FixedClock
from chimera.testing.github_fake import GitHubFake, make_bare_remote

JOBS = """\
schedules:
  - id: spec-green
    cron: {expr: "0 6 * * *", timezone: Europe/Warsaw}
    check: spec-green
  - id: weekly-deps
    cron: {expr: "30 6 * * 1", timezone: Europe/Warsaw}
    task: Update the dependency report.
  - id: on-merge
    event: {kind: pull-request-merged, branch: main}
    task: Tidy the changelog.
"""


class GitHubDouble:
    """Keeps issues, comments (idempotent by marker) and dispatches, like the API would."""

    def __init__(self) -> None:
        self.issues: dict[int, IssueInfo] = {}
        self.comments: dict[str, tuple[int, str]] = {}
        self.dispatches: list[tuple[str, str, dict[str, str]]] = []
        self.check: CheckRunSeen | None = None

    def issues_with_label(self, label: str) -> list[IssueInfo]:
        return [i for i in self.issues.values() if label in i.labels]

    def create_issue(self, title: str, body: str, labels: Sequence[str], *, marker: str) -> int:
        for issue in self.issues.values():
            if issue.state == "open" and marker in issue.body and labels[0] in issue.labels:
                return issue.number
        n = len(self.issues) + 1
        self.issues[n] = IssueInfo(
            n, title, body, "open", False, tuple(labels), False, "app", "", ""
        )
        return n

    def comment(self, number: int, body: str, *, marker: str | None = None) -> int:
        self.comments.setdefault(marker or body, (number, body))
        return len(self.comments)

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> None:
        self.dispatches.append((workflow, ref, inputs))

    def latest_check_run(self, ref: str, name: str) -> CheckRunSeen | None:
        return self.check


def context(event: str = "schedule", payload: dict[str, Any] | None = None) -> ActionContext:
    repo = {"full_name": "o/r", "default_branch": "main"}
    return ActionContext(event_name=event, payload={"repository": repo, **(payload or {})})


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    folder = tmp_path / "checkout" / ".chimera.d" / "schedules"
    folder.mkdir(parents=True)
    (folder / "jobs.yaml").write_text(JOBS)
    return tmp_path / "checkout"


def test_ticks_claim_in_the_journal_then_file_and_dispatch_once(
    remote: Any, checkout: Path
) -> None:
    gh, clock = GitHubDouble(), FixedClock(datetime(2025, 3, 2, 12, 0, tzinfo=UTC))
    settings = ActionSettings()
    journal = remote.clone("runner")

    def tick(run_id: str, ctx: ActionContext | None = None) -> Any:
        return tick_job(
            ctx or context(), settings, checkout, github=gh, journal=journal,
            trust=remote.trust, clock=clock, run_id=run_id,
        )  # fmt: skip

    first = tick("100-1")
    assert first.plan.baselined == ("spec-green", "weekly-deps") and gh.dispatches == []
    clock.set(datetime(2025, 3, 3, 5, 40, tzinfo=UTC))  # Monday 06:40 in Warsaw
    gh.check = CheckRunSeen("abc123", "failure", "2 red: no-eval, strict-types")
    second = tick("101-1")
    assert [r.job for r in second.plan.runs] == ["spec-green", "weekly-deps"]
    assert [i.title for i in gh.issues.values()] == [
        "The Spec is red on the default branch",
        "Scheduled: weekly-deps",
    ]
    assert all(LABEL in i.labels for i in gh.issues.values())
    # A task's new issue: its filing label starts the run (decide), so no dispatch; only the
    # task issue carries the task marker decide looks for.
    assert (
        gh.dispatches == []
        and second.acted[1] == "weekly-deps: filed #2 (its label event starts the run)"
    )
    assert "<!-- chimera:schedule-task weekly-deps -->" in gh.issues[2].body
    assert "chimera:schedule-task" not in gh.issues[1].body
    assert any("no-eval, strict-types" in body for _, body in gh.comments.values())
    # A re-run of the same instant (another runner, same journal) does nothing twice.
    other = remote.clone("runner2")
    again = tick_job(
        context(), settings, checkout, github=gh, journal=other, trust=remote.trust,
        clock=clock, run_id="101-2",
    )  # fmt: skip
    assert again.plan.runs == () and gh.dispatches == []
    # A merge to main starts the event SOP once, on the same job issue each time.
    merged = {
        "action": "closed",
        "pull_request": {"number": 9, "merged": True, "base": {"ref": "main"}},
    }
    clock.advance(timedelta(minutes=5))
    assert [r.job for r in tick("102-1", context("pull_request", merged)).plan.runs] == ["on-merge"]
    clock.advance(timedelta(minutes=5))
    assert tick("103-1", context("pull_request", merged)).plan.runs == ()
    assert gh.dispatches == []
    # The next Monday the weekly job's issue is still open: no label event, so a dispatch.
    clock.set(datetime(2025, 3, 10, 5, 40, tzinfo=UTC))
    assert [r.job for r in tick("104-1").plan.runs] == ["spec-green", "weekly-deps"]
    assert [d[2]["issue-number"] for d in gh.dispatches] == ["2"]


def test_a_broken_schedules_file_fails_before_anything_runs(remote: Any, checkout: Path) -> None:
    (checkout / ".chimera.d" / "schedules" / "bad.yaml").write_text("schedules: [{id: x}]\n")
    gh = GitHubDouble()
    journal = remote.clone("runner")
    with pytest.raises(UsageError, match=r"bad\.yaml:1:\d+: .*"):
        tick_job(
            context(), ActionSettings(), checkout, github=gh, journal=journal,
            trust=remote.trust, clock=FixedClock(datetime(2025, 1, 1, tzinfo=UTC)), run_id="1",
        )  # fmt: skip
    assert journal.fetch() is None and gh.issues == {} and gh.dispatches == []


def test_publish_reads_the_tick_marker_only_from_chimeras_own_comments() -> None:
    settings = ActionSettings.from_env({"CHIMERA_BOT_LOGIN": "app[bot]"})
    comments = [
        (1, "app[bot]", "Scheduled run of `a`.\n\n<!-- chimera:tick 100.1 a -->"),
        (2, "app[bot]", "Scheduled run of `b`.\n\n<!-- chimera:tick 101.1 b -->"),
        (3, "mallory", "<!-- chimera:tick 999.1 b -->"),
    ]
    assert scheduled_run(comments, settings) == ("101.1", "b")
    assert scheduled_run(comments[2:], settings) is None


@pytest.mark.parametrize(
    ("env", "key", "message"),
    [
        ({}, True, "set bot-login"),
        ({"CHIMERA_BOT_LOGIN": "app[bot]"}, False, "GITHUB_RUN_ID is not set"),
        ({"CHIMERA_BOT_LOGIN": "app[bot]"}, False, "no GitHub token"),
    ],
)
def test_the_action_tick_refuses_to_write_a_journal_nobody_would_trust(
    checkout: Path, tmp_path: Path, env: dict[str, str], key: bool, message: str
) -> None:
    run = "" if "GITHUB_RUN_ID" in message else "7"
    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=make_bare_remote(tmp_path / "origin")[0])
        fake.add_user("alice")
        repo.collaborators["alice"] = "write"
        # Neither a token (API commits GitHub signs) nor a key (SSH-signed pushes).
        token = "" if "token" in message else fake.add_token("alice")
        access = GitHubAccess(token=token, api_url=fake.api_url, throttle=False)
        ctx = ActionContext(
            event_name="schedule", payload={}, workflow_run=run, repository_env="octo/app",
            github=access,
        )  # fmt: skip
        with pytest.raises(UsageError, match=message):
            run_tick(
                ctx, ActionSettings.from_env(env), checkout,
                clock=FixedClock(datetime(2025, 1, 1, tzinfo=UTC)),
                signing_key=tmp_path / "key" if key else None,
            )  # fmt: skip
        assert repo.head_sha("chimera/journal") is None
