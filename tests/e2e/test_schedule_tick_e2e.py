"""The schedules' tick end to end on the GitHub fake, with an injected clock.

The tick (Chimera's App token, the journal branch on the fake's git remote) commits its
journal through ``createCommitOnBranch``, so GitHub signs it for the App, files the job's
issue labelled ``chimera:schedule`` and dispatches the fix workflow; decide admits the
dispatch because Chimera's own identity added the label; agent, verify and publish run as
separate jobs (tests/e2e/conftest.py); publish, with the App token too, records the run's
``finish`` in the journal, which a fresh replay trusts. A second tick for the same fire time
files nothing; a commit pushed with git by any other write token replays untrusted; without
an App token a real SSH signing key is the second way, and with neither the tick refuses in
one line; a person's ``chimera:schedule`` label is refused with the reason; a broken
declaration fails the tick with one ``file:line:col`` line before any API call.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from chimera.errors import GitHubPermissionDenied
from chimera.github.action.context import ActionContext, GitHubAccess
from chimera.github.client.client import GitHubClient, RetryPolicy
from chimera.github.jobs.tick import LABEL, TickResult, run_tick
from chimera.github.queue.claims import bare_claim, new_token
from chimera.github.trust.schedule_journal import journal_for, journal_trust
from chimera.github.trust.settings import ActionSettings
from chimera.scheduler.clock import FixedClock
from chimera.scheduler.journal import GitJournal, Replay
from chimera.scheduler.state import FinishOp, dump_ops
from chimera.testing.github_fake import push_branch

if TYPE_CHECKING:
    from conftest import World  # tests/e2e/conftest.py: the harness and its `world` fixture

APP = "chimera-app[bot]"
WEBHOOKS = Path(__file__).resolve().parents[1] / "data" / "github" / "webhooks"
CALC = "def add(a, b):\n    return a + b\n"
TASK = """The calculator needs a total() of a list.

```chimera
requirements:
  - id: total-defined
    defines: {path: calc.py, symbol: total, kind: function}
```
"""
SCHEDULES = {
    "schedules": [
        {"id": "nightly-total", "cron": {"expr": "0 6 * * *", "timezone": "UTC"}, "task": TASK},
        {
            "id": "spec-green",
            "cron": {"expr": "0 6 * * *", "timezone": "UTC"},
            "check": "spec-green",
        },
    ]
}
TICK_PERMS = {"contents": "write", "issues": "write", "actions": "write", "checks": "read"}


def payload(name: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WEBHOOKS / f"{name}.json").read_text(encoding="utf-8"))
    data["repository"] |= {"full_name": "octo/app", "name": "app", "default_branch": "main"}
    for path, value in changes.items():
        cur = data
        keys = path.split("__")
        for key in keys[:-1]:
            cur = cur[key]
        cur[keys[-1]] = value
    return data


class Ticker:
    """Runs ``chimera action --mode tick``'s job as the tick workflow would, on a fresh
    checkout of main each time, with the clock the test sets."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.token = world.fake.add_app_token("chimera-app", repos=(), permissions=TICK_PERMS)
        self.settings = ActionSettings.from_env({"CHIMERA_BOT_LOGIN": APP})

    def tick(self, run: int, at: datetime, key: Path | None = None) -> TickResult:
        ctx = ActionContext(
            event_name="schedule",
            payload={"schedule": "*/15 * * * *", "repository": {"full_name": "octo/app"}},
            repository_env="octo/app",
            workflow_run=str(run),
            run_attempt="1",
            github=GitHubAccess(
                token=self.token,
                api_url=self.world.fake.api_url,
                retry=RetryPolicy(attempts=2, backoff_s=0.01, max_wait_s=1, timeout_s=5),
                throttle=False,
            ),
        )
        root = self.world.clone(self.token)
        return run_tick(ctx, self.settings, root, clock=FixedClock(at), signing_key=key)

    def journal(self) -> GitJournal:
        return journal_for(self.world.clone(), self.settings, None)

    def replay(self) -> Replay:
        """A fresh replay with the tick's own trust (GitHub's word, asked with a read token)."""
        client = GitHubClient(
            "octo/app", self.world.app_token, api_url=self.world.fake.api_url, throttle=False
        )
        journal = self.journal()
        return journal.replay(journal_trust(client, self.settings, journal), tip=journal.fetch())

    def root_only_untrusted(self, replay: Replay) -> bool:
        """Only the branch's empty root is untrusted: git pushed it (``createCommitOnBranch``
        cannot start a branch) and it carries no operations."""
        (root,) = self.journal().store.history(replay.tip or "")[:1]
        return [sha for sha, _ in replay.untrusted] == [root.sha] and root.parent == ""


@pytest.fixture
def ticker(world: World) -> Ticker:
    files = {".chimera.d/schedules/jobs.yaml": yaml.safe_dump(SCHEDULES, sort_keys=False)}
    push_branch(world.clone(), "main", files, start="origin/main", message="schedules")
    world.script_calc(world.total_calc)
    return Ticker(world)


@pytest.fixture
def signing_key(world: World, ticker: Ticker) -> Path:
    """The second way, for a job without an App token: an SSH key whose public half is in
    ``.chimera.d/journal-signers`` on main, its private half in the workflow's secret."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is not installed (it signs the journal's commits)")
    key = world.tmp / "journal_key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "journal", "-f", str(key)],
        check=True,
    )
    public = key.with_suffix(".pub").read_text().strip()
    signers = {
        ".chimera.d/journal-signers": f'{APP}@users.noreply.github.com namespaces="git" {public}\n'
    }
    push_branch(world.clone(), "main", signers, start="origin/main", message="journal signers")
    world.env["CHIMERA_JOURNAL_SIGNING_KEY"] = key.read_text()
    return key


def publish_as_the_app(world: World) -> None:
    """The publish job gets Chimera's App token (as with actions/create-github-app-token)."""
    plain = world.workflow_token

    def token(permissions: dict[str, str]) -> str:
        return str(world.app_token) if "checks" in permissions else str(plain(permissions))

    object.__setattr__(world, "workflow_token", token)


def red_spec_check(world: World) -> None:
    """The Spec check run of main, red (as chimera-check.yml's `spec` job would leave it)."""
    sha = world.repo.head_sha("main")
    assert sha is not None
    gh = world.fake.pygithub(world.app_token).get_repo("octo/app")
    gh.create_check_run(
        name="spec",
        head_sha=sha,
        status="completed",
        conclusion="failure",
        output={"title": "1 red", "summary": "red: keeps-add"},
    )


@pytest.mark.slow
def test_a_scheduled_task_is_filed_once_admitted_run_and_finished(
    world: World, ticker: Ticker
) -> None:
    publish_as_the_app(world)
    day = datetime(2031, 3, 3, tzinfo=UTC)
    first = ticker.tick(900, day + timedelta(hours=5))
    assert set(first.plan.baselined) == {"nightly-total", "spec-green"} and first.plan.runs == ()
    assert world.repo.issues == {} and world.repo.dispatches == []
    assert world.repo.verified_commits.get(first.journal_head) == APP  # GitHub signed it

    red_spec_check(world)
    due = ticker.tick(901, day + timedelta(hours=6, minutes=5))
    assert [r.job for r in due.plan.runs] == ["nightly-total", "spec-green"]
    titles = {i["title"]: n for n, i in world.repo.issues.items()}
    task_issue = titles["Scheduled: nightly-total"]
    red_issue = titles["The Spec is red on the default branch"]
    for number in (task_issue, red_issue):
        issue = world.repo.issues[number]
        assert issue["user"] == APP and LABEL in issue["labels"]
    assert any("red: keeps-add" in c for c in world.comments(red_issue))
    assert TASK.strip() in world.repo.issues[task_issue]["body"]
    # The new issue's label event is the run's start: the tick dispatches nothing for it.
    assert world.repo.dispatches == []

    # An overlapping tick for the same fire time (another runner, a minute later) claims
    # nothing: the journal already holds the fire; no second issue, no second dispatch.
    issues = len(world.repo.issues)
    again = ticker.tick(902, day + timedelta(hours=6, minutes=6))
    assert again.plan.runs == () and len(world.repo.issues) == issues
    assert world.repo.dispatches == []
    assert ticker.replay().state.job("nightly-total").in_flight == ("901.1", due.plan.now)

    # The report issue's label event (the App's, no task marker) starts nothing.
    quiet = world.job(
        "decide", "issues", filed_event(world, red_issue), run=950,
        token=world.workflow_token(world.decide_perms),
    )  # fmt: skip
    assert quiet["proceed"] == "false" and quiet["status"] == "ignore"
    # The task issue's label event (the App filed it) is the scheduled run, with no dispatch.
    jobs = world.pipeline("issues", filed_event(world, task_issue), run=951)
    gate, pub = jobs["decide"], jobs["publish"]
    assert gate["proceed"] == "true" and gate["started-by"] == APP
    assert world.repo.dispatches == []
    assert pub["rc"] == 0 and pub["status"] == "pr_opened"
    (pull,) = world.repo.pulls()
    assert pull["head"] == f"chimera/issue-{task_issue}"

    # publish recorded the finish, GitHub-signed for the App: a fresh replay trusts it and
    # the job is free.
    replay = ticker.replay()
    assert world.repo.verified_commits.get(replay.tip or "") == APP
    assert ticker.root_only_untrusted(replay) and replay.problems == ()
    assert replay.state.job("nightly-total").in_flight is None
    finish = [op for op in replay.ops if op.op == "finish"]
    assert [(op.run, op.job) for op in finish] == [("901.1", "nightly-total")]

    # The next fire finds the job's issue still open: no label event now, so it dispatches.
    ticker.tick(903, day + timedelta(days=1, hours=6, minutes=5))
    (dispatch,) = world.repo.dispatches
    assert dispatch["by"] == APP
    assert dispatch["inputs"] == {"issue-number": str(task_issue), "labeller": APP}


def filed_event(world: World, number: int) -> dict[str, Any]:
    """The ``issues.labeled`` event of the tick filing issue ``number`` (the App's label)."""
    return payload(
        "issues.labeled",
        label__name=LABEL,
        issue__number=number,
        issue__body=world.repo.issues[number]["body"],
        sender__login=APP,
        sender__type="Bot",
    )


def test_a_queued_scheduled_issue_says_which_schedule_filed_it(
    world: World, ticker: Ticker
) -> None:
    world.env["CHIMERA_MAX_OPEN_PRS"] = "1"
    world.fake.add_issue(
        "octo/app", title="busy", body="b", user="alice", labels=("chimera:running",),
        labelled_by=APP,
    )  # fmt: skip
    # The running issue's claim on the one slot: its "running" comment, posted by the App.
    gh = world.fake.pygithub(world.app_token)
    gh.get_repo("octo/app").get_issue(1).create_comment(bare_claim(1, new_token()))
    day = datetime(2031, 3, 3, tzinfo=UTC)
    ticker.tick(910, day + timedelta(hours=5))
    ticker.tick(911, day + timedelta(hours=6, minutes=5))
    (task_issue,) = [n for n, i in world.repo.issues.items() if i["title"].startswith("Scheduled")]
    gate = world.job(
        "decide", "issues", filed_event(world, task_issue), run=912,
        token=world.workflow_token(world.decide_perms),
    )  # fmt: skip
    assert gate["proceed"] == "false" and gate["status"] == "queued"
    (queued,) = [c for c in world.comments(task_issue) if "Chimera: Queued" in c]
    assert "it was filed by schedule `nightly-total`" in queued
    assert "added the label" not in queued and "Remove the label" not in queued
    assert world.repo.dispatches == []


def test_a_persons_schedule_label_is_refused_with_the_reason(world: World) -> None:
    world.fake.add_issue(
        "octo/app", title="Sneaky", body="b", user="alice", labels=(LABEL,), labelled_by="alice"
    )
    event = payload("issues.labeled", label__name=LABEL, issue__number=1, sender__login="alice")
    gate = world.job(
        "decide", "issues", event, run=960, token=world.workflow_token(world.decide_perms)
    )
    assert gate["proceed"] == "false" and gate["status"] == "ignore"
    (reply,) = world.comments(1)
    assert "only Chimera's tick adds it" in reply and "'chimera' label instead" in reply
    # A dispatch naming Chimera as the labeller does not launder a person's label either.
    inputs = {"issue-number": "1", "labeller": APP}
    started = payload("workflow_dispatch", inputs=inputs, sender__login=APP)
    gate = world.job(
        "decide", "workflow_dispatch", started, run=961,
        token=world.workflow_token(world.decide_perms),
    )  # fmt: skip
    assert gate["proceed"] == "false" and gate["status"] == "refused"
    assert "was added by alice, not by Chimera's own identity" in world.comments(1)[-1]
    assert "chimera:running" not in world.repo.issues[1]["labels"]


def test_a_broken_declaration_fails_the_tick_before_any_api_call(
    world: World, ticker: Ticker, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = "schedules:\n  - id: nightly\n    cron: {expr: '0 6 * * *'}\n    tsak: typo\n"
    push_branch(
        world.clone(),
        "main",
        {".chimera.d/schedules/broken.yaml": broken},
        start="origin/main",
        message="broken",
    )
    root = world.clone(ticker.token)
    calls = len(world.fake.calls)
    capsys.readouterr()
    out = world.job(
        "tick", "schedule", {"schedule": "*/15 * * * *"}, run=970, token=ticker.token, root=root
    )
    assert out["rc"] == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert re.search(r"\.chimera\.d/schedules/broken\.yaml:\d+:\d+: .*nothing ran$", err[0])
    # No API call at all (the only requests are this job's own clone, before it started).
    assert [c for c in world.fake.calls[calls:] if not c.path.startswith("/web/")] == []
    assert world.repo.issues == {} and world.repo.dispatches == []
    assert world.repo.head_sha("chimera/journal") is None


def test_the_action_cli_ticks_with_github_signed_commits_and_no_key(
    world: World, ticker: Ticker
) -> None:
    """``chimera action --mode tick`` itself (the system clock: a first tick baselines), with
    an installation token GitHub will not name: ``GET /app`` wants the App's JWT (401), and
    the tick never asks — its commits go through ``createCommitOnBranch`` all the same."""
    assert app_answer(world, ticker.token) == 401
    root = world.clone(ticker.token)
    out = world.job(
        "tick", "schedule", {"schedule": "*/15 * * * *"}, run=980, token=ticker.token, root=root
    )
    assert out["rc"] == 0 and out["status"] == "ticked" and out["ran"] == ""
    replay = ticker.replay()
    assert len(replay.trusted) == 1 and ticker.root_only_untrusted(replay)
    assert world.repo.verified_commits[replay.trusted[0]] == APP
    assert [c.status for c in world.fake.calls_to("GET", r"^/app$")] == [401]  # ours only
    assert set(replay.state.jobs) == {"nightly-total", "spec-green"}
    assert list((world.tmp / "runner-980").glob("chimera-journal-key-*")) == []
    assert world.repo.issues == {} and world.repo.dispatches == []


def test_a_commit_pushed_with_git_replays_untrusted(world: World, ticker: Ticker) -> None:
    """Any ``contents: write`` token can push to the journal, and name itself Chimera: a
    forged ``finish`` (which would free a job early) counts for nothing."""
    day = datetime(2031, 3, 3, tzinfo=UTC)
    ticker.tick(990, day + timedelta(hours=5))
    due = ticker.tick(991, day + timedelta(hours=6, minutes=5))
    assert "nightly-total" in [r.job for r in due.plan.runs]
    forged = dump_ops([FinishOp(run="991.1", at=day + timedelta(hours=7), job="nightly-total")])
    work = world.clone(world.workflow_token({"contents": "write"}))
    subprocess.run(["git", "fetch", "-q", "origin", "chimera/journal"], cwd=work, check=True)
    for key, value in (("user.name", APP), ("user.email", f"{APP}@users.noreply.github.com")):
        subprocess.run(["git", "config", key, value], cwd=work, check=True)
    push_branch(work, "chimera/journal", {"runs/forged.1.jsonl": forged}, start="FETCH_HEAD")
    replay = ticker.replay()
    tip = replay.tip or ""
    assert tip not in world.repo.verified_commits
    assert tip in [sha for sha, _ in replay.untrusted] and len(replay.trusted) == 2
    assert [op for op in replay.ops if op.op == "finish"] == []
    assert replay.state.job("nightly-total").in_flight is not None


def test_a_persons_token_writes_the_journal_through_the_api_signed_as_that_person(
    world: World, ticker: Ticker
) -> None:
    """A person's (or machine user's) token and no key: the journal still goes through the
    API, GitHub signs it as alice, and replay trusts a write-access person."""
    token = world.fake.add_token("alice")
    out = world.job(
        "tick", "schedule", {"schedule": "*/15 * * * *"}, run=981, token=token,
        root=world.clone(token),
    )  # fmt: skip
    assert out["rc"] == 0 and out["status"] == "ticked"
    replay = ticker.replay()
    assert len(replay.trusted) == 1 and ticker.root_only_untrusted(replay)
    assert world.repo.verified_commits[replay.trusted[0]] == "alice"


def test_without_an_app_token_the_ssh_key_signs_the_journal(
    world: World, ticker: Ticker, signing_key: Path
) -> None:
    """The second way (a job whose token's commits replay would not trust): with the key
    configured, git pushes the journal, SSH-signed; replay trusts it through
    ``.chimera.d/journal-signers`` on main."""
    token = world.fake.add_token("alice")
    out = world.job(
        "tick", "schedule", {"schedule": "*/15 * * * *"}, run=981, token=token,
        root=world.clone(token),
    )  # fmt: skip
    assert out["rc"] == 0 and out["status"] == "ticked"
    replay = ticker.replay()
    assert len(replay.trusted) == 1 and replay.untrusted == ()
    assert replay.trusted[0] not in world.repo.verified_commits  # git's signature, not GitHub's
    (key,) = (world.tmp / "runner-981").glob("chimera-journal-key-*/key")
    assert key.stat().st_mode & 0o777 == 0o600


def test_with_neither_a_token_nor_a_key_the_tick_refuses(
    world: World, ticker: Ticker, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    out = world.job(
        "tick", "schedule", {"schedule": "*/15 * * * *"}, run=982, token="",
        root=world.clone(world.fake.add_token("alice")),
    )  # fmt: skip
    assert out["rc"] == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "no GitHub token" in line
    assert world.repo.head_sha("chimera/journal") is None


def app_answer(world: World, token: str) -> int:
    """What GitHub answers ``GET /app`` for ``token`` (the App's JWT only gets a 200)."""
    client = GitHubClient(
        "octo/app", token, api_url=world.fake.api_url, throttle=False,
        retry=RetryPolicy(attempts=1),
    )  # fmt: skip
    try:
        client._call("GET /app", lambda: client._raw("GET", "/app"))
    except GitHubPermissionDenied as exc:
        return int(exc.status or 0)
    return 200
