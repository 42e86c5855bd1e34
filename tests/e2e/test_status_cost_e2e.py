"""``@chimera status`` with the cost so far, and the agent job's per-attempt progress, end to
end on the GitHub fake: the numbers are the run state's own counters, read back from the run
artifact the agent job uploaded; a run still in its agent job says so."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.github.client.client import GitHubClient, RetryPolicy
from chimera.github.queue.progress import post_progress
from chimera.testing.github_fake import comment_event

if TYPE_CHECKING:
    from conftest import World


@dataclass(frozen=True)
class Run:
    """The workflow run decide posts its "working on it" comment from (run 112)."""

    workflow_run: str | None = "112"
    run_attempt: str | None = "1"

    def run_link(self) -> str:
        return "https://github.example/octo/app/actions/runs/112"


COMMAND_PERMS = {"issues": "write", "pull-requests": "read", "actions": "write"}
USAGE = {"prompt_tokens": 900, "completion_tokens": 100, "cost_usd": 0.0125}


def model(world: World) -> None:
    turns = world.calc_turns(world.total_calc)
    for turn in turns:
        turn["usage"] = USAGE
    world.script(turns)


def say(world: World, number: int, login: str, body: str) -> dict[str, Any]:
    gh = world.fake.pygithub(world.fake.add_token(login))
    created = gh.get_repo("octo/app").get_issue(number).create_comment(body)
    return comment_event(world.fake, "octo/app", created.id)


def test_status_reports_the_runs_tokens_and_usd_and_the_summary_each_attempt(
    world: World,
) -> None:
    model(world)
    issue = world.add_total_issue()
    number = int(issue["number"])
    jobs = world.pipeline("issue_comment", say(world, number, "alice", "@chimera run"), run=111)
    assert jobs["publish"]["status"] == "pr_opened"
    state = json.loads((world.tmp / "artifacts-111" / "run" / "state.json").read_text())
    assert state["tokens"] > 0 and state["cost_usd"] > 0
    # The agent job's summary lists each attempt with Chimera's counters.
    summary = Path(world.tmp / "summary-111.md").read_text()
    audit = (world.tmp / "artifacts-111" / "run" / "audit.jsonl").read_text().splitlines()
    (attempt,) = [e["fields"] for e in map(json.loads, audit) if e["event"] == "attempt"]
    row = f"| 1 | `total-defined` | passed | {attempt['tokens']:,} | ${attempt['cost_usd']:.4f} |"
    assert attempt["tokens"] > 0 and row in summary

    # A later run still in its agent job: decide's "working on it" comment names it, it has
    # no artifact yet, so it is named, not counted.
    client = GitHubClient(
        "octo/app",
        world.workflow_token({"issues": "write"}),
        api_url=world.fake.api_url,
        retry=RetryPolicy(backoff_s=0.01, timeout_s=2),
        throttle=False,
        sleep=lambda s: None,
    )
    world.fake.add_workflow_run("octo/app", 112)
    assert post_progress(Run(), client, number, actor="alice", what="`@chimera retry`")
    out = world.job(
        "command",
        "issue_comment",
        say(world, number, "bob", "@chimera status"),
        run=113,
        token=world.workflow_token(COMMAND_PERMS),
    )
    assert out["status"] == "reported"
    (reply,) = [c["body"] for c in world.repo.issue_comments(number) if "Status of" in c["body"]]
    tokens, usd = f"{state['tokens']:,}", f"${state['cost_usd']:.4f}"
    assert f"- cost so far: {tokens} tokens, {usd} over 1 finished run(s)" in reply
    assert f"  - run 111: {tokens} tokens, {usd}" in reply
    assert "- run 112: still in its agent job" in reply
    assert "run 113" not in reply  # the status reply's own run spent nothing
    assert "- latest run: https://github.example/octo/app/actions/runs/112" in reply
