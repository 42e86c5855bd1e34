"""Kill-and-resume (issue 4, "Tests"): ``chimera run`` killed with SIGKILL at random moments,
then resumed, ends exactly where an uninterrupted run ends.

The project (``tests/data/kill_resume/``) is a small git repository whose Spec asks for
``slugify()`` in four dependent steps; a scripted model solves it in 21 turns, and its first
attempt breaks a base-green rule, so every run reverts an attempt and carries it forward.

Each trial copies the pristine project, starts ``chimera run`` as a subprocess and kills it
(SIGKILL to its whole process group, as a cancelled CI job or a dying machine does: the git
and sandbox children die with it, leaving whatever they had half written) at a seeded random
moment spread over the whole run (very early and very late included), then continues it:

* ``chimera resume ID`` when the run's ``state.json`` exists;
* otherwise ``chimera run --run-id ID`` again. That is the same thing: ``state.json`` is first
  written (atomically) before the first card starts, and until then a run has only appended
  audit lines and evaluated the Spec, without touching the working tree; a new start from the
  same tree with the same id redoes exactly that, and its audit log extends the same chain.

A few extra trials kill the first resume as well and resume again. CI runs 24 trials in all;
``CHIMERA_KILL_TRIALS=N`` runs N (a quicker local check); the test is marked ``slow``.

Processes: a fresh interpreter spends most of a scripted run importing (LiteLLM alone takes
seconds), which would put the suite far over its time budget and the kill moments mostly in
import code that writes nothing. So the trials' processes are forked from a warm interpreter
(``tests/data/kill_resume/warm_chimera.py``): each is a separate process running the console
script's entry point on the same arguments, killed the same way. The reference is run both
ways (the two must agree exactly) and one trial uses a fresh interpreter throughout.

Every trial must end in the reference's final state: the same files (every byte outside
``.git/`` and ``.chimera/``), the same spec results, the same cards (ids, statuses,
attempts), one copy of each change, a verifying audit chain up to the head recorded in the
state, and — when a card was in flight at the kill — a ``resumed`` event with ``retry: true``
for it (its model calls are sent again); accepted cards are never started again.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import pytest
import yaml

from chimera.governance.audit import verify_audit_log

DATA = Path(__file__).resolve().parent.parent / "data" / "kill_resume"
SCRIPT = DATA / "script.yaml"
RUN_ID = "kill-resume"
SEED = 20261130
TRIALS_ENV = "CHIMERA_KILL_TRIALS"
"""How many trials in all (default 24, what CI runs); fewer make a quicker local check."""
DEFAULT_TRIALS = 24


@dataclass(frozen=True)
class TrialCounts:
    """The trials of one test run, from :data:`TRIALS_ENV`.

    ``cold``: a fresh interpreter (the console script as users run it); ``warm``: warm
    processes, kill moments spread over the whole run; ``double``: the first resume is killed
    too. 24 is 1 + 20 + 3.
    """

    cold: int
    warm: int
    double: int

    @property
    def total(self) -> int:
        return self.cold + self.warm + self.double

    @classmethod
    def from_env(cls) -> TrialCounts:
        raw = os.environ.get(TRIALS_ENV, str(DEFAULT_TRIALS)).strip()
        if not raw.isdigit() or int(raw) < 1:
            pytest.fail(f"{TRIALS_ENV} must be a whole number of at least 1, got {raw!r}")
        total = int(raw)
        double = min(3, (total - 1) // 7)
        return cls(cold=1, warm=total - 1 - double, double=double)


WORKERS = 2
PROCESS_TIMEOUT = 240.0

# `python -m chimera` has no __main__; this is the console script's entry point, verbatim.
CHIMERA = [sys.executable, "-c", "import sys; from chimera.cli import main; sys.exit(main())"]

# Each change of the script, which must appear exactly once in the final tree.
ONE_COPY = {
    "textkit/slug.py": ["def slugify(", "import re\n", "words = re.findall("],
    "textkit/__init__.py": ["from textkit.slug import slugify\n", '"slugify"'],
    "CHANGELOG.md": ["- Added slugify().\n"],
}


def _write_project(root: Path) -> None:
    data = yaml.safe_load((DATA / "project.yaml").read_text(encoding="utf-8"))
    for rel, content in data["files"].items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    git = ["git", "-c", "user.name=Kill Resume", "-c", "user.email=kr@example.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "textkit 0.1.0"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)


def _tree(root: Path) -> dict[str, bytes]:
    """Every file outside .git/ and .chimera/ (symlinks as their target text)."""
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir == Path():
            dirnames[:] = [d for d in dirnames if d not in (".git", ".chimera")]
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            rel = (rel_dir / name).as_posix()
            files[rel] = str(path.readlink()).encode() if path.is_symlink() else path.read_bytes()
        for name in dirnames:
            if not any((Path(dirpath) / name).iterdir()):
                files[(rel_dir / name).as_posix() + "/"] = b"<empty dir>"
    return files


def _args(root: Path, verb: str) -> list[str]:
    common = ["--root", str(root), "--model", f"scripted:{SCRIPT}", "--quiet", "--json"]
    if verb == "resume":
        return ["resume", RUN_ID, *common]
    return ["run", *common, "--run-id", RUN_ID, "--started-by", "tester"]


@dataclass
class Proc:
    """One ``chimera`` process: how long it lived, and how it ended."""

    seconds: float
    returncode: int | None  # None: killed by us
    stdout: str
    stderr: str
    killed_after: float | None = None  # seconds from launch to the SIGKILL


@dataclass(frozen=True)
class KillPlan:
    """When to kill: ``delay`` seconds after the process's ``after_lines``-th new audit line
    (after its launch when 0). Anchoring the moment to the run's progress keeps the kills
    spread over the whole run even when the machine's load makes runs faster or slower than
    the reference they were drawn from."""

    after_lines: int
    delay: float
    planned: float  # the moment on the reference's timeline (seconds from its launch)


def _plan(timeline: Sequence[float], at: float) -> KillPlan:
    """The plan that kills at ``at`` seconds on a reference ``timeline`` (the moments, from
    launch, at which the reference wrote each audit line)."""
    lines = bisect.bisect_right(timeline, at)
    return KillPlan(lines, at - (timeline[lines - 1] if lines else 0.0), at)


class _LineCounter:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.lines = 0

    def count(self) -> int:
        with contextlib.suppress(FileNotFoundError), self.path.open("rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read()
            self.offset += len(chunk)
            self.lines += chunk.count(b"\n")
        return self.lines


def _watch(pid: int, start: float, audit: Path, plan: KillPlan | None) -> float | None:
    """Wait for process ``pid`` to end, SIGKILLing its group per ``plan``; returns the kill's
    moment (seconds from ``start``), or None when it ended by itself. Ends are seen through
    a pidfd (no pid reuse)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:  # already over
        return None
    counter = _LineCounter(audit)
    base = counter.count()
    trigger = None if plan is None or plan.after_lines else start + plan.delay
    killed: float | None = None
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    try:
        while True:
            now = time.monotonic()
            if now - start >= PROCESS_TIMEOUT:
                os.killpg(pid, signal.SIGKILL)
                raise AssertionError(f"a chimera process ran over {PROCESS_TIMEOUT}s")
            if killed is not None or plan is None:
                wait = start + PROCESS_TIMEOUT - now
            elif trigger is None:
                if counter.count() - base >= plan.after_lines:
                    trigger = now + plan.delay
                wait = 0.004
            else:
                wait = trigger - now
            if poller.poll(max(0.0, wait) * 1000):
                return killed  # the process ended
            if killed is None and trigger is not None and time.monotonic() >= trigger:
                with contextlib.suppress(ProcessLookupError):  # it ended in between
                    os.killpg(pid, signal.SIGKILL)
                    killed = time.monotonic() - start
    finally:
        os.close(pidfd)


class Launcher(Protocol):
    def __call__(self, args: list[str], cwd: Path, plan: KillPlan | None) -> Proc: ...


def _cold(args: list[str], cwd: Path, plan: KillPlan | None) -> Proc:
    """``chimera ARGS`` in a fresh interpreter, its own process group (a kill takes its git
    and sandbox children along)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            [*CHIMERA, *args], cwd=cwd, stdout=out, stderr=err, start_new_session=True
        )
        killed = _watch(proc.pid, start, _run_dir(cwd) / "audit.jsonl", plan)
        code = proc.wait()
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if killed is not None and code == -signal.SIGKILL:
        return Proc(seconds, None, stdout, stderr, killed)
    return Proc(seconds, code, stdout, stderr)


class WarmChimera:
    """``chimera ARGS`` in a process forked from a warm interpreter (see ``warm_chimera.py``):
    its own session; its exit status comes from the file it writes as its last act (a killed
    child writes none)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._lock = threading.Lock()
        self._count = itertools.count(1)
        self.server = subprocess.Popen(
            [sys.executable, str(DATA / "warm_chimera.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.server.stdout is not None
        ready = self.server.stdout.readline()
        assert json.loads(ready or "{}").get("ready"), "the warm chimera server did not start"

    def close(self) -> None:
        self.server.communicate(timeout=30)  # closes its stdin (it exits) and stdout

    def __call__(self, args: list[str], cwd: Path, plan: KillPlan | None) -> Proc:
        n = next(self._count)
        files = {k: self.workdir / f"{n}.{k}" for k in ("out", "err", "rc")}
        request = {"argv": args, "cwd": str(cwd), **{k: str(v) for k, v in files.items()}}
        assert self.server.stdin is not None and self.server.stdout is not None
        with self._lock:
            start = time.monotonic()
            self.server.stdin.write(json.dumps(request) + "\n")
            self.server.stdin.flush()
            pid = int(json.loads(self.server.stdout.readline())["pid"])
        killed = _watch(pid, start, _run_dir(cwd) / "audit.jsonl", plan)
        seconds = time.monotonic() - start
        rc = files["rc"]
        code = int(rc.read_text()) if rc.is_file() else None
        assert code is not None or killed is not None, f"chimera {args[0]}: no exit status"
        out, err = files["out"].read_text(), files["err"].read_text()
        return Proc(seconds, code, out, err, None if code is not None else killed)


def _run_dir(root: Path) -> Path:
    return root / ".chimera" / "runs" / RUN_ID


def _state(root: Path) -> dict[str, Any] | None:
    path = _run_dir(root) / "state.json"
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _events(root: Path) -> list[dict[str, Any]]:
    path = _run_dir(root) / "audit.jsonl"
    if not path.is_file():
        return []
    # Complete lines only: a kill may leave a torn fragment (the next writer cuts it off).
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    return [json.loads(line) for line in lines if line]


@dataclass
class KillPoint:
    """What was on disk right after a kill."""

    planned: float  # the moment on the reference's timeline
    at: float  # when it happened (or the process's end, when it ended first)
    phase: str
    in_flight: str | None
    accepted: list[str]
    audit_lines: int
    last_event: str


def _observe(root: Path, plan: KillPlan, proc: Proc) -> KillPoint:
    state = _state(root)
    events = _events(root)
    last = events[-1]["event"] if events else "-"
    if proc.returncode is not None:
        phase = "ended"
    elif state is None:
        phase = "no state yet"
    elif state["in_flight"] is not None:
        phase = f"in flight: {state['in_flight']['card_id']}"
    else:
        done = sum(c["status"] == "accepted" for c in state["cards"])
        phase = f"between cards ({done} accepted)"
    accepted = (
        [] if state is None else [c["id"] for c in state["cards"] if c["status"] == "accepted"]
    )
    in_flight = (
        None if state is None or state["in_flight"] is None else state["in_flight"]["card_id"]
    )
    at = proc.killed_after if proc.killed_after is not None else proc.seconds
    return KillPoint(plan.planned, at, phase, in_flight, accepted, len(events), last)


def _continue(launch: Launcher, root: Path, plan: KillPlan | None) -> Proc:
    verb = "resume" if _state(root) is not None else "run"
    return launch(_args(root, verb), root, plan)


@dataclass
class Reference:
    files: dict[str, bytes]
    state: dict[str, Any]
    timeline: list[float]  # a warm process's audit lines, seconds from its launch
    cold_timeline: list[float]  # the same for a fresh interpreter
    seconds: float  # a warm process's run
    cold_seconds: float  # a fresh interpreter's run


@dataclass
class Trial:
    number: int
    kill: KillPlan
    cold: bool = False
    second_kill: KillPlan | None = None
    kills: list[KillPoint] = field(default_factory=list)
    seconds: float = 0.0
    cleared: list[str] = field(default_factory=list)  # what resumes cleared from the store
    problems: list[str] = field(default_factory=list)


def _cards(state: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(c["id"], c["status"], c["attempts"]) for c in state["cards"]]


def _check_final(root: Path, ref: Reference, final: Proc, trial: Trial) -> None:
    problems = trial.problems
    if final.returncode != 0:
        problems.append(f"final process exited {final.returncode}: {final.stderr.strip()[-300:]}")
        return
    state = _state(root)
    assert state is not None
    if json.loads(final.stdout) != state:
        problems.append("--json output differs from state.json")
    for key in ("status", "stop_reason", "final_results", "goal_ids", "iterations"):
        if state[key] != ref.state[key]:
            problems.append(f"{key}: {state[key]!r} != reference {ref.state[key]!r}")
    if _cards(state) != _cards(ref.state):
        problems.append(f"cards {_cards(state)} != reference {_cards(ref.state)}")
    files = _tree(root)
    if files != ref.files:
        diff = sorted(p for p in set(files) | set(ref.files) if files.get(p) != ref.files.get(p))
        problems.append(f"working tree differs from the reference in {diff}")
    for rel, changes in ONE_COPY.items():
        text = files.get(rel, b"").decode()
        for change in changes:
            if text.count(change) != 1:
                problems.append(f"{rel}: {change!r} appears {text.count(change)} times")
    check = verify_audit_log(_run_dir(root) / "audit.jsonl", head=state["audit_head"])
    if not check.ok:
        problems.append(f"audit chain: {check.problems[:3]}")
    events = _events(root)
    trial.cleared = [
        name for e in events if e["event"] == "stale_files_cleared" for name in e["fields"]["files"]
    ]
    for kill in trial.kills:
        after = events[kill.audit_lines :]
        if kill.in_flight is not None:
            retried = [
                e
                for e in after
                if e["event"] == "resumed"
                and e["fields"].get("card") == kill.in_flight
                and e["fields"].get("retry") is True
            ]
            if not retried:
                problems.append(f"no 'resumed' retry event for {kill.in_flight}")
        redone = {
            e["fields"]["card"]
            for e in after
            if e["event"] == "card_started" and e["fields"]["card"] in kill.accepted
        }
        if redone:
            problems.append(f"accepted card(s) started again: {sorted(redone)}")


def _trial(pristine: Path, base: Path, ref: Reference, warm: Launcher, trial: Trial) -> Trial:
    root = base / f"trial-{trial.number:02d}"
    shutil.copytree(pristine, root, symlinks=True)
    launch: Launcher = _cold if trial.cold else warm
    start = time.monotonic()
    first = launch(_args(root, "run"), root, trial.kill)
    trial.kills.append(_observe(root, trial.kill, first))
    if trial.second_kill is not None:
        again = _continue(launch, root, trial.second_kill)
        trial.kills.append(_observe(root, trial.second_kill, again))
    final = _continue(launch, root, None)
    trial.seconds = time.monotonic() - start
    _check_final(root, ref, final, trial)
    return trial


def _table(ref: Reference, trials: Sequence[Trial], wall: float) -> str:
    lines = [
        f"kill-and-resume: an uninterrupted run takes {ref.seconds:.1f}s in a warm process "
        f"({ref.cold_seconds:.1f}s from a fresh interpreter); {len(trials)} trials "
        f"({WORKERS} in parallel) in {wall:.1f}s",
        f"{'#':>3} {'process':<7} {'planned':>7} {'killed':>7}  {'phase at the kill':<31} "
        f"{'last audit event':<17} {'trial':>6} {'stale':>5}  outcome",
    ]
    for t in trials:
        kind = "cold" if t.cold else "warm"
        for i, k in enumerate(t.kills):
            first = i == 0
            outcome = (
                ("ok" if not t.problems else "FAIL: " + "; ".join(t.problems)) if first else ""
            )
            lines.append(
                f"{t.number if first else '':>3} {kind if first else '':<7} "
                f"{k.planned:>6.2f}s {k.at:>6.2f}s  {k.phase:<31} {k.last_event:<17} "
                f"{f'{t.seconds:.1f}s' if first else '':>6} {len(t.cleared) if first else '':>5}  "
                f"{outcome}"
            )
    phases = Counter(k.phase.split(":")[0].split(" (")[0] for t in trials for k in t.kills)
    lines.append("kills by phase: " + ", ".join(f"{p}: {n}" for p, n in sorted(phases.items())))
    lines.append(
        "planned: the moment on the reference's timeline; killed: when it happened (or when "
        "the process ended first); stale: files a killed process left in the snapshot store "
        f"(git locks...), cleared on resume — {sum(bool(t.cleared) for t in trials)} trial(s)"
    )
    for t in trials:
        if t.cleared:
            lines.append(f"  trial {t.number} cleared: {', '.join(t.cleared)}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kill-resume") / "pristine"
    root.mkdir()
    _write_project(root)
    return root


def _timeline(root: Path, launched: float) -> list[float]:
    """When each audit line was written, in seconds after ``launched`` (a ``time.time()``)."""
    return [datetime.fromisoformat(e["ts"]).timestamp() - launched for e in _events(root)]


def _reference(pristine: Path, tmp_path: Path, warm: Launcher) -> Reference:
    """An uninterrupted run from a fresh interpreter and one from the warm server, side by
    side (the same two-way load as the trials); they must agree exactly."""
    roots = [tmp_path / "reference-cold", tmp_path / "reference-warm"]
    for root in roots:
        shutil.copytree(pristine, root, symlinks=True)
    launched = [0.0, 0.0]

    def run(i: int, launch: Launcher) -> Proc:
        launched[i] = time.time()
        return launch(_args(roots[i], "run"), roots[i], None)

    with ThreadPoolExecutor(WORKERS) as pool:
        cold_f = pool.submit(run, 0, _cold)
        warm_f = pool.submit(run, 1, warm)
        cold, hot = cold_f.result(), warm_f.result()
    assert cold.returncode == 0, cold.stderr
    assert hot.returncode == 0, hot.stderr
    state = _state(roots[0])
    assert state is not None
    assert json.loads(cold.stdout) == state
    assert state["status"] == "done" and state["stop_reason"] == "goal_met"
    assert set(state["final_results"].values()) == {"passed"}
    assert _cards(state) == [
        ("slugify-defined", "accepted", 2),
        ("slugify-works", "accepted", 1),
        ("slugify-exported", "accepted", 1),
        ("slugify-changelog", "accepted", 1),
    ]
    events = [e["event"] for e in _events(roots[0])]
    assert events.count("revert") == 1  # the first card's first attempt
    assert events.count("history_injected") == 1
    assert verify_audit_log(_run_dir(roots[0]) / "audit.jsonl", head=state["audit_head"]).ok
    files = _tree(roots[0])
    for rel, changes in ONE_COPY.items():
        for change in changes:
            assert files[rel].decode().count(change) == 1, (rel, change)
    twin = _state(roots[1])
    assert twin is not None and _tree(roots[1]) == files
    assert _cards(twin) == _cards(state) and twin["final_results"] == state["final_results"]
    assert [e["event"] for e in _events(roots[1])] == events
    return Reference(
        files,
        state,
        timeline=_timeline(roots[1], launched[1]),
        cold_timeline=_timeline(roots[0], launched[0]),
        seconds=hot.seconds,
        cold_seconds=cold.seconds,
    )


def test_trial_counts_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRIALS_ENV, raising=False)
    assert TrialCounts.from_env() == TrialCounts(cold=1, warm=20, double=3)
    monkeypatch.setenv(TRIALS_ENV, "4")
    assert TrialCounts.from_env() == TrialCounts(cold=1, warm=3, double=0)
    monkeypatch.setenv(TRIALS_ENV, "1")
    assert TrialCounts.from_env().total == 1
    for bad in ("0", "many", "-3"):
        monkeypatch.setenv(TRIALS_ENV, bad)
        with pytest.raises(pytest.fail.Exception, match=TRIALS_ENV):
            TrialCounts.from_env()


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_reaches_the_reference_state(
    pristine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    counts = TrialCounts.from_env()
    began = time.monotonic()
    (tmp_path / "io").mkdir()
    warm = WarmChimera(tmp_path / "io")
    try:
        ref = _reference(pristine, tmp_path, warm)
        # Kill moments: one per equal slice of an uninterrupted run (stratified, seeded), so
        # they cover it from the first instant to its end, each anchored to the audit line
        # before it (see KillPlan). The cold trial (a fresh interpreter, on its own, longer
        # timeline) goes first: it is the longest.
        rng = random.Random(SEED)
        trials = [
            Trial(
                j + 1,
                _plan(ref.cold_timeline, ref.cold_seconds * (j + rng.random()) / counts.cold),
                cold=True,
            )
            for j in range(counts.cold)
        ]
        for i in range(counts.warm):
            at = ref.seconds * (i + rng.random()) / counts.warm
            trials.append(Trial(len(trials) + 1, _plan(ref.timeline, at)))
        for _ in range(counts.double):
            # The resume is killed too, a few of its own audit lines in.
            again = KillPlan(rng.randrange(0, 40), rng.uniform(0.0, 0.1), planned=0.0)
            at = ref.seconds * rng.uniform(0.1, 0.9)
            trials.append(Trial(len(trials) + 1, _plan(ref.timeline, at), second_kill=again))
        base = tmp_path / "trials"
        base.mkdir()
        started = time.monotonic()
        with ThreadPoolExecutor(WORKERS) as pool:
            done = list(pool.map(lambda t: _trial(pristine, base, ref, warm, t), trials))
        wall = time.monotonic() - started
    finally:
        warm.close()
    table = _table(ref, done, wall)
    with capsys.disabled():
        sys.stdout.write(f"\n{table}\nwhole test: {time.monotonic() - began:.1f}s\n")
    assert not [t for t in done if t.problems], table
    kills = [k for t in done for k in t.kills]
    # The moments must have hit cards mid-way (the interesting case) and more than that:
    # 10 and 3 phases at CI's 24 trials, scaled down for a quicker local run.
    assert sum(k.in_flight is not None for k in kills) >= 10 * counts.total // 24, table
    phases = {k.phase.split(" (")[0].split(":")[0] for k in kills}
    assert len(phases) >= min(3, 1 + counts.total // 8), table
