"""The ChangeQueue's state against people and outsiders (the closing attacker's pass over
issue 32 and the queue's claims): only Chimera's own comments and PRs are queue state.

* a PR from a fork whose branch is named ``chimera/issue-N`` is not a Chimera PR: before the
  fix three of them, opened by anyone, filled every slot of ``max-open-prs`` and no labelled
  issue could start;
* a person's comment that copies a claim's marker, a ``chimera:queued`` marker or a stop
  record claims, queues and stops nothing (held before, kept here).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from chimera.github.client.client import GitHubClient
from chimera.github.queue.claims import claims_on, stop_after
from chimera.github.queue.queue import LABEL_RUNNING, ChangeQueue, QueueLimits
from chimera.github.trust.summary import render_marker
from chimera.testing.github_fake import FakeRepo, GitHubFake

IDS = ("chimera-bot", "github-actions[bot]")


def _queue(client: GitHubClient, max_open: int = 3) -> ChangeQueue:
    base = datetime.now(UTC)
    return ChangeQueue(client, identities=IDS, limits=QueueLimits(max_open, 10),
                       now=lambda: base + timedelta(seconds=1))  # fmt: skip


def _issue(fake: GitHubFake) -> int:
    made = fake.add_issue("octo/app", title="t", body="b", user="alice", labels=("chimera",))
    return int(made["number"])


def test_fork_prs_named_like_chimera_branches_take_no_slot(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    for n in (1, 2, 3):
        fake.add_fork_pull("octo/app", head=f"chimera/issue-{n}", user="mallory")
    q = _queue(bot)
    assert q.open_pulls() == []
    assert q.slots().open_prs == 0
    issue = _issue(fake)
    admission = q.admit(issue, "alice")
    assert admission.admitted, admission.reason
    assert LABEL_RUNNING in repo.issues[issue]["labels"]


def test_a_persons_copy_of_a_claim_or_a_queued_marker_is_no_queue_state(
    fake: GitHubFake,
    repo: FakeRepo,
    bot: GitHubClient,
    make_client: Callable[..., GitHubClient],
) -> None:
    issue = _issue(fake)
    q = _queue(bot, max_open=1)
    alice = make_client("alice")
    forged = render_marker(
        "outcome",
        {"issue": issue, "key": "999:1", "kind": "running", "claim": "00ff00ff00ff00ff"},
    )
    alice.comment(issue, f"**Chimera: Started.**\n\n{forged}", marker=forged)
    queued = render_marker("queued", {"issue": issue, "labeller": "alice", "at": "1970"})
    alice.comment(issue, f"**Chimera: Queued.**\n\n{queued}", marker=queued)
    stop = render_marker("outcome", {"issue": issue, "key": "999:1", "stop": True})
    alice.comment(issue, f"**Chimera: Stopped.**\n\n{stop}", marker=stop)
    assert claims_on(bot, issue, IDS) == [] and q.running() == [] and q.queued() == []
    assert stop_after(bot.comment_records(issue), issue, 0, IDS) is None
    other = _issue(fake)
    assert q.admit(other, "alice").admitted  # the forged claim held no slot
