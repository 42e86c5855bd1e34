"""Slot claims (chimera.github.queue.claims) and the ChangeQueue transitions built on them, against
the GitHub fake: the order is the claims' comment ids, never issue numbers; a dispatched run
is admitted only by the claim its dispatch names; a rollback removes only its own claim."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from chimera.github.client.client import GitHubClient
from chimera.github.conversation.documents import outcome_comment
from chimera.github.queue.claims import (
    BUSY,
    FULL,
    HOUR,
    Claim,
    bare_claim,
    claims_on,
    verdict,
    with_fields,
)
from chimera.github.queue.queue import LABEL_QUEUED, LABEL_RUNNING, ChangeQueue, QueueLimits
from chimera.testing.github_fake import FakeRepo, GitHubFake

IDS = ("chimera-bot", "github-actions[bot]")


def claim(issue: int, cid: int, *, kind: str = "running", at: str = "2026-01-01T00:00:00") -> Claim:
    return Claim(issue, cid, f"{cid:016x}", f"{cid}:{issue}", kind, at + "+00:00")


def test_the_order_is_the_claims_not_the_issue_numbers() -> None:
    # #9 claimed first; #2 claimed later: #2 must not jump ahead (issue 42, row 1).
    early, late = claim(9, 100), claim(2, 200)
    claims = [early, late]
    assert verdict(claims, early, max_open=1, max_per_hour=9) is None
    assert verdict(claims, late, max_open=1, max_per_hour=9) == FULL


def test_an_older_live_claim_of_the_same_issue_wins_and_finished_ones_do_not_count() -> None:
    drain, retry = claim(5, 100), claim(5, 101)
    assert verdict([drain, retry], retry, max_open=3, max_per_hour=9) == BUSY
    done = claim(5, 50, kind="pr_opened")
    assert verdict([done, retry], retry, max_open=3, max_per_hour=9) is None


def test_open_prs_take_slots_first_and_one_that_runs_again_counts_once() -> None:
    mine = claim(4, 100)
    assert verdict([mine], mine, max_open=2, max_per_hour=9, open_pr_issues={7, 8}) == FULL
    assert verdict([mine], mine, max_open=2, max_per_hour=9, open_pr_issues={7, 4}) is None


def test_the_hour_counts_starts_before_mine_on_githubs_clock() -> None:
    old = claim(1, 10, kind="pr_opened", at="2026-01-01T00:00:00")
    recent = claim(2, 20, kind="crashed", at="2026-01-01T00:30:00")
    refused = claim(3, 30, kind="refused", at="2026-01-01T00:40:00")
    mine = claim(4, 40, at="2026-01-01T01:10:00")
    claims = [old, recent, refused, mine]
    assert (
        verdict(claims, mine, max_open=9, max_per_hour=2) is None
    )  # old is out, refused is no start
    assert verdict(claims, mine, max_open=9, max_per_hour=1) == HOUR


def _queue(client: GitHubClient, max_open: int = 1) -> ChangeQueue:
    base = datetime.now(UTC)
    return ChangeQueue(client, identities=IDS, limits=QueueLimits(max_open, 10),
                       now=lambda: base + timedelta(seconds=1))  # fmt: skip


def _issue(fake: GitHubFake) -> int:
    made = fake.add_issue("octo/app", title="t", body="b", user="alice", labels=("chimera",))
    return int(made["number"])


def test_a_retry_racing_a_drains_start_is_busy_and_undoes_nothing(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    a = _issue(fake)
    q = _queue(bot)
    q.enqueue(a, "alice", "no free slot")
    sent: list[str] = []
    assert q.drain(lambda entry, token: sent.append(token)) == [a]
    queued_at = [c["body"] for c in repo.issue_comments(a) if "Queued" in c["body"]]
    retry = q.admit(a, "alice")
    assert retry.busy and not retry.admitted
    labels = repo.issues[a]["labels"]
    assert LABEL_RUNNING in labels and LABEL_QUEUED not in labels  # the start stands
    assert [c["body"] for c in repo.issue_comments(a) if "Queued" in c["body"]] == queued_at


def test_only_the_run_holding_the_dispatchs_claim_is_admitted(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    a = _issue(fake)
    q = _queue(bot)
    q.enqueue(a, "alice", "no free slot")
    sent: list[str] = []
    q.drain(lambda entry, token: sent.append(token))
    (token,) = sent
    edits: list[Claim] = []

    def adopt_as(run: str) -> Callable[[Claim], None]:
        def edit(c: Claim) -> None:
            edits.append(c)
            body = repo.comments[c.comment_id]["body"].replace(c.key, f"{run}:{a}")
            bot.edit_comment(a, c.comment_id, body)

        return edit

    assert not q.adopt(a, "f" * 16, "7", adopt_as("7")).admitted  # another claim: no
    assert q.adopt(a, token, "8", adopt_as("8")).admitted
    twin = q.adopt(a, token, "9", adopt_as("9"))  # a second run of the same dispatch
    assert not twin.admitted and "workflow run 8" in twin.reason
    assert [c.run for c in claims_on(bot, a, IDS) if c.live] == ["8"]


def test_a_failed_dispatch_gives_back_only_its_own_claim(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    a = _issue(fake)
    q = _queue(bot, max_open=2)
    q.enqueue(a, "alice", "no free slot")

    def fail(entry: object, token: str) -> None:
        raise RuntimeError("dispatch refused")

    with pytest.raises(RuntimeError):
        q.drain(fail)
    labels = repo.issues[a]["labels"]
    assert LABEL_QUEUED in labels and LABEL_RUNNING not in labels  # its place is back
    assert [c for c in claims_on(bot, a, IDS) if c.live] == []
    # Another start of the issue holds it: a rollback of a later claim leaves that one alone.
    assert q.admit(a, "alice").admitted
    q.withdraw(a, "0" * 16)  # a claim that is not the holder's
    assert LABEL_RUNNING in repo.issues[a]["labels"]
    q.release(a, key="999:1")  # another run's key: this run's slot stays
    assert LABEL_RUNNING in repo.issues[a]["labels"]
    q.release(a)
    assert LABEL_RUNNING not in repo.issues[a]["labels"]


def _stop_record(bot: GitHubClient, issue: int) -> int:
    """The record ``@chimera stop`` leaves: its reply, a ``cancelled`` outcome marked stop."""
    body = outcome_comment("cancelled", issue=issue, key=f"stop:{issue}", detail="Stopped.")
    return bot.comment(issue, with_fields(body, stop=True))


def test_a_drain_whose_listing_predates_a_stop_withdraws_its_claim(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    a = _issue(fake)
    q = _queue(bot)
    q.enqueue(a, "alice", "no free slot")
    posted: list[int] = []

    def stop_then_post(issue: int, token: str) -> int:
        # The stop runs whole between the drain's listing and its claim: the queued label goes
        # first, then the stop's record, then the drain's claim comes in.
        bot.remove_label(issue, LABEL_QUEUED)
        _stop_record(bot, issue)
        posted.append(bot.comment(issue, bare_claim(issue, token)))
        return posted[-1]

    sent: list[str] = []
    assert q.drain(lambda entry, token: sent.append(token), post=stop_then_post) == []
    assert sent == [] and len(posted) == 1  # claimed, then withdrawn: nothing dispatched
    assert posted[0] not in repo.comments
    assert [c for c in claims_on(bot, a, IDS) if c.live] == []
    assert LABEL_RUNNING not in repo.issues[a]["labels"]


def test_a_stop_after_the_drains_claim_refuses_the_dispatched_run_and_frees_the_slot(
    fake: GitHubFake, repo: FakeRepo, bot: GitHubClient
) -> None:
    a = _issue(fake)
    q = _queue(bot)
    q.enqueue(a, "alice", "no free slot")
    sent: list[str] = []
    assert q.drain(lambda entry, token: sent.append(token)) == [a]
    _stop_record(bot, a)  # a stop that read the claims before the drain's claim was posted
    edits: list[Claim] = []
    refused = q.adopt(a, sent[0], "8", edits.append)
    assert not refused.admitted and "stop" in refused.reason and edits == []
    assert [c for c in claims_on(bot, a, IDS) if c.live] == []
    assert LABEL_RUNNING not in repo.issues[a]["labels"]
