"""The GITHUB_TOKEN-only tier (``bot-login: github-actions[bot]``) on the GitHub fake: a run
still goes from label to pull request on workflow tokens alone, and each capability that needs
an App is refused with its one line — never silently:

* CI on Chimera's pull request: start-ci closes and reopens nothing (a GITHUB_TOKEN's events
  start no workflow) and says so on the pull request and in the job summary;
* signed memory commits: what the run remembered replays tainted, and the summary says why;
* queue slots across jobs: an issue without a free slot is refused on the issue, never left
  waiting for a drain.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.github.client.client import GitHubClient, RetryPolicy
from chimera.github.trust.branchcommit import app_logins, github_trust
from chimera.github.trust.settings import ActionSettings
from chimera.github.trust.tier import NO_APP_CI, NO_APP_MEMORY, NO_APP_QUEUE
from chimera.memory.branch import GitBranch
from chimera.memory.items import TAINTED, TRUSTED
from chimera.memory.replay import replay_into
from chimera.memory.store import MemoryStore

if TYPE_CHECKING:
    from conftest import World

WEBHOOKS = Path(__file__).resolve().parents[1] / "data" / "github" / "webhooks"


def review(by: str, pr: int, head: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (WEBHOOKS / "pull_request_review.submitted.json").read_text(encoding="utf-8")
    )
    data["repository"] |= {"full_name": "octo/app", "name": "app", "default_branch": "main"}
    data["review"] |= {"state": "approved", "commit_id": head}
    data["review"]["user"]["login"] = by
    data["sender"]["login"] = by
    data["pull_request"]["number"] = pr
    data["pull_request"]["head"] |= {"ref": "chimera/issue-1", "sha": head}
    return data


def test_the_tier_publishes_and_refuses_what_needs_an_app(world: World) -> None:
    world.env["CHIMERA_BOT_LOGIN"] = "github-actions[bot]"
    world.env["CHIMERA_MAX_OPEN_PRS"] = "1"
    world.script_calc(world.total_calc)
    world.add_total_issue(labels=("chimera",))
    jobs = world.pipeline("issues", world.labeled(1), run=71)
    assert jobs["decide"]["proceed"] == "true", jobs["decide"]
    assert jobs["publish"]["status"] == "pr_opened", jobs["publish"]
    (pull,) = world.repo.pulls()
    assert "CI does not start by itself (no GitHub App)" in world.comments(1)[-1]
    summary = (world.tmp / "summary-71.md").read_text()
    assert NO_APP_MEMORY in summary

    # Signed memory commits: the branch store's commits are GitHub's for github-actions[bot],
    # which any workflow is; replay in the tier trusts none of them.
    settings = ActionSettings.from_env({"CHIMERA_BOT_LOGIN": "github-actions[bot]"})
    assert settings.no_app and app_logins(settings) == frozenset()
    assert world.repo.head_sha("chimera-memory") is not None
    reader = GitHubClient(
        "octo/app", world.workflow_token(world.decide_perms), api_url=world.fake.api_url,
        throttle=False, retry=RetryPolicy(backoff_s=0.01, timeout_s=5),
    )  # fmt: skip
    store = MemoryStore(":memory:")
    branch = GitBranch(world.tmp / "reader.git", str(world.remote))
    replay_into(branch, store, github_trust(reader, app_logins(settings), people=False))
    assert store.items() and {i.provenance for i in store.items()} == {TAINTED}
    # Not vacuous: trusting github-actions[bot] (which the tier must not) would trust some.
    naive = MemoryStore(":memory:")
    trust_anyone = github_trust(reader, {"github-actions[bot]"}, people=False)
    replay_into(GitBranch(world.tmp / "naive.git", str(world.remote)), naive, trust_anyone)
    assert TRUSTED in {i.provenance for i in naive.items()}

    # CI on Chimera's PR: the approval is valid, but nothing is closed or reopened.
    head = world.repo.head_sha("chimera/issue-1")
    assert head is not None
    approval = review("bob", pull["number"], head)
    token = world.workflow_token({"pull-requests": "write", "issues": "write"})
    before = len(world.fake.events)
    started = world.job("start-ci", "pull_request_review", approval, run=72, token=token)
    assert started["status"] == "no-app"
    assert not [e for e in world.fake.events[before:] if e.event == "pull_request"]
    said = [c["body"] for c in world.repo.issue_comments(pull["number"]) if NO_APP_CI in c["body"]]
    assert len(said) == 1 and NO_APP_CI in (world.tmp / "summary-72.md").read_text()
    world.job("start-ci", "pull_request_review", approval, run=73, token=token)
    again = [c for c in world.repo.issue_comments(pull["number"]) if NO_APP_CI in c["body"]]
    assert len(again) == 1  # said once per approved head

    # Queue slots across jobs: the one slot is taken by the open PR; the next issue is
    # refused on the issue, not queued for a drain.
    number = world.add_total_issue("total 2", labels=("chimera",))["number"]
    gate = world.pipeline("issues", world.labeled(number), run=74)["decide"]
    assert gate["proceed"] == "false" and gate["status"] == "refused"
    assert "chimera:queued" not in world.repo.issues[number]["labels"]
    (comment,) = world.comments(number)
    assert NO_APP_QUEUE in comment and "no free slot" in comment
    assert NO_APP_QUEUE in (world.tmp / "summary-74.md").read_text()


def test_an_empty_bot_login_is_still_refused_not_taken_for_the_tier(world: World) -> None:
    """The tier is declared, never guessed: an App slug left out stops decide as before."""
    world.env["CHIMERA_BOT_LOGIN"] = ""
    world.add_total_issue(labels=("chimera",))
    gate = world.pipeline("issues", world.labeled(1), run=81)["decide"]
    assert gate.get("proceed") != "true"
    assert "bot-login is empty" in " ".join(world.comments(1))
