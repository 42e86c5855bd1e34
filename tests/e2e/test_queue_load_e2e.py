"""The ChangeQueue under a burst (issue "the ChangeQueue under a burst").

Twenty labelled issues arrive at once: twenty decide jobs run as separate processes
against the GitHub fake (as twenty workflow runs would: the fix workflow's concurrency
group is per issue), with ``max-open-prs 3`` and ``max-prs-per-hour 6``, slow label writes,
500s and secondary rate limits injected. Then rounds: the open PRs are merged, the fake's
clock moves past the hour, two drains run at once (as where the drain workflow's concurrency
group is missing), a ``@chimera retry`` races the drain that is starting the same issue, a
``@chimera stop`` races the starts, the dispatched runs' decides run at once, and each admitted
run publishes (a real publish job; the agent and verify jobs ran once, for the first run, and
their artifact and verdict stand for every run: all issues ask the same change of the same
base). One label-started run is stopped while in flight, and its publish runs late.

Checked after every step: never more than ``max-open-prs`` running (open PRs plus admitted
runs), at most ``max-prs-per-hour`` starts per hour, exactly one outcome comment per start and
at most one admitted run per start, FIFO kept (a round starts the oldest waiting issues; an
issue is queued once, its place never moved back), nothing lost, and at rest no slot held.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from chimera.github.trust.summary import parse_marker
from chimera.testing.github_fake import FakeFault, comment_event

if TYPE_CHECKING:
    from conftest import World

pytestmark = pytest.mark.slow

MAX_OPEN, PER_HOUR, ISSUES = 3, 6, 20
IDENTITIES = ("github-actions[bot]", "chimera-app[bot]")
COMMAND_PERMS = {"issues": "write", "pull-requests": "read", "actions": "write"}
DRAIN_SCHEDULE = {"schedule": "*/15 * * * *", "repository": {"full_name": "octo/app"}}


@dataclass
class Job:
    """One ``chimera action`` job running as its own process."""

    mode: str
    run: int
    proc: subprocess.Popen[str]
    output: Path
    result: dict[str, Any] = field(default_factory=dict)


@dataclass
class Start:
    """An admitted run: decide said ``proceed``."""

    run: int
    issue: int
    hour: int
    gate: dict[str, Any]
    ended: bool = False
    published: str = ""


class Harness:
    """Runs jobs as processes, keeps the ledger of starts, and checks the invariants."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.fake = world.fake
        self.repo = world.repo
        self.next_run = 1000
        self.hour = 0
        self.starts: list[Start] = []
        self.stopped: dict[int, int] = {}  # issue -> index into starts when its stop ended
        self.template: dict[str, Any] = {}
        self.violations: list[str] = []
        self._seen: set[str] = set()

    def expect(self, holds: bool, step: str, what: str) -> None:
        """Record a broken invariant (the scenario goes on, so one run shows every one; a
        violation seen at an earlier step is not repeated)."""
        if not holds and what not in self._seen:
            self._seen.add(what)
            self.violations.append(f"{step}: {what}")

    # -- jobs ------------------------------------------------------------------------------

    def spawn(
        self,
        mode: str,
        event: str,
        payload: dict[str, Any],
        token: str,
        *,
        folders: tuple[Path, Path] | None = None,
        run: int | None = None,
        **extra: str,
    ) -> Job:
        """Start ``chimera action --mode mode`` in workflow run ``run`` (default: a new one);
        ``folders``: the checkout and the artifact folder."""
        if run is None:
            self.next_run += 1
            run = self.next_run
            self.fake.add_workflow_run("octo/app", run)
        env = self.world._env(event, payload, run, token, dict(extra))
        argv = ["action", "--mode", mode]
        if folders is not None:
            argv += ["--root", str(folders[0]), "--artifacts", str(folders[1])]
        full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CHIMERA_"))}
        proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; from chimera.cli import main; "
             "sys.exit(main(sys.argv[1:]))", *argv],
            env=full | env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        return Job(mode, run, proc, Path(env["GITHUB_OUTPUT"]))

    def wait(self, jobs: list[Job]) -> list[Job]:
        for job in jobs:
            out, _ = job.proc.communicate(timeout=180)
            job.result = _outputs(job.output) | {"rc": job.proc.returncode, "log": out}
        return jobs

    def decide(self, event: str, payload: dict[str, Any]) -> Job:
        token = self.world.workflow_token(self.world.decide_perms)
        return self.spawn("decide", event, payload, token)

    def command(self, payload: dict[str, Any]) -> Job:
        return self.spawn("command", "issue_comment", payload, self.world.workflow_token(
            COMMAND_PERMS))  # fmt: skip

    def drain(self) -> Job:
        return self.spawn("drain", "schedule", DRAIN_SCHEDULE, self.world.app_token)

    def say(self, issue: int, login: str, body: str) -> dict[str, Any]:
        gh = self.fake.pygithub(self.fake.add_token(login))
        created = gh.get_repo("octo/app").get_issue(issue).create_comment(body)
        return comment_event(self.fake, "octo/app", created.id)

    def publish(self, start: Start) -> Job:
        """The run's publish job (its agent and verify jobs are the template's)."""
        tpl = self.template
        folder = self.world.tmp / f"artifacts-{start.run}"
        shutil.copytree(tpl["folder"], folder)
        token = self.world.workflow_token(self.world.publish_perms)
        return self.spawn(
            "publish", tpl["event"], tpl["payload"](start.issue), token,
            folders=(self.world.clone(token), folder), run=start.run,
            CHIMERA_AGENT_AUDIT_HEAD=tpl["audit_head"], GITHUB_RUN_ATTEMPT="1",
            CHIMERA_AGENT_ARTIFACT=tpl["name"],
            **self.world.decided_env(start.gate), **self.world.verified_env(tpl["verify"]),
        )  # fmt: skip

    # -- the ledger ------------------------------------------------------------------------

    def record(self, jobs: list[Job], step: str) -> list[Start]:
        """The decides among ``jobs`` that admitted a run; checks no issue runs twice."""
        admitted = []
        for job in jobs:
            if job.mode != "decide" or job.result.get("proceed") != "true":
                continue
            issue = int(job.result["issue"])
            live = [s for s in self.starts if s.issue == issue and not s.ended]
            self.expect(
                not live,
                step,
                f"#{issue} admitted by run {job.run} while run "
                f"{live[0].run if live else 0} still holds it: two runs for one start",
            )
            self.expect(issue not in self.stopped, step, f"#{issue} started after its stop")
            start = Start(job.run, issue, self.hour, job.result)
            self.starts.append(start)
            admitted.append(start)
        return admitted

    def end(self, start: Start, published: str) -> None:
        start.ended, start.published = True, published
        self.repo.workflow_runs[start.run].update(status="completed", conclusion="success")

    # -- the invariants --------------------------------------------------------------------

    def outcomes(self, issue: int) -> list[dict[str, Any]]:
        found = []
        for comment in self.repo.issue_comments(issue):
            marker = parse_marker(comment["body"], "outcome")
            if marker is not None and comment["user"] in IDENTITIES:
                found.append(marker)
        return found

    def queued_markers(self, issue: int) -> list[dict[str, Any]]:
        return [
            m
            for c in self.repo.issue_comments(issue)
            if c["user"] in IDENTITIES and (m := parse_marker(c["body"], "queued")) is not None
        ]

    def check(self, step: str) -> None:
        with self.fake.lock:
            open_prs = {int(p["head"].rsplit("-", 1)[1]) for p in self.repo.open_pulls()}
            running = {s.issue for s in self.starts if not s.ended}
            labelled = [n for n, i in self.repo.issues.items() if "chimera:running" in i["labels"]]
            holding = open_prs | running
            self.expect(
                len(holding) <= MAX_OPEN,
                step,
                f"{len(holding)} slots held (open PRs {sorted(open_prs)}, running "
                f"{sorted(running)}) with max-open-prs {MAX_OPEN}",
            )
            self.expect(len(labelled) <= MAX_OPEN, step, f"chimera:running on {sorted(labelled)}")
            per_hour = Counter(s.hour for s in self.starts)
            self.expect(
                max(per_hour.values(), default=0) <= PER_HOUR,
                step,
                f"starts per hour {dict(per_hour)} with max-prs-per-hour {PER_HOUR}",
            )
            for start in self.starts:
                key = f"{start.run}:{start.issue}"
                mine = [m for m in self.outcomes(start.issue) if m.get("key") == key]
                self.expect(
                    len(mine) == 1, step, f"run {start.run} has {len(mine)} outcome comments"
                )
                if start.ended and mine:
                    self.expect(
                        mine[0]["kind"] != "running", step, f"run {start.run} never resolved"
                    )
            for number in range(1, ISSUES + 1):
                markers = self.queued_markers(number)
                self.expect(
                    len({m.get("at") for m in markers}) <= 1,
                    step,
                    f"#{number} was queued again with a new time (its place moved "
                    f"back): {[m.get('at') for m in markers]}",
                )
            for issue, at in self.stopped.items():
                late = [p for p in self.repo.pulls() if p["head"] == f"chimera/issue-{issue}"]
                self.expect(not late, step, f"#{issue} got a PR after its stop")
                self.expect(
                    all(s.issue != issue for s in self.starts[at:]),
                    step,
                    f"#{issue} started after its stop",
                )

    def queue_order(self) -> list[int]:
        """The queued issues, FIFO (their queue marker's time, then the number)."""
        with self.fake.lock:
            waiting = [n for n, i in self.repo.issues.items() if "chimera:queued" in i["labels"]]
            times = {n: (self.queued_markers(n) or [{}])[-1].get("at", "") for n in waiting}
        return sorted(waiting, key=lambda n: (times[n], n))


def _outputs(path: Path) -> dict[str, Any]:
    """A job's step outputs (``name<<DELIM`` blocks, as ``$GITHUB_OUTPUT`` holds them)."""
    lines, out, i = path.read_text().splitlines(), {}, 0
    while i < len(lines):
        key, _, delim = lines[i].partition("<<")
        end = lines.index(delim, i + 1)
        out[key] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return out


def _labeled(world: World, issue: int) -> dict[str, Any]:
    return world.labeled(issue, "alice")


def _dispatch_event(sent: dict[str, Any]) -> dict[str, Any]:
    return {
        "inputs": sent["inputs"],
        "ref": "refs/heads/main",
        "sender": {"login": "chimera-app[bot]", "type": "Bot"},
        "repository": {"full_name": "octo/app", "default_branch": "main"},
    }


def _template(h: Harness, start: Start) -> None:
    """The agent and verify jobs, once, for ``start``: their artifact and verdict."""
    world = h.world
    decided = world.decided_env(start.gate)
    event = world.labeled(start.issue, "alice")
    agent = world.agent("issues", event, run=start.run, decided=decided)
    name = str(agent["artifact"])
    checked = world.download(start.run, name, world.tmp / f"verify-{start.run}")
    verify = world.job(
        "verify", "issues", event, run=start.run, token="", root=world.clone(),
        artifacts=checked, GITHUB_RUN_ATTEMPT="1", CHIMERA_AGENT_ARTIFACT=name, **decided,
    )  # fmt: skip
    assert verify.get("verdict") == "passed", verify
    h.template = {
        "folder": world.download(start.run, name, world.tmp / "template-artifact"),
        "name": name,
        "audit_head": str(agent.get("audit-head", "")),
        "verify": verify,
        "event": "issues",
        "payload": lambda n: world.labeled(n, "alice"),
    }


def _run_out(h: Harness, admitted: list[Start], step: str, *, stop: int | None = None) -> None:
    """Each admitted run publishes; the run of #``stop`` is stopped first (``@chimera stop``
    while it is in flight, its Actions cancel landing late: publish runs anyway)."""
    stopped = [s for s in admitted if s.issue == stop]
    if stop is not None and stopped:
        (job,) = h.wait([h.command(h.say(stop, "bob", "@chimera stop"))])
        assert job.result["rc"] == 0, job.result["log"]
        h.stopped[stop] = len(h.starts)
    h.check(f"{step}: after the stop")
    jobs = {s.run: h.publish(s) for s in admitted}
    h.wait(list(jobs.values()))
    for s in admitted:
        result = jobs[s.run].result
        h.end(s, str(result.get("status", "")))
        if s.issue == stop:
            h.expect(
                result.get("status") == "cancelled",
                step,
                f"the stopped run {s.run} of #{stop} published: {result.get('status')}",
            )
        else:
            h.expect(
                result.get("status") in ("pr_opened", "pr_updated"),
                step,
                f"run {s.run} of #{s.issue} ended {result.get('status')}",
            )
    h.check(f"{step}: after publish")


def test_a_burst_of_issues_keeps_every_limit_and_loses_nothing(world: World) -> None:
    world.env |= {"CHIMERA_MAX_OPEN_PRS": str(MAX_OPEN), "CHIMERA_MAX_PRS_PER_HOUR": str(PER_HOUR)}
    world.script_calc(world.total_calc)
    for n in range(ISSUES):
        world.add_total_issue(f"task {n}", labels=("chimera",))
    h = Harness(world)
    began = time.monotonic()

    # The burst: every label event's decide at once, on a slow and flaky API.
    world.fake.inject(
        FakeFault("POST", r"/issues/\d+/labels$", status=None, delay=0.6, times=ISSUES),
        FakeFault("GET", r"/issues/\d+/events$", status=500, times=3),
        FakeFault("POST", r"/issues/\d+/comments$", status=403, secondary_rate_limit=True,
                  retry_after=0.2, times=2),
        FakeFault("GET", r"/collaborators/alice/permission$", status=429,
                  secondary_rate_limit=True, retry_after=0.1, times=2),
    )  # fmt: skip
    # Label events reach decide in any order: here the newest first.
    burst = h.wait([h.decide("issues", _labeled(world, n)) for n in range(ISSUES, 0, -1)])
    assert all(j.result["rc"] == 0 for j in burst), [
        j.result["log"] for j in burst if j.result["rc"]
    ]
    admitted = h.record(burst, "burst")
    h.check("burst")
    assert admitted, "the burst started nothing"
    assert sorted(h.queue_order() + [s.issue for s in admitted]) == list(range(1, ISSUES + 1))
    _template(h, admitted[0])
    _run_out(h, admitted, "burst", stop=admitted[-1].issue)

    rounds = 0
    while h.queue_order() and rounds < 14:
        rounds += 1
        step = f"round {rounds}"
        with world.fake.lock:
            for pull in world.repo.open_pulls():  # a person merges every open Chimera PR
                pull.update(state="closed", merged=True)
        world.fake.advance_clock(3660)
        h.hour += 1
        order = h.queue_order()
        dispatched = len(world.repo.dispatches)
        # The dispatch is slow: the drain is mid-start when the retry comes in.
        world.fake.inject(
            FakeFault("POST", r"/dispatches$", status=None, delay=1.0, times=1),
            FakeFault("GET", r"/issues$", status=500, times=1),
        )
        drains = [h.drain(), h.drain()]
        racing: list[Job] = []
        head = order[0]
        deadline = time.monotonic() + 30
        while "chimera:queued" in world.repo.issues[head]["labels"] and time.monotonic() < deadline:
            time.sleep(0.02)
        if "chimera:queued" in world.repo.issues[head]["labels"]:
            h.expect(False, step, f"no drain started #{head}, the head of the queue")
            h.wait(drains)
            break
        if rounds % 2 == 1:  # a retry of the issue the drain is starting
            racing.append(h.decide("issue_comment", h.say(head, "alice", "@chimera retry")))
        if rounds == 2 and len(order) > 2:  # a stop racing the starts
            racing.append(h.command(h.say(order[1], "bob", "@chimera stop")))
        h.wait(drains + racing)
        assert all(j.result["rc"] == 0 for j in drains), [j.result["log"] for j in drains]
        for job in racing:
            if job.mode == "command":
                h.stopped[int(job.result["issue"])] = len(h.starts)
        admitted = h.record(racing, f"{step}: retry")
        h.check(f"{step}: drains")
        sent = world.repo.dispatches[dispatched:]
        started = [int(d["inputs"]["issue-number"]) for d in sent]
        fifo = [n for n in order if n not in h.stopped]
        from_queue = sorted(set(started) - {s.issue for s in admitted} - set(h.stopped))
        h.expect(
            from_queue == sorted(fifo[: len(from_queue)]),
            step,
            f"started {started} but the queue's order was {order}",
        )
        runs = h.wait([h.decide("workflow_dispatch", _dispatch_event(d)) for d in sent])
        assert all(j.result["rc"] == 0 for j in runs), [j.result["log"] for j in runs]
        admitted += h.record(runs, f"{step}: dispatched runs")
        h.check(f"{step}: dispatched runs")
        _run_out(h, admitted, step)

    # At rest: every issue has its PR or was stopped; no slot, no claim is held.
    with world.fake.lock:
        for pull in world.repo.open_pulls():
            pull.update(state="closed", merged=True)
    world.fake.advance_clock(3660)
    h.wait([h.drain()])
    h.check("at rest")
    merged = {int(p["head"].rsplit("-", 1)[1]) for p in world.repo.pulls() if p.get("merged")}
    lost = set(range(1, ISSUES + 1)) - merged - set(h.stopped)
    h.expect(not lost, "at rest", f"lost {sorted(lost)} (queued: {h.queue_order()})")
    held = [n for n, i in world.repo.issues.items() if "chimera:running" in i["labels"]]
    h.expect(not held, "at rest", f"chimera:running on {held}")
    for number in range(1, ISSUES + 1):
        live = [m for m in h.outcomes(number) if m.get("kind") == "running"]
        h.expect(not live, "at rest", f"#{number} still holds a slot: {live}")
    print(f"{len(h.starts)} starts in {rounds} rounds, {time.monotonic() - began:.1f}s")
    assert not h.violations, "\n".join(h.violations)
