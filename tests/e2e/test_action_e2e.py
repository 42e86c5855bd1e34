"""End to end, offline: webhook event files → ``chimera action`` modes → the GitHub fake.

The pieces are the real ones: real @octokit/webhooks-examples payloads (adapted to the test
repository), ``chimera action`` (the agent mode in its own process, running ``chimera run`` /
``chimera approve`` with a ScriptedBackend), artifacts carried between jobs as the Actions
artifact store would (zipped into the fake, downloaded through its REST API), the real
PyGithub client, and a local bare git repository as the remote. Every job gets its own fresh
clone, as on separate runners.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.cli import main
from chimera.github.summary import parse_marker
from chimera.testing.github_fake import (
    FakeFault,
    FakeRepo,
    GitHubFake,
    make_bare_remote,
    push_branch,
)

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


@dataclass
class World:
    """The fake GitHub, the remote, and helpers that act as the workflow's jobs."""

    tmp: Path
    fake: GitHubFake
    repo: FakeRepo
    remote: Path
    model: str = ""
    env: dict[str, str] = field(default_factory=dict)
    clones: int = 0

    def clone(self) -> Path:
        self.clones += 1
        dest = self.tmp / f"checkout-{self.clones}"
        subprocess.run(
            ["git", "clone", "-q", str(self.remote), str(dest)], check=True, capture_output=True
        )
        return dest

    def _env(
        self, event: str, data: dict[str, Any], run: int, login: str, extra: dict[str, str]
    ) -> dict[str, str]:
        event_path = self.tmp / f"event-{run}-{event}-{len(self.fake.calls)}.json"
        event_path.write_text(json.dumps(data))
        output = self.tmp / f"output-{run}-{len(self.fake.calls)}.txt"
        output.write_text("")
        runner_temp = self.tmp / f"runner-{run}"
        runner_temp.mkdir(exist_ok=True)
        return {
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": "octo/app",
            "GITHUB_API_URL": self.fake.api_url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_RUN_ID": str(run),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(self.tmp / f"summary-{run}.md"),
            "RUNNER_TEMP": str(runner_temp),
            "CHIMERA_GITHUB_TOKEN": self.fake.add_token(login),
            "CHIMERA_BOT_LOGIN": "chimera-bot",
            "CHIMERA_GITHUB_THROTTLE": "0",
            "CHIMERA_GITHUB_BACKOFF": "0.01",
            "CHIMERA_GITHUB_TIMEOUT": "2",
            "CHIMERA_GITHUB_MAX_WAIT": "5",
            "CHIMERA_RISK_REVIEWERS": "bob",
            "CHIMERA_MODEL": self.model,
            **self.env,
            **extra,
        }

    def job(
        self,
        mode: str,
        event: str,
        data: dict[str, Any],
        *,
        run: int,
        login: str,
        root: Path | None = None,
        artifacts: Path | None = None,
        separate_process: bool = False,
        **extra: str,
    ) -> dict[str, Any]:
        """Run one ``chimera action`` job; returns its step outputs (and ``rc``)."""
        env = self._env(event, data, run, login, extra)
        argv = ["action", "--mode", mode]
        if root is not None:
            argv += ["--root", str(root)]
        if artifacts is not None:
            argv += ["--artifacts", str(artifacts)]
        if separate_process:
            full = {
                k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CHIMERA_"))
            }
            proc = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import sys; from chimera.cli import main; sys.exit(main(sys.argv[1:]))",
                    *argv,
                ],
                env=full | env,
                capture_output=True,
                text=True,
                timeout=240,
                check=False,
            )
            rc = proc.returncode
            assert rc == 0, proc.stderr + proc.stdout
        else:
            saved = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                rc = main(argv)
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        return _outputs(Path(env["GITHUB_OUTPUT"])) | {"rc": rc}

    def upload(self, run: int, folder: Path) -> None:
        """What actions/upload-artifact does at the end of the agent job."""
        self.fake.add_artifact("octo/app", run, "chimera-run", folder)

    def comments(self, issue: int) -> list[str]:
        return [c["body"] for c in self.repo.issue_comments(issue)]


def _outputs(path: Path) -> dict[str, Any]:
    lines = path.read_text().splitlines()
    out: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        key, _, delim = lines[i].partition("<<")
        value: list[str] = []
        i += 1
        while lines[i] != delim:
            value.append(lines[i])
            i += 1
        out[key] = "\n".join(value)
        i += 1
    return out


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    remote, _ = make_bare_remote(
        tmp_path / "origin",
        {"specs/app.yaml": SPEC, "calc.py": CALC, ".gitignore": ".chimera/\n"},
    )
    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=remote)
        for login, role in (
            ("alice", "write"),
            ("bob", "maintain"),
            ("chimera-bot", "write"),
            ("github-actions[bot]", "write"),
            ("reader-token[bot]", "read"),
        ):
            fake.add_user(login, bot=login.endswith("[bot]"))
            repo.collaborators[login] = role
        fake.add_user("mallory")
        fake.add_user("helper[bot]", bot=True)
        repo.collaborators["helper[bot]"] = "write"
        yield World(tmp_path, fake, repo, remote)


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
    gate = world.job("decide", "issues", event, run=501, login="github-actions[bot]")
    assert gate["proceed"] == "true" and "chimera:running" in world.repo.issues[1]["labels"]

    artifacts = world.tmp / "artifacts-501"
    agent = world.job(
        "agent",
        "issues",
        event,
        run=501,
        login="reader-token[bot]",
        root=world.clone(),
        artifacts=artifacts,
        separate_process=True,
    )
    assert agent["status"] == "done" and agent["run-id"] == "gh-1-501"
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
    # The agent job wrote nothing to GitHub (its token is read-only anyway).
    assert all(c.login != "reader-token[bot]" or c.method == "GET" for c in world.fake.calls)
    world.upload(501, artifacts)

    # Publishing meets a lost reply on the PR POST, a secondary rate limit and a timeout.
    world.fake.inject(
        FakeFault(method="POST", path=r"/pulls$", status=500, after_write=True),
        FakeFault(
            method="GET", path=r"/issues/1$", status=403, retry_after=0.2, secondary_rate_limit=True
        ),
        FakeFault(method="GET", path=r"/issues/1/comments$", status=None, delay=2.5),
    )
    publish_root = world.clone()
    pub = world.job(
        "publish",
        "issues",
        event,
        run=501,
        login="chimera-bot",
        root=publish_root,
        artifacts=artifacts,
    )
    assert pub["rc"] == 0 and pub["status"] == "pr_opened"
    assert world.fake.pending_faults == 0
    (pull,) = world.repo.pulls()
    assert pull["head"] == "chimera/issue-1" and pull["base"] == "main" and not pull["draft"]
    assert pub["pr-number"] == str(pull["number"])
    assert "spec-change" in pull["labels"]  # the task's acceptance requirement lands in specs/
    assert "Closes #1." in pull["body"] and "`total-defined` | red | passed" in pull["body"]
    state = json.loads((artifacts / "run" / "state.json").read_text())
    assert state["audit_head"] and state["audit_head"] in pull["body"]
    assert "https://github.example/octo/app/actions/runs/501" in pull["body"]
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["run_id"] == "gh-1-501" and marker["status"] == "ready"
    assert set(world.repo.issues[1]["labels"]) == {"chimera:pr-open"}
    assert len(world.comments(1)) == 1 and "Pull request opened" in world.comments(1)[0]
    shown = subprocess.run(
        ["git", "--git-dir", str(world.remote), "show", "chimera/issue-1:calc.py"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "def total" in shown.stdout

    # The publish job is re-run: nothing new. A re-run of the workflow updates the same PR.
    world.job(
        "publish",
        "issues",
        event,
        run=501,
        login="chimera-bot",
        root=world.clone(),
        artifacts=artifacts,
    )
    again = world.job(
        "publish",
        "issues",
        event,
        run=502,
        login="chimera-bot",
        root=world.clone(),
        artifacts=artifacts,
    )
    assert again["status"] == "pr_updated" and again["pr-number"] == pub["pr-number"]
    assert len(world.repo.pulls()) == 1 and len(world.comments(1)) == 2
    assert world.repo.merge_attempts == []


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
    assert (
        world.job("decide", "issues", event, run=601, login="github-actions[bot]")["proceed"]
        == "true"
    )
    artifacts = world.tmp / "artifacts-601"
    agent = world.job(
        "agent",
        "issues",
        event,
        run=601,
        login="reader-token[bot]",
        root=world.clone(),
        artifacts=artifacts,
        separate_process=True,
    )
    assert agent["status"] == "awaiting_approval"
    world.upload(601, artifacts)
    pub = world.job(
        "publish",
        "issues",
        event,
        run=601,
        login="chimera-bot",
        root=world.clone(),
        artifacts=artifacts,
    )
    assert pub["status"] == "awaiting_approval"
    (pull,) = world.repo.pulls()
    assert pull["draft"] and "risk:high" in pull["labels"]
    assert pull["requested_reviewers"] == ["bob"]
    assert set(world.repo.issues[1]["labels"]) == {"chimera:awaiting-approval"}
    comments_before = len(world.comments(1))

    # Chimera's own removal of the trigger label cancels nothing.
    own = payload(
        "issues.unlabeled", label__name="chimera", issue__number=1, sender__login="chimera-bot"
    )
    world.job("drain", "issues", own, run=602, login="chimera-bot")
    assert world.repo.pulls()[0]["state"] == "open" and world.repo.pulls()[0]["draft"]
    assert "chimera:awaiting-approval" in world.repo.issues[1]["labels"]
    assert len(world.comments(1)) == comments_before

    head = world.repo.head_sha("chimera/issue-1")
    # The person who started the run cannot approve it; the refusal is explained on the PR.
    own_approval = review_event("approved", by="alice", pr=pull["number"], head=head)
    refused = world.job(
        "decide", "pull_request_review", own_approval, run=603, login="github-actions[bot]"
    )
    assert refused["proceed"] == "false"
    assert any("triggered this run" in c for c in world.comments(pull["number"]))

    approval = review_event("approved", by="bob", pr=pull["number"], head=head)
    gate = world.job(
        "decide", "pull_request_review", approval, run=604, login="github-actions[bot]"
    )
    assert gate["proceed"] == "true"
    # A new runner: a fresh clone at main; the run folder comes from run 601's artifact.
    resumed_artifacts = world.tmp / "artifacts-604"
    resumed = world.job(
        "agent",
        "pull_request_review",
        approval,
        run=604,
        login="reader-token[bot]",
        root=world.clone(),
        artifacts=resumed_artifacts,
        separate_process=True,
    )
    assert resumed["status"] == "done" and resumed["run-id"] == "gh-1-601"
    state = json.loads((resumed_artifacts / "run" / "state.json").read_text())
    assert state["approvals"][0]["by"] == "bob" and state["status"] == "done"
    assert any(c.path.endswith("/actions/runs/601/artifacts") for c in world.fake.calls)
    world.upload(604, resumed_artifacts)
    done = world.job(
        "publish",
        "pull_request_review",
        approval,
        run=604,
        login="chimera-bot",
        root=world.clone(),
        artifacts=resumed_artifacts,
    )
    assert done["status"] == "resumed"
    (pull,) = world.repo.pulls()
    assert not pull["draft"] and pull["state"] == "open"
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["status"] == "ready" and marker["workflow_run"] == "604"
    assert set(world.repo.issues[1]["labels"]) == {"chimera:pr-open"}
    assert pull["auto_merge"] is None and world.repo.merge_attempts == []
    assert "Approved change resumed" in world.comments(1)[-1]


def test_three_quick_labels_with_a_queue_of_one_are_all_served_in_order(world: World) -> None:
    world.env["CHIMERA_MAX_OPEN_PRS"] = "1"
    labellers = {1: "alice", 2: "bob", 3: "alice"}
    for n in labellers:
        world.fake.add_issue(
            "octo/app", title=f"Task {n}", body="b", user="alice", labels=("chimera",)
        )
    gates = [
        world.job("decide", "issues", labeled(n, who), run=700 + n, login="github-actions[bot]")
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
        bot = world.fake.add_token("chimera-bot")
        from chimera.github.client import GitHubClient

        client = GitHubClient("octo/app", bot, api_url=world.fake.api_url, throttle=False)
        pr, _ = client.create_pull(
            title="t", body="b", head=f"chimera/issue-{current}", base="main", draft=False
        )
        client.remove_label(current, "chimera:running")
        schedule = {
            "schedule": "*/15 * * * *",
            "repository": {"full_name": "octo/app", "default_branch": "main"},
        }
        assert (
            world.job("drain", "schedule", schedule, run=710 + round_, login="chimera-bot")[
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
        drained = world.job("drain", "pull_request", closed, run=720 + round_, login="chimera-bot")
        nxt = current + 1
        assert drained["started"] == str(nxt)
        dispatch = world.repo.dispatches[-1]
        assert dispatch["inputs"] == {"issue-number": str(nxt), "labeller": labellers[nxt]}
        assert dispatch["by"] == "chimera-bot"
        # The dispatched run's gate: Chimera sent it, the original labeller's permission counts.
        started = payload(
            "workflow_dispatch", inputs=dispatch["inputs"], sender__login="chimera-bot"
        )
        gate = world.job(
            "decide", "workflow_dispatch", started, run=730 + round_, login="github-actions[bot]"
        )
        assert gate["proceed"] == "true" and gate["issue"] == str(nxt)
        served.append(nxt)
    assert served == [1, 2, 3]
    assert [d["inputs"]["issue-number"] for d in world.repo.dispatches] == ["2", "3"]
    assert all("chimera:queued" not in world.repo.issues[n]["labels"] for n in labellers)
    for n in (2, 3):
        assert sum("Queued" in c for c in world.comments(n)) == 1


def test_labels_from_people_without_write_access_or_bots_only_explain(world: World) -> None:
    world.fake.add_issue("octo/app", title="Do it", body="b", user="mallory", labels=("chimera",))
    for run, (who, kind) in enumerate((("mallory", "User"), ("helper[bot]", "Bot")), start=801):
        event = labeled(1, who, kind)
        gate = world.job("decide", "issues", event, run=run, login="github-actions[bot]")
        assert gate["proceed"] == "false"
        artifacts = world.tmp / f"artifacts-{run}"
        agent = world.job(
            "agent",
            "issues",
            event,
            run=run,
            login="reader-token[bot]",
            root=world.clone(),
            artifacts=artifacts,
        )
        assert agent["status"] == "ignored"
        assert not (artifacts / "patch.diff").exists()
        world.job(
            "publish",
            "issues",
            event,
            run=run,
            login="chimera-bot",
            root=world.clone(),
            artifacts=artifacts,
        )
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
    event = labeled(1, "alice")
    world.job("decide", "issues", event, run=901, login="github-actions[bot]")
    artifacts = world.tmp / "artifacts-901"
    world.job(
        "agent",
        "issues",
        event,
        run=901,
        login="reader-token[bot]",
        root=world.clone(),
        artifacts=artifacts,
        separate_process=True,
    )
    world.upload(901, artifacts)
    opened = world.job(
        "publish",
        "issues",
        event,
        run=901,
        login="chimera-bot",
        root=world.clone(),
        artifacts=artifacts,
    )
    (pull,) = world.repo.pulls()
    head = world.repo.head_sha("chimera/issue-1")

    feedback = "total() must return the sum of the list, not 0."
    second = card_turns("calc.py", CALC + "\n\ndef total(xs):\n    return sum(xs)\n")
    second[0]["expect"] = [feedback]  # the review reached the model (as fenced, tainted text)
    world.model = "scripted:" + str(script(world.tmp / "second.yaml", second))
    review = review_event(
        "changes_requested", by="bob", pr=pull["number"], head=head, body=feedback
    )
    assert (
        world.job("decide", "pull_request_review", review, run=902, login="github-actions[bot]")[
            "proceed"
        ]
        == "true"
    )
    rerun_artifacts = world.tmp / "artifacts-902"
    rerun = world.job(
        "agent",
        "pull_request_review",
        review,
        run=902,
        login="reader-token[bot]",
        root=world.clone(),
        artifacts=rerun_artifacts,
        separate_process=True,
    )
    assert rerun["status"] == "done" and rerun["run-id"] == "gh-1-902"
    state = json.loads((rerun_artifacts / "run" / "state.json").read_text())
    assert feedback in state["task"] and state["tainted"]
    world.upload(902, rerun_artifacts)
    updated = world.job(
        "publish",
        "pull_request_review",
        review,
        run=902,
        login="chimera-bot",
        root=world.clone(),
        artifacts=rerun_artifacts,
    )
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
