"""ChangeQueue and the permission checks, against the GitHub fake (state lives on GitHub)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from chimera.github.client.client import GitHubClient
from chimera.github.gate.events import Act, decide
from chimera.github.gate.permissions import resolve
from chimera.github.queue.queue import (
    LABEL_AWAITING,
    LABEL_QUEUED,
    LABEL_RUNNING,
    ChangeQueue,
    QueueEntry,
    QueueLimits,
)
from chimera.github.trust.settings import ActionSettings
from chimera.github.trust.summary import render_marker
from chimera.testing.github_fake import FakeRepo, GitHubFake

SETTINGS = ActionSettings(identities=("chimera-bot", "github-actions[bot]"))


def queue(client: GitHubClient, max_open: int = 1, per_hour: int = 10) -> ChangeQueue:
    ticks = iter(range(10_000))
    base = datetime(2026, 1, 1, tzinfo=UTC)
    return ChangeQueue(
        client,
        identities=SETTINGS.identities,
        limits=QueueLimits(max_open, per_hour),
        now=lambda: base + timedelta(seconds=next(ticks)),
    )


def push_branch(work: Path, branch: str, text: str = "change\n") -> str:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "checkout", "-q", "-B", branch, "main"], cwd=work, check=True)
    (work / f"{branch.replace('/', '_')}.txt").write_text(text)
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", branch], cwd=work, check=True)
    subprocess.run(
        [*git, "push", "-q", "-f", "origin", branch], cwd=work, check=True, capture_output=True
    )
    return subprocess.run(
        [*git, "rev-parse", "HEAD"], cwd=work, check=True, capture_output=True, text=True
    ).stdout.strip()


def issues(fake: GitHubFake, n: int) -> list[int]:
    return [
        fake.add_issue("octo/app", title=f"Task {i}", body="b", user="alice", labels=("chimera",))[
            "number"
        ]
        for i in range(n)
    ]


def test_fifo_with_one_slot_nothing_dropped(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    a, b, c = issues(fake, 3)
    q = queue(bot)
    assert q.admit(a, "alice").admitted
    second, third = q.admit(b, "alice"), q.admit(c, "bob")
    assert not second.admitted and second.position == 1
    assert not third.admitted and third.position == 2
    assert LABEL_QUEUED in repo.issues[b]["labels"] and LABEL_RUNNING in repo.issues[a]["labels"]
    # Exactly one "queued" comment each, even when admitted again while queued.
    q.admit(b, "alice")
    assert len(repo.issue_comments(b)) == 1 and "alice" in repo.issue_comments(b)[0]["body"]
    started: list[QueueEntry] = []
    assert q.drain(lambda entry, _claim: started.append(entry)) == []  # a is still running
    q.release(a)
    assert q.drain(lambda entry, _claim: started.append(entry)) == [b]
    assert [(e.issue, e.labeller) for e in started] == [(b, "alice")]
    assert (
        LABEL_RUNNING in repo.issues[b]["labels"] and LABEL_QUEUED not in repo.issues[b]["labels"]
    )
    q.release(b)
    assert q.drain(lambda entry, _claim: started.append(entry)) == [c]
    assert started[-1].labeller == "bob"
    # An open Chimera PR holds a slot too.
    q.release(c)
    push_branch(Path(str(repo.remote)).parent / "work", "chimera/issue-99")
    bot.create_pull(title="t", body="b", head="chimera/issue-99", base="main", draft=False)
    d = issues(fake, 1)[0]
    assert not q.admit(d, "alice").admitted


def test_a_newcomer_queues_behind_older_waiting_issues(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    a, b, c = issues(fake, 3)
    q = queue(bot, max_open=1)
    q.admit(a, "alice")
    q.admit(b, "alice")  # queued
    q.release(a)  # a slot is free now, but b waits longer than c
    assert not q.admit(c, "alice").admitted
    assert [e.issue for e in q.queued()] == [b, c]


def test_simultaneous_claims_do_not_both_keep_one_slot(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    a, b = issues(fake, 2)
    q = queue(bot, max_open=1)
    other = queue(bot, max_open=1)  # another runner
    # b checks the slot (free: a has not claimed yet), then a's claim lands before b's.
    original = q.slots

    def racing_slots(**kw: Any) -> Any:
        result = original(**kw)
        other.post_bare_claim(a, "a" * 16)
        return result

    q.slots = racing_slots  # type: ignore[method-assign]
    outcome = q.admit(b, "alice")
    assert not outcome.admitted and "took the last free slot" in outcome.reason
    labels = repo.issues[b]["labels"]
    assert LABEL_QUEUED in labels and LABEL_RUNNING not in labels
    # b's claim was withdrawn (deleted); a's, older, stands.
    assert [c.issue for c in q.claims() if c.live] == [a]


def test_per_hour_limit(fake: GitHubFake, repo: FakeRepo, bot: GitHubClient) -> None:
    a, b = issues(fake, 2)
    q = queue(bot, max_open=5, per_hour=1)
    assert q.admit(a, "alice").admitted
    outcome = q.admit(b, "alice")
    assert not outcome.admitted and "1 started in the last hour of 1" in outcome.reason


def test_queue_markers_from_other_people_count_for_nothing(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient, make_client: Callable[..., GitHubClient]
) -> None:
    (a,) = issues(fake, 1)
    forged = render_marker("queued", {"issue": a, "labeller": "mallory", "at": "2000-01-01"})
    make_client("mallory").comment(a, forged)
    bot.add_labels(a, LABEL_QUEUED)  # Chimera's own label: the issue is queued
    (entry,) = queue(bot).queued()
    assert entry.labeller == ""  # the forged labeller is not believed


def test_a_queued_label_a_person_added_queues_nothing(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient, make_client: Callable[..., GitHubClient]
) -> None:
    (a,) = issues(fake, 1)
    fake.add_user("tina")
    repo.collaborators["tina"] = "triage"  # may label issues, may not start Chimera
    make_client("tina").add_labels(a, LABEL_QUEUED)
    assert LABEL_QUEUED in repo.issues[a]["labels"]
    assert queue(bot).queued() == []


def test_cancel_reports_what_was_cancelled(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    (a,) = issues(fake, 1)
    q = queue(bot)
    assert q.cancel(a) == []
    repo.issues[a]["labels"] += [LABEL_QUEUED, LABEL_AWAITING]
    assert q.cancel(a) == ["its place in the queue", "the paused run awaiting approval"]
    assert repo.issues[a]["labels"] == ["chimera"]


def test_request_merge_never_for_risky_or_spec_changes_and_uses_the_merge_queue(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient, work: tuple[Path, Path]
) -> None:
    push_branch(work[1], "chimera/issue-5")
    q = queue(bot)
    pull, _ = q.open_or_update(5, title="t", body="b", base="main", draft=False)
    assert q.request_merge(pull, enabled=False, labels=()) == "auto-merge is off"
    assert "risk:high" in q.request_merge(pull, enabled=True, labels=("risk:high",))
    assert "spec-change" in q.request_merge(pull, enabled=True, labels=("spec-change",))
    assert "auto-merge enabled" in q.request_merge(pull, enabled=True, labels=())
    assert repo.issues[pull.number]["auto_merge"] is not None
    repo.rules["main"] = [{"type": "merge_queue", "parameters": {}}]
    assert "merge queue" in q.request_merge(pull, enabled=True, labels=())
    assert repo.issues[pull.number]["in_merge_queue"] and repo.merge_attempts == []
    again, created = q.open_or_update(5, title="t2", body="b2", base="main", draft=False)
    assert (again.number, created, again.title) == (pull.number, False, "t2")


def _labeled(webhook: Callable[[str], dict[str, Any]], issue: int, sender: str) -> dict[str, Any]:
    payload = webhook("issues.labeled")
    payload["label"]["name"] = "chimera"
    payload["issue"]["number"] = issue
    payload["sender"]["login"] = sender
    payload["sender"]["type"] = "Bot" if sender.endswith("[bot]") else "User"
    return payload


def test_permission_checks_go_through_the_api(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient, webhook: Callable[[str], dict[str, Any]]
) -> None:
    (a,) = issues(fake, 1)
    ok = resolve(decide("issues", _labeled(webhook, a, "bob"), SETTINGS), bot, SETTINGS)
    assert ok.proceed and ok.issue is not None and ok.issue.number == a
    read_only = resolve(decide("issues", _labeled(webhook, a, "mallory"), SETTINGS), bot, SETTINGS)
    assert not read_only.proceed and read_only.decision.explain
    assert "'read' role" in read_only.decision.reason
    stranger = resolve(decide("issues", _labeled(webhook, a, "nobody"), SETTINGS), bot, SETTINGS)
    assert "'none' role" in stranger.decision.reason
    repo.issues[a]["state"] = "closed"
    closed = resolve(decide("issues", _labeled(webhook, a, "bob"), SETTINGS), bot, SETTINGS)
    assert not closed.proceed and "is closed" in closed.decision.reason
    assert any("/collaborators/bob/permission" in c.path for c in fake.calls)


def _review(
    webhook: Callable[[str], dict[str, Any]],
    state: str,
    reviewer: str,
    pull: Any,
    commit: str | None = None,
) -> dict[str, Any]:
    payload = webhook("pull_request_review.submitted")
    payload["review"]["state"] = state
    payload["review"]["user"]["login"] = reviewer
    payload["review"]["commit_id"] = commit or pull.head_sha
    payload["pull_request"]["head"]["ref"] = pull.head_ref
    payload["pull_request"]["head"]["sha"] = pull.head_sha
    payload["pull_request"]["number"] = pull.number
    payload["sender"]["login"] = reviewer
    return payload


def test_approval_rules(
    fake: GitHubFake,
    repo: FakeRepo,
    bot: GitHubClient,
    work: tuple[Path, Path],
    webhook: Callable[[str], dict[str, Any]],
) -> None:
    push_branch(work[1], "chimera/issue-5")
    marker = render_marker(
        "pr",
        {
            "issue": 5,
            "run_id": "r",
            "status": "awaiting_approval",
            "started_by": "alice",
            "workflow_run": "1",
        },
    )
    pull, _ = bot.create_pull(
        title="t", body=f"x\n{marker}", head="chimera/issue-5", base="main", draft=True
    )

    def check(state: str, reviewer: str, commit: str | None = None) -> Any:
        d = decide("pull_request_review", _review(webhook, state, reviewer, pull, commit), SETTINGS)
        return resolve(d, bot, SETTINGS) if d.action is not Act.IGNORE else d

    good = check("approved", "bob")
    assert good.proceed and good.decision.action is Act.RESUME and good.marker.run_id == "r"
    own = check("approved", "alice")
    assert not own.proceed and "triggered this run" in own.decision.reason
    reader = check("approved", "mallory")
    assert not reader.proceed and "'read' role" in reader.decision.reason
    # A push after the approval makes it stale.
    old = pull.head_sha
    push_branch(work[1], "chimera/issue-5", "moved\n")
    stale = resolve(
        decide("pull_request_review", _review(webhook, "approved", "bob", pull, old), SETTINGS),
        bot,
        SETTINGS,
    )
    assert not stale.proceed and "stale" in stale.decision.reason
    rerun = check("changes_requested", "bob")
    assert rerun.proceed and rerun.decision.action is Act.RERUN
    # A PR that is not Chimera's (wrong author) carries no state that counts.
    pull2, _ = bot.create_pull(title="t", body="x", head="chimera/issue-5", base="main", draft=True)
    assert pull2.number == pull.number  # still one PR per head
