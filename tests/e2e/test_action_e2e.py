"""End to end, offline: webhook event files → ``chimera action`` modes → the GitHub fake.

The pieces are the real ones: real @octokit/webhooks-examples payloads (adapted to the test
repository), ``chimera action`` (the agent mode in its own process, running ``chimera run`` /
``chimera approve`` with a ScriptedBackend), artifacts carried between jobs as the Actions
artifact store would (zipped into the fake, downloaded through its REST API), the real
PyGithub client, and a local bare git repository as the remote. Every job gets its own fresh
clone, as on separate runners, and the token its workflow job gets (tests/e2e/conftest.py).
The forgeries of a compromised agent job are in test_trust_chain_e2e.py.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from chimera.github.trust.summary import parse_marker
from chimera.testing.github_fake import FakeFault, push_branch

if TYPE_CHECKING:
    from conftest import World  # tests/e2e/conftest.py: the harness and its `world` fixture

WEBHOOKS = Path(__file__).resolve().parents[1] / "data" / "github" / "webhooks"
SPEC = """\
requirements:
  - id: keeps-add
    defines: {path: calc.py, symbol: add, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
TOTAL_TASK = """The calculator needs a total() of a list.

```chimera
requirements:
  - id: total-defined
    defines: {path: calc.py, symbol: total, kind: function}
```
"""
RISKY_TASK = """Add the first database migration.

```chimera
requirements:
  - id: first-migration
    risk: high
    contains: {path: migrations/001_init.sql, pattern: 'CREATE TABLE items'}
```
"""


def payload(name: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WEBHOOKS / f"{name}.json").read_text(encoding="utf-8"))
    data["repository"]["full_name"] = "octo/app"
    data["repository"]["name"] = "app"
    data["repository"]["default_branch"] = "main"
    for path, value in changes.items():
        cur = data
        keys = path.split("__")
        for key in keys[:-1]:
            cur = cur[key]
        cur[keys[-1]] = value
    return data


def review_event(
    state: str, *, by: str, pr: int, head: str, body: str | None = None
) -> dict[str, Any]:
    """A real ``pull_request_review.submitted`` payload for branch ``chimera/issue-1``."""
    extra = {} if body is None else {"review__body": body}
    return payload(
        "pull_request_review.submitted",
        review__state=state,
        review__user__login=by,
        review__commit_id=head,
        sender__login=by,
        pull_request__number=pr,
        pull_request__head__ref="chimera/issue-1",
        pull_request__head__sha=head,
        **extra,
    )


def script(path: Path, turns: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"model": "e2e", "turns": turns}, sort_keys=False))
    return path


def card_turns(file: str, content: str) -> list[dict[str, Any]]:
    return [
        {"purpose": "plan", "text": f"1. Write {file}."},
        {
            "purpose": "act",
            "tool_calls": [{"name": "write_file", "arguments": {"path": file, "content": content}}],
        },
        {"purpose": "act", "text": f"Wrote {file}."},
        {"purpose": "review", "text": "APPROVE"},
    ]


def labeled(issue: int, sender: str, sender_type: str = "User") -> dict[str, Any]:
    return payload(
        "issues.labeled",
        label__name="chimera",
        issue__number=issue,
        sender__login=sender,
        sender__type=sender_type,
    )


@pytest.mark.slow
def test_label_to_pull_request_idempotent_and_fault_tolerant(world: World) -> None:
    world.model = "scripted:" + str(
        script(
            world.tmp / "model.yaml",
            card_turns("calc.py", CALC + "\n\ndef total(xs):\n    return sum(xs)\n"),
        )
    )
    world.fake.add_issue(
        "octo/app", title="Add total()", body=TOTAL_TASK, user="alice", labels=("chimera",)
    )
    event = labeled(1, "alice")
    writes_before_agent: list[int] = []

    def publish_meets_faults(artifacts: Path) -> None:
        # Publishing meets a lost reply on the PR POST, a secondary rate limit and a timeout.
        world.fake.inject(
            FakeFault(method="POST", path=r"/pulls$", status=500, after_write=True),
            FakeFault(
                method="GET",
                path=r"/issues/1$",
                status=403,
                retry_after=0.2,
                secondary_rate_limit=True,
            ),
            FakeFault(method="GET", path=r"/issues/1/comments$", status=None, delay=2.5),
        )

    def agent_wrote_nothing(artifacts: Path) -> None:
        writes_before_agent.append(len(world.fake.writes()))

    jobs = world.pipeline(
        "issues",
        event,
        run=501,
        after_decide=lambda: agent_wrote_nothing(world.tmp),
        forge=agent_wrote_nothing,
        tamper=publish_meets_faults,
    )
    gate, agent, verify, pub = (jobs[k] for k in ("decide", "agent", "verify", "publish"))
    assert gate["proceed"] == "true" and gate["mode"] == "run" and len(gate["base-sha"]) == 40
    assert writes_before_agent[0] == writes_before_agent[1]  # the agent job wrote nothing
    assert agent["status"] == "done" and agent["run-id"] == "gh-1-501"
    assert verify["verdict"] == "passed" and verify["base_sha"] == gate["base-sha"]
    artifacts = world.tmp / "artifacts-501"
    outcome = json.loads((artifacts / "outcome.json").read_text())
    assert outcome["kind"] == "run" and not outcome["empty_patch"]
    for name in (
        "patch.diff",
        "run/state.json",
        "run/audit.jsonl",
        "summary.md",
        "spec-report.json",
        "attempts.json",
    ):
        assert (artifacts / name).is_file(), name
    assert not (artifacts / "run" / "snapshots").exists()
    assert pub["rc"] == 0 and pub["status"] == "pr_opened"
    assert world.fake.pending_faults == 0
    (pull,) = world.repo.pulls()
    assert pull["head"] == "chimera/issue-1" and pull["base"] == "main" and not pull["draft"]
    assert pull["user"] == "github-actions[bot]"  # opened with the workflow's GITHUB_TOKEN
    assert pub["pr-number"] == str(pull["number"])
    assert "spec-change" in pull["labels"]  # the task's acceptance requirement lands in specs/
    assert "Closes #1." in pull["body"] and "`total-defined` | red | passed" in pull["body"]
    state = json.loads((artifacts / "run" / "state.json").read_text())
    assert state["audit_head"] and state["audit_head"] == agent["audit-head"]
    assert state["audit_head"] in pull["body"] and pub["audit-head"] in world.comments(1)[0]
    assert "https://github.example/octo/app/actions/runs/501" in pull["body"]
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["run_id"] == "gh-1-501" and marker["status"] == "ready"
    assert marker["base"] == gate["base-sha"] and marker["started_by"] == "alice"
    assert set(world.repo.issues[1]["labels"]) == {"chimera:pr-open"}
    assert len(world.comments(1)) == 1 and "Pull request opened" in world.comments(1)[0]
    shown = subprocess.run(
        ["git", "--git-dir", str(world.remote), "show", "chimera/issue-1:calc.py"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "def total" in shown.stdout
    # publish's own hash-chained audit log, for its artifact.
    log = world.tmp / "runner-501" / "chimera-publish" / "audit.jsonl"
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert events[:3] == ["agent_audit_head", "inputs", "recomputed"] and "decision" in events

    # The publish job is re-run: nothing new. A re-run of the workflow updates the same PR.
    env = world.decided_env(gate) | world.verified_env(verify)
    for run in (501, 502):
        if run == 502:  # a new run starts from the label, added again (decide checks it)
            world.repo.issues[1]["labels"].append("chimera")
        token = world.workflow_token(world.publish_perms)
        again = world.job(
            "publish",
            "issues",
            event,
            run=run,
            token=token,
            root=world.clone(token),
            artifacts=artifacts,
            **env,
        )
    assert again["status"] == "pr_updated" and again["pr-number"] == pub["pr-number"]
    assert len(world.repo.pulls()) == 1 and len(world.comments(1)) == 2
    assert world.repo.merge_attempts == []


def ci_events(world: World) -> list[str]:
    """The events that would start the project's CI on the PR (pull_request or push)."""
    return [
        f"{e.event}.{e.action}" if e.action else e.event
        for e in world.fake.triggered_events
        if e.event in ("pull_request", "push")
    ]


def test_risky_change_pauses_and_an_approval_resumes_it_in_another_process(
    world: World,
) -> None:
    world.model = "scripted:" + str(
        script(
            world.tmp / "model.yaml",
            card_turns("migrations/001_init.sql", "CREATE TABLE items (id integer);\n"),
        )
    )
    world.fake.add_issue(
        "octo/app", title="First migration", body=RISKY_TASK, user="alice", labels=("chimera",)
    )
    event = labeled(1, "alice")
    jobs = world.pipeline("issues", event, run=601)
    assert jobs["agent"]["status"] == "awaiting_approval"
    assert jobs["verify"]["verdict"] == "passed"
    pub = jobs["publish"]
    assert pub["status"] == "awaiting_approval"
    (pull,) = world.repo.pulls()
    assert pull["draft"] and "risk:high" in pull["labels"]
    assert pull["requested_reviewers"] == ["bob"]
    assert set(world.repo.issues[1]["labels"]) == {"chimera:awaiting-approval"}
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["paused"] and marker["status"] == "awaiting_approval"
    comments_before = len(world.comments(1))
    assert ci_events(world) == []  # GITHUB_TOKEN's push and PR start no workflow

    # Chimera's own removal of the trigger label cancels nothing.
    own = payload(
        "issues.unlabeled",
        label__name="chimera",
        issue__number=1,
        sender__login="github-actions[bot]",
    )
    app = world.app_token
    world.job("drain", "issues", own, run=602, token=app)
    assert world.repo.pulls()[0]["state"] == "open" and world.repo.pulls()[0]["draft"]
    assert "chimera:awaiting-approval" in world.repo.issues[1]["labels"]
    assert len(world.comments(1)) == comments_before

    head = world.repo.head_sha("chimera/issue-1")
    assert head is not None  # the run pushed its branch
    # The person who started the run cannot approve it; the refusal is explained on the PR.
    own_approval = review_event("approved", by="alice", pr=pull["number"], head=head)
    decide_token = world.workflow_token(world.decide_perms)
    refused = world.job("decide", "pull_request_review", own_approval, run=603, token=decide_token)
    assert refused["proceed"] == "false" and refused["start-ci"] == "false"
    assert any("triggered this run" in c for c in world.comments(pull["number"]))

    # bob's approval resumes the paused run on a new runner: a fresh clone, the run folder
    # from run 601's artifact; verify judges the cumulative patch from decide's base.
    approval = review_event("approved", by="bob", pr=pull["number"], head=head)
    jobs = world.pipeline("pull_request_review", approval, run=604)
    gate, resumed, done = jobs["decide"], jobs["agent"], jobs["publish"]
    assert gate["proceed"] == "true" and gate["mode"] == "resume" and gate["head-sha"] == head
    assert gate["base-sha"] == marker["base"] and gate["started-by"] == "alice"
    assert resumed["status"] == "done" and resumed["run-id"] == "gh-1-601"
    state = json.loads((world.tmp / "artifacts-604" / "run" / "state.json").read_text())
    assert state["approvals"][0]["by"] == "bob" and state["status"] == "done"
    assert any(c.path.endswith("/actions/runs/601/artifacts") for c in world.fake.calls)
    assert jobs["verify"]["verdict"] == "passed"
    assert done["status"] == "resumed"
    (pull,) = world.repo.pulls()
    assert not pull["draft"] and pull["state"] == "open"
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["status"] == "ready" and marker["workflow_run"] == "604"
    assert set(world.repo.issues[1]["labels"]) == {"chimera:pr-open"}
    assert pull["auto_merge"] is None and world.repo.merge_attempts == []
    assert "Approved change resumed" in world.comments(1)[-1]

    # The resumed run changed nothing more, so the head is the one bob approved; publish's
    # writes (GITHUB_TOKEN) started no CI. An approval of the head starts it now: the App
    # closes and reopens the PR, and the head stays the approved commit. One of an older
    # commit starts nothing.
    assert ci_events(world) == []
    now = world.repo.head_sha("chimera/issue-1")
    assert now is not None  # the run pushed its branch
    stale = review_event("approved", by="bob", pr=pull["number"], head=now)
    stale["review"]["commit_id"] = "1" * 40
    gate = world.job("decide", "pull_request_review", stale, run=605, token=decide_token)
    assert gate["start-ci"] == "false"
    assert (
        world.job("start-ci", "pull_request_review", stale, run=605, token=app)["status"]
        == "ignored"
    )
    assert ci_events(world) == []
    ok = review_event("approved", by="bob", pr=pull["number"], head=now)
    gate = world.job("decide", "pull_request_review", ok, run=606, token=decide_token)
    assert gate["proceed"] == "false" and gate["start-ci"] == "true"
    started = world.job("start-ci", "pull_request_review", ok, run=606, token=app)
    assert started["status"] == "started"
    assert ci_events(world) == ["pull_request.closed", "pull_request.reopened"]
    (pull,) = world.repo.pulls()
    assert pull["state"] == "open" and world.repo.head_sha("chimera/issue-1") == now


def test_three_quick_labels_with_a_queue_of_one_are_all_served_in_order(world: World) -> None:
    world.env["CHIMERA_MAX_OPEN_PRS"] = "1"
    labellers = {1: "alice", 2: "bob", 3: "alice"}
    for n in labellers:
        world.fake.add_issue(
            "octo/app", title=f"Task {n}", body="b", user="alice", labels=("chimera",)
        )
    gates = [
        world.job(
            "decide",
            "issues",
            labeled(n, who),
            run=700 + n,
            token=world.workflow_token(world.decide_perms),
        )
        for n, who in labellers.items()
    ]
    assert [g["proceed"] for g in gates] == ["true", "false", "false"]
    assert [g["status"] for g in gates] == ["running", "queued", "queued"]
    served = [1]
    work = world.clone()
    for round_ in range(2):
        current = served[-1]
        # The current run publishes (its PR holds the slot), then its PR is merged.
        push_branch(
            work, f"chimera/issue-{current}", {f"done-{current}.txt": "done\n"}, start="origin/main"
        )
        bot = world.app_token
        from chimera.github.client.client import GitHubClient
        from chimera.github.queue.queue import ChangeQueue

        client = GitHubClient("octo/app", bot, api_url=world.fake.api_url, throttle=False)
        pr, _ = client.create_pull(
            title="t", body="b", head=f"chimera/issue-{current}", base="main", draft=False
        )
        # Publishing ends the run: its claim (the outcome comment) no longer holds a slot.
        ChangeQueue(client, identities=("chimera-app[bot]", "github-actions[bot]")).release(current)
        schedule = {
            "schedule": "*/15 * * * *",
            "repository": {"full_name": "octo/app", "default_branch": "main"},
        }
        assert (
            world.job("drain", "schedule", schedule, run=710 + round_, token=world.app_token)[
                "started"
            ]
            == ""
        )  # the open PR holds the slot
        world.repo.issues[pr.number]["state"] = "closed"
        world.repo.issues[pr.number]["merged_at"] = "2026-01-01T00:00:00Z"
        closed = payload(
            "pull_request.closed",
            pull_request__merged=True,
            pull_request__number=pr.number,
            pull_request__head__ref=f"chimera/issue-{current}",
            sender__login="alice",
        )
        drained = world.job(
            "drain", "pull_request", closed, run=720 + round_, token=world.app_token
        )
        nxt = current + 1
        assert drained["started"] == str(nxt)
        dispatch = world.repo.dispatches[-1]
        sent = dict(dispatch["inputs"])
        assert re.fullmatch(r"[0-9a-f]{16}", sent.pop("claim"))  # the claim only its run takes
        assert sent == {"issue-number": str(nxt), "labeller": labellers[nxt]}
        assert dispatch["by"] == "chimera-app[bot]"
        # The dispatched run's gate: Chimera sent it, the original labeller's permission counts.
        started = payload(
            "workflow_dispatch", inputs=dispatch["inputs"], sender__login="chimera-app[bot]"
        )
        gate = world.job(
            "decide",
            "workflow_dispatch",
            started,
            run=730 + round_,
            token=world.workflow_token(world.decide_perms),
        )
        assert gate["proceed"] == "true" and gate["issue"] == str(nxt)
        served.append(nxt)
    assert served == [1, 2, 3]
    assert [d["inputs"]["issue-number"] for d in world.repo.dispatches] == ["2", "3"]
    assert all("chimera:queued" not in world.repo.issues[n]["labels"] for n in labellers)
    for n in (2, 3):
        assert sum("Queued" in c for c in world.comments(n)) == 1


def test_labels_from_people_without_write_access_or_bots_only_explain(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.fake.add_issue("octo/app", title="Do it", body="b", user="mallory", labels=("chimera",))
    for run, (who, kind) in enumerate((("mallory", "User"), ("helper[bot]", "Bot")), start=801):
        event = labeled(1, who, kind)
        # decide says no: the workflow runs no agent, verify or publish job after it.
        jobs = world.pipeline("issues", event, run=run)
        assert jobs["decide"]["proceed"] == "false" and list(jobs) == ["decide"]
        assert "base-sha" not in jobs["decide"]
        # An agent job started anyway has no decide outputs to start from: it refuses in one
        # line and runs nothing.
        capsys.readouterr()
        artifacts = world.tmp / f"artifacts-{run}"
        agent = world.job(
            "agent",
            "issues",
            event,
            run=run,
            token=world.workflow_token(world.agent_perms),
            root=world.clone(),
            artifacts=artifacts,
        )
        assert agent["rc"] == 2 and "status" not in agent
        (said,) = capsys.readouterr().err.strip().splitlines()
        assert "agent job starts only from decide's outputs" in said
        assert not (artifacts / "patch.diff").exists()
    texts = world.comments(1)
    assert len(texts) == 2  # one explanation per event, not one per job
    assert "'read' role" in texts[0] and "is a bot" in texts[1]
    assert world.repo.issues[1]["labels"] == ["chimera"]
    assert world.repo.pulls() == [] and world.repo.dispatches == []


def test_changes_requested_reruns_on_the_same_branch_with_the_review_as_feedback(
    world: World,
) -> None:
    first = card_turns("calc.py", CALC + "\n\ndef total(xs):\n    return 0\n")
    world.model = "scripted:" + str(script(world.tmp / "first.yaml", first))
    world.fake.add_issue(
        "octo/app", title="Add total()", body=TOTAL_TASK, user="alice", labels=("chimera",)
    )
    opened = world.pipeline("issues", labeled(1, "alice"), run=901)["publish"]
    (pull,) = world.repo.pulls()
    head = world.repo.head_sha("chimera/issue-1")
    assert head is not None  # the run pushed its branch

    feedback = "total() must return the sum of the list, not 0."
    second = card_turns("calc.py", CALC + "\n\ndef total(xs):\n    return sum(xs)\n")
    second[0]["expect"] = [feedback]  # the review reached the model (as fenced, tainted text)
    world.model = "scripted:" + str(script(world.tmp / "second.yaml", second))
    review = review_event(
        "changes_requested", by="bob", pr=pull["number"], head=head, body=feedback
    )
    jobs = world.pipeline("pull_request_review", review, run=902)
    assert jobs["decide"]["proceed"] == "true" and jobs["decide"]["mode"] == "rerun"
    assert jobs["decide"]["head-sha"] == head
    rerun = jobs["agent"]
    assert rerun["status"] == "done" and rerun["run-id"] == "gh-1-902"
    state = json.loads((world.tmp / "artifacts-902" / "run" / "state.json").read_text())
    assert feedback in state["task"] and state["tainted"]
    updated = jobs["publish"]
    assert updated["status"] == "pr_updated" and updated["pr-number"] == opened["pr-number"]
    assert len(world.repo.pulls()) == 1
    shown = subprocess.run(
        ["git", "--git-dir", str(world.remote), "show", "chimera/issue-1:calc.py"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "return sum(xs)" in shown.stdout
    marker = parse_marker(world.repo.pulls()[0]["body"], "pr")
    assert marker is not None and marker["run_id"] == "gh-1-902"
